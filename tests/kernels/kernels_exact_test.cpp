// Each bundled kernel at a size small enough to derive its trace by hand: record counts per
// work-item and the exact kind, instruction id, address, size and loop counters of records.
//
// Virtual layout (LaunchOptions::alignment = 256): buffers in argument order, each at the next
// multiple of 256 bytes after the previous one ends. File order: work-groups x-fastest, then
// the work-items of a group by local id, x-fastest (for 1-D launches: the global id).
#include <cmath>
#include <fstream>

#include "kernel_test_util.h"

using namespace cltrace;
using namespace cltrace::kernels_test;

namespace {

constexpr AccessKind kLoad = AccessKind::Load;
constexpr AccessKind kStore = AccessKind::Store;

TEST(KernelsExact, VaddThreeRecordsPerActiveItem) {
  // n = 60 of a global size 64: items 60..63 fail the bounds check and make no access.
  // a at 0, b at 256, c at 512 (64 floats = 256 bytes each).
  auto spec = smallSpec("vadd", range1d(64, 16),
                        {"buffer:float:64:iota", "buffer:float:64:fill:0.5", "buffer:float:64",
                         "scalar:int:60"});
  Traced t = traceAll(spec, "vadd");
  ASSERT_EQ(t.items.size(), 64u);
  EXPECT_EQ(t.header.recordCount, 180u);
  for (uint64_t i = 0; i < 64; ++i) {
    std::string where = "work-item " + std::to_string(i);
    if (i >= 60) {
      EXPECT_TRUE(t.items[i].empty()) << where;
      continue;
    }
    expectRecords(t.items[i], {{kLoad, 0, 4 * i, 4}, {kLoad, 1, 256 + 4 * i, 4},
                               {kStore, 2, 512 + 4 * i, 4}}, where);
  }
  auto c = contents<float>(t.out.buffers[2]);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(c[i], i < 60 ? float(i) + 0.5f : 0.0f) << i;
}

TEST(KernelsExact, MvWalksItsRow) {
  // 6 x 4 matrix, global size 8: rows 6 and 7 make no access. A (32 floats, iota) at 0,
  // x (4 floats of 1) at 256, y at 512. Row r: per column j a load of A[4r + j] and of x[j],
  // both with loop counter j, then the store of y[r]: 9 records.
  auto spec = smallSpec("mv", range1d(8, 4),
                        {"buffer:float:32:iota", "buffer:float:4:fill:1", "buffer:float:8",
                         "scalar:int:6", "scalar:int:4"});
  Traced t = traceAll(spec, "mv");
  ASSERT_EQ(t.items.size(), 8u);
  EXPECT_EQ(t.header.recordCount, 54u);
  expectRecords(t.items[2],
                {{kLoad, 0, 32, 4, {0}}, {kLoad, 1, 256, 4, {0}},
                 {kLoad, 0, 36, 4, {1}}, {kLoad, 1, 260, 4, {1}},
                 {kLoad, 0, 40, 4, {2}}, {kLoad, 1, 264, 4, {2}},
                 {kLoad, 0, 44, 4, {3}}, {kLoad, 1, 268, 4, {3}},
                 {kStore, 2, 520, 4}},
                "row 2");
  for (uint32_t r = 0; r < 8; ++r) {
    std::string where = "row " + std::to_string(r);
    if (r >= 6) {
      EXPECT_TRUE(t.items[r].empty()) << where;
      continue;
    }
    std::vector<Want> want;
    for (uint32_t j = 0; j < 4; ++j) {
      want.push_back({kLoad, 0, 4u * (4 * r + j), 4, {j}});
      want.push_back({kLoad, 1, 256u + 4 * j, 4, {j}});
    }
    want.push_back({kStore, 2, 512u + 4 * r, 4});
    expectRecords(t.items[r], want, where);
  }
  // y[r] = sum_j (4r + j) = 16r + 6.
  auto y = contents<float>(t.out.buffers[2]);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(y[r], r < 6 ? float(16 * r + 6) : 0.0f) << r;
}

TEST(KernelsExact, BranchyLanesDiverge) {
  // One warp of 32 lanes; in = table = iota, threshold 26.5 (lanes 27..31 also store to hot).
  // in at 0, table at 256, out at 512, hot at 768 (32 x 4 bytes each).
  auto spec = smallSpec("branchy", range1d(32, 32),
                        {"buffer:float:32:iota", "buffer:float:32:iota", "buffer:float:32",
                         "buffer:int:32", "scalar:int:32", "scalar:float:26.5"});
  Traced t = traceAll(spec, "branchy");
  ASSERT_EQ(t.items.size(), 32u);
  // Even lanes 2 records, odd lanes 4, one more for lanes above the threshold.
  std::vector<size_t> counts;
  for (const auto& item : t.items) counts.push_back(item.size());
  std::vector<size_t> wantCounts = {2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4,
                                    2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 5, 3, 5, 3, 5};
  EXPECT_EQ(counts, wantCounts);
  EXPECT_EQ(t.header.recordCount, 101u);
  // The two ways' stores to out[i] are one store where they meet (as NVPTX makes it): ids are
  // in[i] 0, the gathers 1 and 2, out[i] 3, hot[i] 4.
  expectRecords(t.items[4], {{kLoad, 0, 16, 4}, {kStore, 3, 528, 4}}, "lane 4");
  // Lane 5 gathers table[35 % 32 = 3] and table[65 % 32 = 1].
  expectRecords(t.items[5], {{kLoad, 0, 20, 4}, {kLoad, 1, 268, 4}, {kLoad, 2, 260, 4},
                             {kStore, 3, 532, 4}}, "lane 5");
  expectRecords(t.items[28], {{kLoad, 0, 112, 4}, {kStore, 3, 624, 4}, {kStore, 4, 880, 4}},
                "lane 28");
  // Lane 31: table[217 % 32 = 25], table[403 % 32 = 19].
  expectRecords(t.items[31], {{kLoad, 0, 124, 4}, {kLoad, 1, 356, 4}, {kLoad, 2, 332, 4},
                              {kStore, 3, 636, 4}, {kStore, 4, 892, 4}}, "lane 31");
  for (uint64_t i = 0; i < 32; ++i) {
    std::vector<Want> want = {{kLoad, 0, 4 * i, 4}};
    if (i % 2 == 1) {
      want.push_back({kLoad, 1, 256 + 4 * ((7 * i) % 32), 4});
      want.push_back({kLoad, 2, 256 + 4 * ((13 * i) % 32), 4});
    }
    want.push_back({kStore, 3, 512 + 4 * i, 4});
    if (i > 26) want.push_back({kStore, 4, 768 + 4 * i, 4});
    expectRecords(t.items[i], want, "lane " + std::to_string(i));
  }
  auto out = contents<float>(t.out.buffers[2]);
  auto hot = contents<int32_t>(t.out.buffers[3]);
  for (int i = 0; i < 32; ++i) {
    float want = i % 2 == 0 ? float(i) : float(i + (7 * i) % 32 + (13 * i) % 32);
    EXPECT_EQ(out[i], want) << i;
    EXPECT_EQ(hot[i], i > 26 ? 1 : 0) << i;
  }
}

TEST(KernelsExact, MmTiledBarriersInTheTileLoop) {
  // N = 32, TILE = 16 (manifest build option): 4 work-groups of 16 x 16, 2 tile steps. A, B, C
  // (1024 floats = 4096 bytes each) at 0, 4096, 8192. Per step t: load A[row][16t + lx], load
  // B[16t + ly][col], two local-fence barriers (flags 1, no address), all with counter t;
  // then the store of C[row][col]: 9 records.
  auto spec = smallSpec("mm_tiled", range2d(32, 32, 16, 16),
                        {"buffer:float:1024:iota", "buffer:float:1024:random:5", "buffer:float:1024",
                         "scalar:int:32"});
  ASSERT_EQ(spec.buildOptions, std::vector<std::string>{"-DTILE=16"});
  Traced t = traceAll(spec, "mm_tiled");
  ASSERT_EQ(t.items.size(), 1024u);
  EXPECT_EQ(t.header.recordCount, 1024u * 9);
  // Work-item (col 17, row 2) is local (1, 2) of group (1, 0): file index 256 + 2 * 16 + 1.
  expectRecords(t.items[289],
                {{kLoad, 0, 4 * (2 * 32 + 1), 4, {0}}, {kLoad, 1, 4096 + 4 * (2 * 32 + 17), 4, {0}},
                 {AccessKind::Barrier, 2, 0, 0, {0}, kFenceLocal},
                 {AccessKind::Barrier, 3, 0, 0, {0}, kFenceLocal},
                 {kLoad, 0, 4 * (2 * 32 + 17), 4, {1}}, {kLoad, 1, 4096 + 4 * (18 * 32 + 17), 4, {1}},
                 {AccessKind::Barrier, 2, 0, 0, {1}, kFenceLocal},
                 {AccessKind::Barrier, 3, 0, 0, {1}, kFenceLocal},
                 {kStore, 4, 8192 + 4 * (2 * 32 + 17), 4}},
                "col 17, row 2");
  for (uint64_t p = 0; p < 1024; ++p) {
    WorkItemPosition pos = t.header.range.positionOf(p);
    uint64_t lx = pos.local[0], ly = pos.local[1];
    uint64_t col = pos.group[0] * 16 + lx, row = pos.group[1] * 16 + ly;
    std::vector<Want> want;
    for (uint32_t step = 0; step < 2; ++step) {
      want.push_back({kLoad, 0, 4 * (row * 32 + 16 * step + lx), 4, {step}});
      want.push_back({kLoad, 1, 4096 + 4 * ((16 * step + ly) * 32 + col), 4, {step}});
      want.push_back({AccessKind::Barrier, 2, 0, 0, {step}, kFenceLocal});
      want.push_back({AccessKind::Barrier, 3, 0, 0, {step}, kFenceLocal});
    }
    want.push_back({kStore, 4, 8192 + 4 * (row * 32 + col), 4});
    expectRecords(t.items[p], want, "file index " + std::to_string(p));
  }
  // The product is right (float sums: compare with a tolerance).
  auto a = contents<float>(t.out.buffers[0]), b = contents<float>(t.out.buffers[1]);
  auto c = contents<float>(t.out.buffers[2]);
  for (int row = 0; row < 32; ++row)
    for (int col = 0; col < 32; ++col) {
      double want = 0;
      for (int k = 0; k < 32; ++k) want += double(a[row * 32 + k]) * b[k * 32 + col];
      EXPECT_NEAR(c[row * 32 + col], want, 1e-5 * std::fabs(want) + 1e-4) << row << "," << col;
    }
}

TEST(KernelsExact, HistogramAtomics) {
  // 64 values 0..63 into 8 bins: data at 0, bins (8 uints) at 256. Each item loads data[i]
  // and increments bins[i % 8] with a 4-byte atomic.
  auto spec = smallSpec("histogram", range1d(64, 32),
                        {"buffer:uint:64:iota", "buffer:uint:8", "scalar:uint:8"});
  Traced t = traceAll(spec, "histogram");
  ASSERT_EQ(t.items.size(), 64u);
  EXPECT_EQ(t.header.recordCount, 128u);
  for (uint64_t i = 0; i < 64; ++i)
    expectRecords(t.items[i], {{kLoad, 0, 4 * i, 4}, {AccessKind::Atomic, 1, 256 + 4 * (i % 8), 4}},
                  "work-item " + std::to_string(i));
  EXPECT_EQ(contents<uint32_t>(t.out.buffers[1]), std::vector<uint32_t>(8, 8));
}

TEST(KernelsExact, Vec4SixteenByteAccessesAndVload4PerElement) {
  // 8 float4s: in (iota, 128 bytes) at 0, bias (36 floats, iota) at 256, out at 512. With
  // shift 1 the vload4 of item i reads bias[1 + 4i ..], one float at a time (a float pointer
  // is only 4-byte aligned): 4 bytes at 256 + 4 + 16i + 4k, instructions 1 to 4.
  auto spec = smallSpec("vec4", range1d(8, 8),
                        {"buffer:float4:8:iota", "buffer:float:36:iota", "buffer:float4:8",
                         "scalar:float:2", "scalar:int:1"});
  Traced t = traceAll(spec, "vec4");
  ASSERT_EQ(t.items.size(), 8u);
  EXPECT_EQ(t.header.recordCount, 48u);
  for (uint64_t i = 0; i < 8; ++i)
    expectRecords(t.items[i], {{kLoad, 0, 16 * i, 16}, {kLoad, 1, 260 + 16 * i, 4}, {kLoad, 2, 264 + 16 * i, 4},
                               {kLoad, 3, 268 + 16 * i, 4}, {kLoad, 4, 272 + 16 * i, 4},
                               {kStore, 5, 512 + 16 * i, 16}},
                  "work-item " + std::to_string(i));
  // Element e of out = 2 * e + bias[1 + e] = 3e + 1.
  auto out = contents<float>(t.out.buffers[2]);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(out[e], float(3 * e + 1)) << e;
}

// Expected records of one spmv_csr row with nonzeros [start, end) for the buffer layout of
// the tests below: row_ptr at 0, col_idx at 256, vals at 512, x at 768, y at 1024.
std::vector<Want> spmvRow(uint64_t r, uint32_t start, uint32_t end,
                          const std::vector<uint32_t>& colIdx, uint32_t cols) {
  std::vector<Want> want = {{kLoad, 0, 4 * r, 4}, {kLoad, 1, 4 * (r + 1), 4}};
  for (uint32_t j = start; j < end; ++j) {
    want.push_back({kLoad, 2, 256u + 4 * j, 4, {j - start}});
    want.push_back({kLoad, 3, 512u + 4 * j, 4, {j - start}});
    want.push_back({kLoad, 4, 768u + 4 * (colIdx[j] % cols), 4, {j - start}});
  }
  want.push_back({kStore, 5, 1024 + 4 * r, 4});
  return want;
}

TEST(KernelsExact, SpmvRowLengthsFromIotaRowPointers) {
  // 8 rows, spread 5, row_ptr = 0..8: start(k) = 5k + k^2 % 5. k^2 % 5 for k = 0..8 is
  // 0 1 4 4 1 0 1 4 4, so the starts are 0 6 14 19 21 25 31 39 44 and the row lengths
  // 6 8 5 2 4 6 8 5; a row makes 3 + 3 * length records. col_idx = 0..43, 8 columns.
  auto spec = smallSpec("spmv_csr", range1d(8, 8),
                        {"buffer:uint:9:iota", "buffer:uint:44:iota", "buffer:float:44:iota",
                         "buffer:float:8:iota", "buffer:float:8", "scalar:uint:8", "scalar:uint:8",
                         "scalar:uint:44", "scalar:uint:5"});
  Traced t = traceAll(spec, "spmv");
  ASSERT_EQ(t.items.size(), 8u);
  const std::vector<uint32_t> starts = {0, 6, 14, 19, 21, 25, 31, 39, 44};
  std::vector<size_t> counts;
  for (const auto& item : t.items) counts.push_back(item.size());
  EXPECT_EQ(counts, (std::vector<size_t>{21, 27, 18, 9, 15, 21, 27, 18}));
  EXPECT_EQ(t.header.recordCount, 156u);
  std::vector<uint32_t> colIdx(44);
  for (uint32_t j = 0; j < 44; ++j) colIdx[j] = j;
  // Row 3: nonzeros 19 and 20, columns 3 and 4.
  expectRecords(t.items[3],
                {{kLoad, 0, 12, 4}, {kLoad, 1, 16, 4},
                 {kLoad, 2, 256 + 76, 4, {0}}, {kLoad, 3, 512 + 76, 4, {0}}, {kLoad, 4, 768 + 12, 4, {0}},
                 {kLoad, 2, 256 + 80, 4, {1}}, {kLoad, 3, 512 + 80, 4, {1}}, {kLoad, 4, 768 + 16, 4, {1}},
                 {kStore, 5, 1024 + 12, 4}},
                "row 3");
  for (uint64_t r = 0; r < 8; ++r)
    expectRecords(t.items[r], spmvRow(r, starts[r], starts[r + 1], colIdx, 8), "row " + std::to_string(r));
  // y[r] = sum over the row's nonzeros j of vals[j] * x[j % 8] = j * (j % 8).
  auto y = contents<float>(t.out.buffers[4]);
  for (int r = 0; r < 8; ++r) {
    float want = 0;
    for (uint32_t j = starts[r]; j < starts[r + 1]; ++j) want += float(j * (j % 8));
    EXPECT_EQ(y[r], want) << r;
  }
}

template <typename T>
std::string writeTemp(const std::string& name, const std::vector<T>& values) {
  auto dir = std::filesystem::temp_directory_path() / "cltrace-kernels-tests";
  std::filesystem::create_directories(dir);
  std::string path = (dir / (name + "-" + std::to_string(::getpid()) + ".bin")).string();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(T)));
  return path;
}

