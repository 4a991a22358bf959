#include "cltrace/output_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace cltrace {

OutputFile::OutputFile(const std::string& path) : filePath_(path) {
  struct stat old {}, link {};
  existed_ = stat(path.c_str(), &old) == 0;
  special_ = existed_ && !S_ISREG(old.st_mode);
  pipeOrSocket_ = existed_ && (S_ISFIFO(old.st_mode) || S_ISSOCK(old.st_mode));
  if (lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    if (!existed_) throw std::runtime_error("is a link to nothing");
    if (!special_) {
      std::unique_ptr<char, decltype(&std::free)> target(realpath(path.c_str(), nullptr), &std::free);
      if (!target) throw std::runtime_error(std::string("cannot follow the link: ") + std::strerror(errno));
      filePath_ = target.get();
    }
  }
  if (existed_ && !special_) std::remove(filePath_.c_str());
  removable_ = !special_;
}

void OutputFile::discard() {
  if (!removable_) return;
  std::remove(filePath_.c_str());
  removable_ = false;
}

}  // namespace cltrace
