#include "scratch_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "commands.h"

namespace cltrace::cli {

namespace {

// The folder being kept, for the handlers below (which may only make system calls).
char gFolder[4096] = {};

// Removes the files in gFolder and gFolder itself with system calls alone (safe in a signal
// handler and while another thread is stuck in the driver); the folder holds only files.
void removeFolder() {
  if (gFolder[0] == '\0') return;
  const int fd = ::open(gFolder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buffer[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t inode;
          int64_t offset;
          unsigned short length;
          unsigned char type;
          char name[1];
        };
        const auto* e = reinterpret_cast<const Entry*>(buffer + at);
        if (std::strcmp(e->name, ".") != 0 && std::strcmp(e->name, "..") != 0) ::unlinkat(fd, e->name, 0);
        at += e->length;
      }
    }
    ::close(fd);
  }
  ::rmdir(gFolder);
  gFolder[0] = '\0';
}

void onSignal(int signal) {
  removeFolder();
  ::signal(signal, SIG_DFL);  // then end as the signal would have
  ::raise(signal);
}

}  // namespace

void removeScratchDirectoryNow() { removeFolder(); }

ScratchDirectory::ScratchDirectory(const std::string& prefix) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  if (pattern.size() >= sizeof gFolder) throw UserError("the temporary folder's path is too long: " + pattern);
  if (!::mkdtemp(pattern.data()))
    throw UserError("cannot make a temporary folder " + pattern + ": " + std::strerror(errno) +
                    " (TMPDIR names where it goes)");
  path_ = pattern;
  std::strcpy(gFolder, path_.c_str());
  static const bool registered = [] {
    std::at_quick_exit(removeFolder);
    return true;
  }();
  (void)registered;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, onSignal);
}

ScratchDirectory::~ScratchDirectory() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
  removeFolder();
}

}  // namespace cltrace::cli
