// Reading a kernel source file for the subcommands, with a clear error when it is missing.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "commands.h"

namespace cltrace::cli {

inline std::string readKernelSource(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open kernel source '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cltrace::cli
