// An output file that a failed write removes, but only a file the writer made: a device
// (/dev/null), a pipe or anything else that is not a regular file is written as it is and never
// removed. A link is followed to what it names, so the link stays a link. The trace writer and
// the scheduled-file writers share it.
#pragma once

#include <string>

namespace cltrace {

class OutputFile {
 public:
  // Looks at `path` and unlinks an old regular file there (rather than truncating it: on ext4,
  // truncating a file and writing it again makes close() wait for the data to reach the disk,
  // about 1 s for 1.6 GB). Opening the file is the writer's. Throws std::runtime_error saying
  // what is wrong, without the path: "is a link to nothing", "cannot follow the link: ...".
  explicit OutputFile(const std::string& path);
  // Removes the file unless keep() was called.
  ~OutputFile() { discard(); }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Where the data goes: `path`, or the regular file a link at `path` names.
  const std::string& filePath() const { return filePath_; }
  bool existed() const { return existed_; }
  // Not a regular file (a device, pipe, socket): written as it is, never removed.
  bool special() const { return special_; }
  bool pipeOrSocket() const { return pipeOrSocket_; }

  // The write succeeded: the file stays.
  void keep() { removable_ = false; }
  // The write failed: removes the file now if it is ours (once).
  void discard();

 private:
  std::string filePath_;
  bool existed_ = false;
  bool special_ = false;
  bool pipeOrSocket_ = false;
  bool removable_ = false;
};

}  // namespace cltrace
