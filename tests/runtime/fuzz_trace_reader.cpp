// libFuzzer target: whatever the bytes, TraceReader reads them or throws TraceFileError; any
// other exception, crash, leak or sanitizer report is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cltrace/trace_file.h"

namespace {

// TraceReader takes a path, so each input goes through one scratch file per process.
struct ScratchFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("cltrace_fuzz_" + std::to_string(getpid()) + ".trace"))
                         .string();
  ~ScratchFile() { std::remove(path.c_str()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ScratchFile scratch;
  std::FILE* file = std::fopen(scratch.path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0) {
    std::perror(scratch.path.c_str());
    std::abort();  // not the reader's fault, but fuzzing without a file is pointless
  }
  try {
    cltrace::TraceReader reader(scratch.path);
    std::vector<cltrace::Record> records;
    while (reader.nextWorkItem(records)) {
    }
  } catch (const cltrace::TraceFileError&) {
  }
  return 0;
}
