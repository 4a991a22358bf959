// Opening an input file so that a failure can say why.
#pragma once

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace cltrace {

// Opens `path` for reading (binary) into `in`. When it fails, returns errno's reason as ": No
// such file or directory" for the caller's message ("" where the library set none); else "".
inline std::string openForReading(std::ifstream& in, const std::string& path) {
  errno = 0;
  in.open(path, std::ios::binary);
  return !in && errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
}

}  // namespace cltrace
