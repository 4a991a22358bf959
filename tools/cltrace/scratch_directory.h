// A private folder for a command's intermediate files (predict's trace): made with mkdtemp
// (mode 0700, a fresh name), so that nothing planted in a shared /tmp is written through, and
// removed with what it holds when the command ends: normally, on SIGINT/SIGTERM/SIGHUP, and on
// std::quick_exit (a hung run given up by the watchdog) and, through removeScratchDirectoryNow,
// when the driver crashes.
#pragma once

#include <string>

namespace cltrace::cli {

class ScratchDirectory {
 public:
  // Makes $TMPDIR/PREFIX-XXXXXX (or /tmp). Throws UserError when it cannot. One at a time.
  explicit ScratchDirectory(const std::string& prefix);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes the ScratchDirectory now, if one is kept, with system calls alone (for a handler of
// a fatal signal).
void removeScratchDirectoryNow();

}  // namespace cltrace::cli
