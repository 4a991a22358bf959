// Writes a few valid trace files into the directory given as the only argument: the seed
// corpus for fuzz_trace_reader.
#include <cstdio>
#include <filesystem>
#include <string>

#include "trace_samples.h"

using namespace cltrace;
using namespace cltrace::test;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  try {
    writeSample((dir / "sample_plain.trace").string(), false);
    writeSample((dir / "sample_zstd.trace").string(), true);
    writeUnitsSample((dir / "units_plain.trace").string(), false);
    writeUnitsSample((dir / "units_zstd.trace").string(), true);
    TraceHeader tiny;  // one work-item without records, no buffers
    tiny.kernelName = "k";
    tiny.workItemCount = 1;
    writeTrace((dir / "tiny.trace").string(), tiny, WorkItems(1));
    TraceHeader cube = sampleHeader(true);  // 3-D range, counted at close
    cube.range.dims = 3;
    cube.range.global = {2, 2, 2};
    cube.range.local = {1, 2, 2};
    cube.range.offset = {0, 0, 0};
    cube.recordCount = kUnknownRecordCount;
    WorkItems items = sampleWorkItems();
    writeTrace((dir / "cube_zstd.trace").string(), cube, items);
  } catch (const TraceFileError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
