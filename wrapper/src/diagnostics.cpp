#include "cltrace/wrapper/diagnostics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cltrace::wrapper {

namespace {

struct StandardErrorCopy {
  int fd = -1;
  dev_t device = 0;
  ino_t inode = 0;
  StandardErrorCopy() {
    struct stat st {};
    if (::fstat(STDERR_FILENO, &st) != 0) return;  // closed: cltrace stays silent
    fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    device = st.st_dev;
    inode = st.st_ino;
  }
  bool isTheFile(int descriptor) const {
    struct stat st {};
    return descriptor >= 0 && ::fstat(descriptor, &st) == 0 && st.st_dev == device && st.st_ino == inode;
  }
};

const StandardErrorCopy& copy() {
  static const StandardErrorCopy c;  // taken once, thread-safe
  return c;
}

}  // namespace

void keepStandardError() { (void)copy(); }

void writeToStandardError(const std::string& text) {
  const StandardErrorCopy& c = copy();
  const int fd = c.isTheFile(c.fd) ? c.fd : c.isTheFile(STDERR_FILENO) ? STDERR_FILENO : -1;
  if (fd < 0) return;
  const std::string line = text + "\n";
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace cltrace::wrapper
