// Every bundled kernel launched exactly as its manifest says (what `cltrace run kernels/X.cl`
// does with no flags): the trace has the expected record count, no access falls outside a
// buffer, and the buffers end identical to an uninstrumented run of the same launch.
#include <algorithm>
#include <functional>
#include <numeric>

#include "kernel_test_util.h"

using namespace cltrace;
using namespace cltrace::kernels_test;

namespace {

using Buffers = std::vector<std::vector<uint8_t>>;  // final contents of the buffer arguments

struct DefaultCase {
  std::string name;
  uint64_t workItems;
  // Records the launch must produce; gets the traced run's final buffers.
  std::function<uint64_t(const Buffers&)> records;
  // Further checks of the final buffers, where the kernel's result is easy to state.
  std::function<void(const Buffers&)> check = nullptr;
};

std::ostream& operator<<(std::ostream& os, const DefaultCase& c) { return os << c.name; }

std::function<uint64_t(const Buffers&)> fixed(uint64_t n) {
  return [n](const Buffers&) { return n; };
}

std::vector<DefaultCase> cases() {
  return {
      {"vadd", 262144, fixed(3 * 262144)},
      {"mv", 1024, fixed(1024 * (2 * 1024 + 1))},
      // 2 records per even lane, 4 per odd lane, 1 more where hot[i] was set.
      {"branchy", 262144,
       [](const Buffers& buffers) {
         auto hot = contents<int32_t>(buffers[3]);
         return 3 * 262144 + uint64_t(std::count(hot.begin(), hot.end(), 1));
       }},
      {"mm_tiled", 128 * 128, fixed(128 * 128 * (4 * 128 / 16 + 1))},
      {"histogram", 65536, fixed(2 * 65536),
       [](const Buffers& buffers) {
         auto bins = contents<uint32_t>(buffers[1]);
         ASSERT_EQ(bins.size(), 64u);
         EXPECT_EQ(std::accumulate(bins.begin(), bins.end(), uint64_t{0}), 65536u);
       }},
      {"vec4", 131072, fixed(6 * 131072)},
      // spread 16 over iota row pointers: nnz = start(16384) = 16 * 16384 + 0.
      {"spmv_csr", 16384, fixed(3 * 16384 + 3 * 262144)},
  };
}

class KernelsDefault : public testing::TestWithParam<DefaultCase> {};

TEST_P(KernelsDefault, ManifestLaunchTracesAndKeepsOutputs) {
  const DefaultCase& c = GetParam();
  wrapper::RunSpec spec = manifestSpec(c.name);
  EXPECT_EQ(spec.kernel, c.name);
  wrapper::RunOutput traced;
  {
    TempTrace file(c.name + "-default");
    traced = wrapper::runStandalone(spec, file.path);
  }
  const TraceHeader& h = traced.launch.header;
  EXPECT_EQ(h.kernelName, c.name);
  EXPECT_EQ(h.workItemCount, c.workItems);
  EXPECT_GT(h.recordCount, 0u);
  EXPECT_EQ(h.recordCount, c.records(traced.buffers));
  EXPECT_EQ(traced.launch.outsideAccesses, 0u);
  EXPECT_TRUE(traced.launch.warnings.empty()) << traced.launch.warnings.front();
  // Default sizes stay moderate: below ~20 M records (about 1 GB of trace).
  EXPECT_LT(h.recordCount, 20'000'000u);
  if (c.check) c.check(traced.buffers);

  wrapper::RunOutput plain = wrapper::runStandalone(spec, "");
  ASSERT_EQ(traced.buffers.size(), plain.buffers.size());
  for (size_t i = 0; i < plain.buffers.size(); ++i)
    EXPECT_TRUE(traced.buffers[i] == plain.buffers[i]) << c.name << ": buffer " << i << " differs";
}

INSTANTIATE_TEST_SUITE_P(Bundled, KernelsDefault, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<DefaultCase>& info) { return info.param.name; });

}  // namespace