TEST(KernelsExact, SpmvPlainCsrWithSpreadOne) {
  // A hand-made 4 x 4 CSR matrix (spread 1 reads row_ptr as it is), with an empty row:
  //   row 0: (0, 1) (2, 2)   row 1: -   row 2: (1, 3) (2, 4) (3, 5)   row 3: (3, 6)
  // x = 0 1 2 3, so y = 4 0 26 18. Row lengths 2 0 3 1 -> 9 3 12 6 records.
  const std::vector<uint32_t> rowPtr = {0, 2, 2, 5, 6}, colIdx = {0, 2, 1, 2, 3, 3};
  const std::vector<float> vals = {1, 2, 3, 4, 5, 6};
  std::string rp = writeTemp("rowptr", rowPtr), ci = writeTemp("colidx", colIdx),
              va = writeTemp("vals", vals);
  auto spec = smallSpec("spmv_csr", range1d(4, 4),
                        {"buffer:uint:5:file:" + rp, "buffer:uint:6:file:" + ci,
                         "buffer:float:6:file:" + va, "buffer:float:4:iota", "buffer:float:4",
                         "scalar:uint:4", "scalar:uint:4", "scalar:uint:6", "scalar:uint:1"});
  Traced t = traceAll(spec, "spmv-plain");
  for (const auto& p : {rp, ci, va}) std::filesystem::remove(p);
  ASSERT_EQ(t.items.size(), 4u);
  EXPECT_EQ(t.header.recordCount, 30u);
  expectRecords(t.items[1], {{kLoad, 0, 4, 4}, {kLoad, 1, 8, 4}, {kStore, 5, 1028, 4}}, "row 1");
  for (uint64_t r = 0; r < 4; ++r)
    expectRecords(t.items[r], spmvRow(r, rowPtr[r], rowPtr[r + 1], colIdx, 4), "row " + std::to_string(r));
  EXPECT_EQ(contents<float>(t.out.buffers[4]), (std::vector<float>{4, 0, 26, 18}));
}

TEST(KernelsExact, SpmvAnyDataStaysInsideTheBuffers) {
  // Random row pointers (0..99, not monotonic) and column indices (0..99) with nnz 44 and
  // 8 columns: rows are clamped to [0, 44), columns taken modulo 8, spread 0 counts as 1.
  for (uint32_t spread : {0u, 3u}) {
    auto spec = smallSpec("spmv_csr", range1d(8, 8),
                          {"buffer:uint:9:random:3", "buffer:uint:44:random:4", "buffer:float:44:random:5",
                           "buffer:float:8:random:6", "buffer:float:8", "scalar:uint:8", "scalar:uint:8",
                           "scalar:uint:44", "scalar:uint:" + std::to_string(spread)});
    Traced t = traceAll(spec, "spmv-random");  // checks that no access fell outside a buffer
    auto rowPtr = contents<uint32_t>(t.out.buffers[0]);
    auto colIdx = contents<uint32_t>(t.out.buffers[1]);
    uint32_t s = spread == 0 ? 1 : spread;
    auto start = [&](uint32_t k) { return std::min<uint32_t>(rowPtr[k] * s + (rowPtr[k] * rowPtr[k]) % s, 44); };
    ASSERT_EQ(t.items.size(), 8u);
    for (uint64_t r = 0; r < 8; ++r)
      expectRecords(t.items[r], spmvRow(r, start(r), std::max(start(r), start(r + 1)), colIdx, 8),
                    "spread " + std::to_string(spread) + ", row " + std::to_string(r));
  }
}

}  // namespace
