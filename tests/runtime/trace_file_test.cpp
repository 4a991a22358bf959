#include "cltrace/trace_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "trace_samples.h"

namespace cltrace::test {
namespace {

// Header field offsets from docs/trace-format.md.
constexpr size_t kVersionAt = 8;
constexpr size_t kFlagsAt = 12;
constexpr size_t kRecordVersionAt = 16;
constexpr size_t kRecordSizeAt = 20;
constexpr size_t kWorkItemCountAt = 24;
constexpr size_t kRecordCountAt = 32;
constexpr size_t kSourceHashAt = 40;
constexpr size_t kAlignmentAt = 48;
constexpr size_t kDimsAt = 56;
constexpr size_t kGlobalAt = 64;
constexpr size_t kLocalAt = 88;
constexpr size_t kOffsetAt = 112;
constexpr size_t kKernelNameAt = 136;
// Within the body of an uncompressed file: records follow their work-item's u64 count.
constexpr size_t kKindInRecord = 16;
constexpr size_t kFlagsInRecord = 17;
constexpr size_t kDepthInRecord = 18;
// Flag bit 1: an uncompressed body is followed by its 8-byte XXH64.
constexpr uint32_t kFlagBodyChecksum = 2;
constexpr size_t kBodyChecksumSize = 8;

const uint64_t kSampleHeaderSize = headerSizeOf(sampleHeader(false));
const size_t kBufferCountAt = kKernelNameAt + 4 + 4 + 4 + 11;  // after "vadd", "test-device"
// Buffer 1 ("out"): after the count and buffer 0 ("a": 4 + 4 + 1 + 8 + 8 bytes), its argument
// index, name and size.
const size_t kBuffer1BaseAt = kBufferCountAt + 4 + 25 + 4 + 4 + 3 + 8;
constexpr size_t kNameCut = kKernelNameAt + 4 + 2;             // inside the kernel name

uint64_t getLE(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}

void patchLE(std::string& bytes, size_t at, uint64_t value, int n) {
  for (int i = 0; i < n; ++i) bytes[at + i] = static_cast<char>(value >> (8 * i));
}

void fixChecksum(std::string& bytes) {
  size_t at = kSampleHeaderSize - 8;
  patchLE(bytes, at, fnv1a64(bytes.data(), at), 8);
}

// The parts of an uncompressed file image as the writer makes it: header, body, checksum.
std::string headerOf(const std::string& image, uint64_t headerSize = kSampleHeaderSize) {
  return image.substr(0, headerSize);
}
std::string bodyOf(const std::string& image, uint64_t headerSize = kSampleHeaderSize) {
  return image.substr(headerSize, image.size() - headerSize - kBodyChecksumSize);
}

// A compressed sample file image: `header` with the compressed flag, then `body` as one frame
// (with the content checksum the writer puts in, unless `checksum` is false).
std::string compressedImage(std::string header, const std::string& body, bool checksum = true) {
  patchLE(header, kFlagsAt, 1, 4);
  fixChecksum(header);
  std::string packed(ZSTD_compressBound(body.size()), '\0');
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  size_t size = ZSTD_compress2(ctx, packed.data(), packed.size(), body.data(), body.size());
  ZSTD_freeCCtx(ctx);
  EXPECT_FALSE(ZSTD_isError(size));
  return header + packed.substr(0, size);
}

// Turns an uncompressed sample file image into a compressed one with the same body bytes.
std::string compressBody(const std::string& image) { return compressedImage(headerOf(image), bodyOf(image)); }

// An uncompressed image in the layout from before the body checksum: flag bit 1 clear, no
// checksum after the body.
std::string withoutBodyChecksum(const std::string& image, uint64_t headerSize) {
  std::string header = headerOf(image, headerSize);
  patchLE(header, kFlagsAt, 0, 4);
  patchLE(header, headerSize - 8, fnv1a64(header.data(), headerSize - 8), 8);
  return header + bodyOf(image, headerSize);
}

WorkItems readAll(TraceReader& reader) {
  WorkItems items;
  std::vector<Record> records;
  while (reader.nextWorkItem(records)) {
    EXPECT_EQ(reader.workItemIndex(), items.size());
    items.push_back(records);
  }
  return items;
}

// Opens and reads the whole file; the TraceFileError message, or "" when there was none.
std::string readError(const std::string& path) {
  try {
    TraceReader reader(path);
    readAll(reader);
  } catch (const TraceFileError& e) {
    return e.what();
  }
  return {};
}

void expectReadError(const std::string& path, std::initializer_list<const char*> words) {
  std::string message = readError(path);
  ASSERT_FALSE(message.empty()) << "no TraceFileError for " << path;
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  for (const char* word : words) EXPECT_NE(message.find(word), std::string::npos) << message;
}

template <typename F>
void expectWriteError(F&& action, std::initializer_list<const char*> words) {
  try {
    action();
    ADD_FAILURE() << "no TraceFileError";
  } catch (const TraceFileError& e) {
    std::string message = e.what();
    for (const char* word : words) EXPECT_NE(message.find(word), std::string::npos) << message;
  }
}

void expectSameHeader(const TraceHeader& a, const TraceHeader& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.compressed, b.compressed);
  EXPECT_EQ(a.kernelName, b.kernelName);
  EXPECT_EQ(a.sourceHash, b.sourceHash);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.range.dims, b.range.dims);
  EXPECT_EQ(a.range.global, b.range.global);
  EXPECT_EQ(a.range.local, b.range.local);
  EXPECT_EQ(a.range.offset, b.range.offset);
  EXPECT_EQ(a.range.localMemoryBytes, b.range.localMemoryBytes);
  EXPECT_EQ(a.alignment, b.alignment);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].argIndex, b.buffers[i].argIndex);
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
    EXPECT_EQ(a.buffers[i].size, b.buffers[i].size);
    EXPECT_EQ(a.buffers[i].virtualBase, b.buffers[i].virtualBase);
  }
  EXPECT_EQ(a.workItemCount, b.workItemCount);
  EXPECT_EQ(a.recordCount, b.recordCount);
}

using TraceFileTest = TempDirTest;

// Tests run for both body encodings; the parameter is `compressed`.
class BothEncodings : public TempDirTest, public ::testing::WithParamInterface<bool> {};
INSTANTIATE_TEST_SUITE_P(Trace, BothEncodings, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "zstd" : "plain"; });

// ---------------------------------------------------------------- round trips

TEST_P(BothEncodings, RoundTripsHeaderAndRecords) {
  writeSample(file("t.trace"), GetParam());
  TraceReader reader(file("t.trace"));
  expectSameHeader(reader.header(), sampleHeader(GetParam()));
  EXPECT_EQ(reader.path(), file("t.trace"));
  EXPECT_EQ(readAll(reader), sampleWorkItems());
  std::vector<Record> records{makeRecord(AccessKind::Load, 0, 0, 4)};
  EXPECT_FALSE(reader.nextWorkItem(records));  // stays at the end
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(reader.workItemIndex(), 7u);
}

// The sample header with another NDRange (no offset).
TraceHeader sampleHeaderFor(bool compressed, uint32_t dims, std::array<uint64_t, 3> global,
                            std::array<uint64_t, 3> local) {
  TraceHeader h = sampleHeader(compressed);
  h.range.dims = dims;
  h.range.global = global;
  h.range.local = local;
  h.range.offset = {0, 0, 0};
  h.workItemCount = h.range.workItems();
  return h;
}

TEST_P(BothEncodings, StreamsWorkItemsLargerThanOneReadChunk) {
  TraceHeader h = sampleHeaderFor(GetParam(), 3, {4, 3, 2}, {2, 1, 2});
  WorkItems items(24);
  uint64_t total = 0;
  for (uint32_t i = 0; i < 24; ++i) {
    uint32_t count = i == 9 ? 40000 : i % 4;  // 40000 spans three read chunks
    for (uint32_t j = 0; j < count; ++j)
      items[i].push_back(makeRecord(AccessKind::Load, j % 7, 0x1000 + 4 * j, 4, 0, {i, j}));
    total += count;
  }
  h.recordCount = total;
  writeTrace(file("big.trace"), h, items);
  TraceReader reader(file("big.trace"));
  EXPECT_EQ(reader.header().recordCount, 40035u);
  EXPECT_EQ(readAll(reader), items);
}

TEST_P(BothEncodings, ReadsBodiesLargerThanTheReadersReleaseStep) {
  // 2 x 200000 records of 48 bytes: the plain reader gives back its mapping in 16 MiB steps,
  // so this body (19.2 MB) is read across one such step, inside work-item 3.
  TraceHeader h = sampleHeaderFor(GetParam(), 1, {6, 1, 1}, {2, 1, 1});
  WorkItems items(6);
  uint64_t total = 0;
  for (uint32_t i = 0; i < 6; ++i) {
    uint32_t count = (i == 1 || i == 3) ? 200000 : i;
    for (uint32_t j = 0; j < count; ++j)
      items[i].push_back(makeRecord(AccessKind::Store, j % 5, 0x2000 + 8 * j, 8, 0, {i, j}));
    total += count;
  }
  h.recordCount = total;
  writeTrace(file("large.trace"), h, items);
  {
    TraceReader reader(file("large.trace"));
    EXPECT_EQ(readAll(reader), items);
  }
  // appendNextWorkItem gathers work-items into one vector.
  TraceReader reader(file("large.trace"));
  std::vector<Record> all{makeRecord(AccessKind::Load, 9, 0, 4)};
  while (reader.appendNextWorkItem(all)) {
  }
  std::vector<Record> expected{makeRecord(AccessKind::Load, 9, 0, 4)};
  for (const auto& item : items) expected.insert(expected.end(), item.begin(), item.end());
  EXPECT_EQ(all.size(), total + 1);
  EXPECT_TRUE(all == expected);
}

TEST_P(BothEncodings, WritingTheSameContentTwiceGivesIdenticalBytes) {
  writeSample(file("a.trace"), GetParam());
  writeSample(file("b.trace"), GetParam());
  EXPECT_EQ(readBytes(file("a.trace")), readBytes(file("b.trace")));
}

TEST_P(BothEncodings, OverwritingReplacesTheFileAndKeepsSymlinks) {
  // A longer file first (uncompressed): nothing of it may survive under the shorter one.
  TraceHeader big = sampleHeader(GetParam());
  WorkItems items(big.workItemCount, std::vector<Record>(100, makeRecord(AccessKind::Load, 0, 64, 4)));
  big.recordCount = big.workItemCount * 100;
  writeTrace(file("over.trace"), big, items);
  writeSample(file("over.trace"), GetParam());
  writeSample(file("fresh.trace"), GetParam());
  EXPECT_EQ(readBytes(file("over.trace")), readBytes(file("fresh.trace")));
  // Through a symlink the target is rewritten and the link stays a link.
  std::filesystem::create_symlink(file("over.trace"), file("link.trace"));
  writeTrace(file("link.trace"), big, items);
  EXPECT_TRUE(std::filesystem::is_symlink(file("link.trace")));
  EXPECT_EQ(readBytes(file("over.trace")), readBytes(file("link.trace")));
  EXPECT_EQ(TraceReader(file("over.trace")).header().recordCount, big.recordCount);
}

TEST_P(BothEncodings, UnknownRecordCountIsPatchedOnClose) {
  TraceHeader h = sampleHeader(GetParam());
  h.recordCount = kUnknownRecordCount;
  writeTrace(file("patched.trace"), h, sampleWorkItems());
  writeSample(file("known.trace"), GetParam());
  EXPECT_EQ(readBytes(file("patched.trace")), readBytes(file("known.trace")));
}

TEST_F(TraceFileTest, HeaderFollowsTheDocumentedLayout) {
  writeSample(file("t.trace"), false);
  std::string b = readBytes(file("t.trace"));
  ASSERT_EQ(b.size(), kSampleHeaderSize + 8 * 8 + 7 * 48 + 8);
  EXPECT_EQ(b.substr(0, 8), std::string("CLTRACE\0", 8));
  EXPECT_EQ(getLE(b, kVersionAt, 4), 1u);
  EXPECT_EQ(getLE(b, kFlagsAt, 4), kFlagBodyChecksum);
  EXPECT_EQ(getLE(b, kRecordVersionAt, 4), kRecordFormatVersion);
  EXPECT_EQ(getLE(b, kRecordSizeAt, 4), 48u);
  EXPECT_EQ(getLE(b, kWorkItemCountAt, 8), 8u);
  EXPECT_EQ(getLE(b, kRecordCountAt, 8), 7u);
  EXPECT_EQ(getLE(b, kSourceHashAt, 8), 0x0123456789abcdefull);
  EXPECT_EQ(getLE(b, kAlignmentAt, 8), 4096u);
  EXPECT_EQ(getLE(b, kDimsAt, 4), 2u);
  EXPECT_EQ(getLE(b, kDimsAt + 4, 4), 320u);  // __local memory per workgroup
  EXPECT_EQ(getLE(b, kGlobalAt + 8, 8), 2u);
  EXPECT_EQ(getLE(b, kLocalAt, 8), 2u);
  EXPECT_EQ(getLE(b, kOffsetAt, 8), 1u);
  EXPECT_EQ(getLE(b, kKernelNameAt, 4), 4u);
  EXPECT_EQ(b.substr(kKernelNameAt + 4, 4), "vadd");
  EXPECT_EQ(getLE(b, kBufferCountAt, 4), 2u);
  EXPECT_EQ(getLE(b, kSampleHeaderSize - 8, 8), fnv1a64(b.data(), kSampleHeaderSize - 8));
  EXPECT_EQ(getLE(b, kSampleHeaderSize, 8), 2u);  // records of work-item 0
  EXPECT_EQ(getLE(b, kSampleHeaderSize + 8, 8), 0x1000u);
  EXPECT_EQ(getLE(b, kSampleHeaderSize + 8 + 2 * 48, 8), 0u);  // work-item 1 is empty
  // The body checksum: XXH64 (seed 0) of the 400 body bytes.
  EXPECT_EQ(getLE(b, b.size() - 8, 8), XXH64(b.data() + kSampleHeaderSize, 8 * 8 + 7 * 48, 0));
}

TEST_F(TraceFileTest, CompressedFileIsHeaderPlusOneZstdFrame) {
  writeSample(file("plain.trace"), false);
  writeSample(file("zstd.trace"), true);
  std::string plain = readBytes(file("plain.trace"));
  std::string zstd = readBytes(file("zstd.trace"));
  EXPECT_EQ(getLE(zstd, kFlagsAt, 4), 1u);
  std::string frame = zstd.substr(kSampleHeaderSize);
  std::string body(plain.size() - kSampleHeaderSize, '\0');
  size_t size = ZSTD_decompress(body.data(), body.size(), frame.data(), frame.size());
  ASSERT_FALSE(ZSTD_isError(size)) << ZSTD_getErrorName(size);
  EXPECT_EQ(body.substr(0, size), bodyOf(plain));  // zstd's checksum only: no body checksum
}

TEST_F(TraceFileTest, CompressedBodyWithoutItsFrameChecksumIsRefused) {
  // Every compressed body cltrace writes has zstd's content checksum; without it a corrupt body
  // could read as records.
  writeSample(file("plain.trace"), false);
  const std::string plain = readBytes(file("plain.trace"));
  writeBytes(file("bad.trace"), compressedImage(headerOf(plain), bodyOf(plain), false));
  expectReadError(file("bad.trace"), {"the compressed body's zstd frame has no content checksum"});
  writeBytes(file("good.trace"), compressedImage(headerOf(plain), bodyOf(plain), true));
  TraceReader reader(file("good.trace"));
  EXPECT_EQ(readAll(reader), sampleWorkItems());
}

TEST(NDRangeTest, PositionOfFollowsFileOrder) {
  NDRange r;
  r.dims = 3;
  r.global = {4, 3, 2};
  r.local = {2, 1, 2};  // groups 2x3x1, 4 work-items per group
  auto expectAt = [&](uint64_t index, std::array<uint64_t, 3> group,
                      std::array<uint64_t, 3> local) {
    WorkItemPosition p = r.positionOf(index);
    EXPECT_EQ(p.group, group) << index;
    EXPECT_EQ(p.local, local) << index;
  };
  expectAt(0, {0, 0, 0}, {0, 0, 0});
  expectAt(5, {1, 0, 0}, {1, 0, 0});
  expectAt(13, {1, 1, 0}, {1, 0, 0});
  expectAt(23, {1, 2, 0}, {1, 0, 1});
}

TEST(Fnv1aTest, MatchesReferenceValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("bar", 3, fnv1a64("foo", 3)), fnv1a64("foobar", 6));
}

// ---------------------------------------------------------------- writer errors

TEST_F(TraceFileTest, WriterRejectsInvalidHeadersBeforeCreatingTheFile) {
  struct Case {
    void (*patch)(TraceHeader&);
    std::initializer_list<const char*> words;
  };
  const Case cases[] = {
      {[](TraceHeader& h) { h.range.dims = 0; }, {"dims 0 not in 1..3"}},
      {[](TraceHeader& h) { h.range.local[1] = 0; }, {"local size 0 in dimension 1"}},
      {[](TraceHeader& h) { h.range.local[0] = 3; },
       {"local size 3 does not divide global size 4 in dimension 0"}},
      {[](TraceHeader& h) { h.range.offset[2] = 1; }, {"unused dimension 2"}},
      {[](TraceHeader& h) { h.workItemCount = 9; }, {"work-item count 9 disagrees", "8"}},
      {[](TraceHeader& h) { h.alignment = 24; }, {"alignment 24"}},
      {[](TraceHeader& h) { h.kernelName.assign(5000, 'k'); }, {"kernel name length 5000"}},
      {[](TraceHeader& h) { h.buffers[1].virtualBase = ~uint64_t{0}; }, {"buffer 1 (out)"}},
      {[](TraceHeader& h) { h.range.offset[1] = ~uint64_t{0}; },
       {"global offset 18446744073709551615 plus global size 2 overflows 64 bits in dimension 1"}},
  };
  for (const Case& c : cases) {
    TraceHeader h = sampleHeader(false);
    c.patch(h);
    expectWriteError([&] { TraceWriter w(file("bad.trace"), h); }, c.words);
    EXPECT_FALSE(std::filesystem::exists(file("bad.trace")));
  }
}

TEST_F(TraceFileTest, WriterChecksWorkItemAndRecordCounts) {
  auto items = sampleWorkItems();
  expectWriteError(
      [&] {
        TraceWriter w(file("t.trace"), sampleHeader(false));
        for (const auto& records : items) w.writeWorkItem(records);
        w.writeWorkItem(nullptr, 0);
      },
      {"t.trace: ", "more work-items than the header's 8"});
  expectWriteError(
      [&] {
        TraceWriter w(file("t.trace"), sampleHeader(false));
        w.writeWorkItem(items[0]);
        w.close();
      },
      {"closed after 1 of the header's 8 work-items"});
  TraceHeader h = sampleHeader(false);
  h.recordCount = 8;
  expectWriteError([&] { writeTrace(file("t.trace"), h, items); },
                   {"closed after 7 of the header's 8 records"});
  h.recordCount = 6;
  expectWriteError([&] { writeTrace(file("t.trace"), h, items); },
                   {"more records than the header's 6"});
  EXPECT_FALSE(std::filesystem::exists(file("t.trace")));
}

TEST_F(TraceFileTest, WriterRejectsInvalidRecords) {
  auto items = sampleWorkItems();
  items[2][1].kind = kAccessKindCount;
  expectWriteError([&] { writeTrace(file("t.trace"), sampleHeader(false), items); },
                   {"work-item 2, record 1: invalid record kind 6"});
  items = sampleWorkItems();
  items[4][0].depth = kMaxLoopDepth + 2;
  expectWriteError([&] { writeTrace(file("t.trace"), sampleHeader(false), items); },
                   {"record depth 9 exceeds 7 without the truncation flag"});
  items[4][0].flags |= kRecordDepthTruncated;  // deep loops are fine when flagged
  writeTrace(file("t.trace"), sampleHeader(false), items);
  TraceReader reader(file("t.trace"));
  EXPECT_EQ(readAll(reader), items);
}

TEST_F(TraceFileTest, FailedOrAbandonedWriterRemovesItsFile) {
  {
    TraceWriter w(file("t.trace"), sampleHeader(true));
    w.writeWorkItem(sampleWorkItems()[0]);
    EXPECT_TRUE(std::filesystem::exists(file("t.trace")));
  }
  EXPECT_FALSE(std::filesystem::exists(file("t.trace")));

  TraceWriter w(file("t.trace"), sampleHeader(false));
  auto items = sampleWorkItems();
  items[0][0].kind = 200;
  EXPECT_THROW(w.writeWorkItem(items[0]), TraceFileError);
  expectWriteError([&] { w.writeWorkItem(sampleWorkItems()[0]); }, {"after an earlier error"});
  expectWriteError([&] { w.close(); }, {"after an earlier error"});
  EXPECT_FALSE(std::filesystem::exists(file("t.trace")));
}

TEST_F(TraceFileTest, CloseTwiceIsHarmlessAndWritingAfterCloseFails) {
  TraceWriter w(file("t.trace"), sampleHeader(false));
  for (const auto& records : sampleWorkItems()) w.writeWorkItem(records);
  w.close();
  w.close();
  expectWriteError([&] { w.writeWorkItem(nullptr, 0); }, {"the writer is closed"});
  EXPECT_EQ(readError(file("t.trace")), "");
}

TEST_F(TraceFileTest, WriterReportsUncreatableFile) {
  expectWriteError([&] { TraceWriter w(file("no/such/dir/t.trace"), sampleHeader(false)); },
                   {"no/such/dir/t.trace: cannot create: No such file or directory"});
}

// ---------------------------------------------------------------- reader errors: header

class ReaderHeaderTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    writeSample(file("good.trace"), false);
    good_ = readBytes(file("good.trace"));
  }
  // Writes the good file with one header field changed (and, by default, a valid checksum).
  std::string patched(size_t at, uint64_t value, int n, bool fix = true) {
    std::string bytes = good_;
    patchLE(bytes, at, value, n);
    if (fix) fixChecksum(bytes);
    writeBytes(file("bad.trace"), bytes);
    return file("bad.trace");
  }
  std::string good_;
};

TEST_F(ReaderHeaderTest, MissingFile) {
  expectReadError(file("missing.trace"), {"cannot open: No such file or directory"});
}

TEST_F(ReaderHeaderTest, WrongMagic) {
  expectReadError(patched(0, 'X', 1, false), {"not a cltrace trace file (wrong magic)"});
  // A text file shows its first bytes (up to the end of the line), so that a schedule's text or
  // csv output given for a trace is recognised.
  writeBytes(file("text.trace"), "hello, world\n");
  expectReadError(file("text.trace"), {"not a cltrace trace file (wrong magic: it begins with the text 'hello, w')"});
  writeBytes(file("csv.trace"), "step,\ncycle");
  expectReadError(file("csv.trace"), {"not a cltrace trace file (wrong magic: it begins with the text 'step,')"});
}

TEST_F(ReaderHeaderTest, EmptyFileIsSaidToBeEmpty) {
  writeBytes(file("empty.trace"), "");
  expectReadError(file("empty.trace"), {": empty file, not a cltrace trace file"});
}

TEST_F(ReaderHeaderTest, UnknownVersionNamesFoundAndSupportedVersions) {
  expectReadError(patched(kVersionAt, 7, 4, false),
                  {"unsupported trace format version 7 (this build reads versions 1 and 2)"});
}

TEST_F(ReaderHeaderTest, TruncatedAnywhereInTheHeader) {
  for (size_t size = 1; size < kSampleHeaderSize; ++size) {  // 0 bytes: an empty file (below)
    SCOPED_TRACE(size);
    writeBytes(file("cut.trace"), good_.substr(0, size));
    expectReadError(file("cut.trace"), {"truncated header"});
  }
  writeBytes(file("cut.trace"), good_.substr(0, kNameCut));
  expectReadError(file("cut.trace"), {"file ends at byte 142 while reading the kernel name"});
}

TEST_F(ReaderHeaderTest, ChecksumCatchesCorruptHeader) {
  expectReadError(patched(kKernelNameAt + 5, 'X', 1, false), {"header checksum mismatch"});
  expectReadError(patched(kSourceHashAt, 1, 1, false), {"header checksum mismatch"});
}

TEST_F(ReaderHeaderTest, RejectsInvalidFields) {
  struct Case {
    size_t at;
    uint64_t value;
    int n;
    const char* words;
  };
  const Case cases[] = {
      {kFlagsAt, 10, 4, "unknown header flags 0xa"},
      {kFlagsAt, 6, 4, "header flags 0x6 announce a loop table, which format version 1 does not have"},
      {kRecordVersionAt, 9, 4, "unsupported record format version 9"},
      {kRecordSizeAt, 40, 4, "with 40-byte records"},
      {kDimsAt, 0, 4, "NDRange dims 0 not in 1..3"},
      {kDimsAt, 4, 4, "NDRange dims 4 not in 1..3"},
      {kLocalAt, 0, 8, "local size 0 in dimension 0"},
      {kLocalAt, 3, 8, "local size 3 does not divide global size 4 in dimension 0"},
      {kGlobalAt + 16, 2, 8, "unused dimension 2 must have global 1"},
      {kGlobalAt + 8, 0, 8, "global size 0 in dimension 1"},
      {kWorkItemCountAt, 9, 8, "work-item count 9 disagrees with the NDRange's 8 work-items"},
      {kAlignmentAt, 0, 8, "alignment 0 is not a power of two"},
      {kRecordCountAt, kUnknownRecordCount, 8, "record count was never written"},
      {kRecordCountAt, 1ull << 40, 8, "record count 1099511627776 is larger than the file"},
      {kKernelNameAt, 5000, 4, "kernel name length 5000 exceeds the limit of 4096 bytes"},
      {kBufferCountAt, 5000, 4, "buffer count 5000 exceeds the limit of 4096"},
      {kFlagsAt, 3, 4, "header flags 0x3 give a compressed body a body checksum"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.words);
    expectReadError(patched(c.at, c.value, c.n), {c.words});
  }
}

TEST_F(ReaderHeaderTest, RejectsRangesAndBuffersBeyondTheAddressSpace) {
  // The sample's global size is 4 x 2: the last global id, offset + global - 1, must fit.
  EXPECT_EQ(readError(patched(kOffsetAt, ~uint64_t{0} - 2, 8)),
            file("bad.trace") + ": global offset 18446744073709551613 plus global size 4 overflows 64 bits in dimension 0");
  EXPECT_EQ(readError(patched(kOffsetAt + 8, ~uint64_t{0}, 8)),
            file("bad.trace") + ": global offset 18446744073709551615 plus global size 2 overflows 64 bits in dimension 1");
  // Buffer 1 holds 32 bytes.
  EXPECT_EQ(readError(patched(kBuffer1BaseAt, 0xfffffffffffffff0ull, 8)),
            file("bad.trace") + ": buffer 1 (out) at 0xfffffffffffffff0 of 32 bytes ends beyond the 64-bit address space");
  EXPECT_EQ(readError(patched(kBuffer1BaseAt, 0xffffffffffffffe1ull, 8)),
            file("bad.trace") + ": buffer 1 (out) at 0xffffffffffffffe1 of 32 bytes ends beyond the 64-bit address space");
}

TEST_F(ReaderHeaderTest, RejectsControlCharactersInNamesAndTexts) {
  // The kernel name's first byte becomes ESC (the start of a terminal escape sequence).
  EXPECT_EQ(readError(patched(kKernelNameAt + 4, 0x1b, 1)),
            file("bad.trace") + ": kernel name holds the control character 0x1b at byte 0");
  // The writer refuses what the reader would.
  for (int field = 0; field < 3; ++field) {
    TraceHeader h = sampleHeader(false);
    (field == 0 ? h.kernelName : field == 1 ? h.device : h.buffers[0].name) += '\n';
    try {
      writeTrace(file("ctl.trace"), h, sampleWorkItems());
      ADD_FAILURE() << "field " << field << " written";
    } catch (const TraceFileError& e) {
      EXPECT_NE(std::string(e.what()).find(field == 0   ? "kernel name holds the control character 0xa"
                                           : field == 1 ? "device string holds the control character 0xa"
                                                        : "buffer 0 name holds the control character 0xa"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(TraceFileTest, RangesAndBuffersMayEndAtTheTopOfTheAddressSpaceAndBuffersOverlap) {
  TraceHeader h = sampleHeader(false);
  h.range.offset = {~uint64_t{0} - 3, ~uint64_t{0} - 1, 0};  // last global ids 2^64 - 1
  h.buffers[1].virtualBase = 0xffffffffffffffe0ull;          // its 32 bytes end at 2^64
  h.buffers.push_back({3, "sub", 16, 0x1010});               // inside buffer 0, as a sub-buffer
  h.buffers.push_back({4, "empty", 0, ~uint64_t{0}});
  writeTrace(file("top.trace"), h, sampleWorkItems());
  TraceReader reader(file("top.trace"));
  expectSameHeader(reader.header(), h);
  EXPECT_EQ(readAll(reader), sampleWorkItems());
}

// ---------------------------------------------------------------- reader errors: body

class ReaderBodyTest : public ReaderHeaderTest {
 protected:
  // The good uncompressed file with one body field changed, in the requested encoding.
  std::string patchedBody(size_t at, uint64_t value, int n, bool compressed) {
    std::string bytes = good_;
    patchLE(bytes, kSampleHeaderSize + at, value, n);
    writeBytes(file("bad.trace"), compressed ? compressBody(bytes) : bytes);
    return file("bad.trace");
  }
};

TEST_F(ReaderBodyTest, TruncatedAnywhereInAnUncompressedBody) {
  for (size_t size = kSampleHeaderSize; size < good_.size(); ++size) {
    SCOPED_TRACE(size);
    writeBytes(file("cut.trace"), good_.substr(0, size));
    expectReadError(file("cut.trace"), {"truncated body"});
  }
}

TEST_F(ReaderBodyTest, TruncatedAnywhereInACompressedBody) {
  writeSample(file("zstd.trace"), true);
  std::string zstd = readBytes(file("zstd.trace"));
  for (size_t size = kSampleHeaderSize; size < zstd.size(); ++size) {
    SCOPED_TRACE(size);
    writeBytes(file("cut.trace"), zstd.substr(0, size));
    expectReadError(file("cut.trace"), {"truncated body"});
  }
}

TEST_F(ReaderBodyTest, TrailingData) {
  writeBytes(file("bad.trace"), good_ + std::string(8, '\0'));
  expectReadError(file("bad.trace"),
                  {"trailing data after the body", "need 408 bytes with the body checksum, the file has 416"});
  // A ninth, empty work-item.
  writeBytes(file("bad.trace"), compressedImage(headerOf(good_), bodyOf(good_) + std::string(8, '\0')));
  expectReadError(file("bad.trace"), {"trailing data after the body", "8 work-items, 7 records"});
  writeBytes(file("bad.trace"), compressBody(good_) + "x");
  expectReadError(file("bad.trace"), {"trailing data after the compressed body"});
  std::string secondFrame = compressBody(good_).substr(kSampleHeaderSize);
  writeBytes(file("bad.trace"), compressBody(good_) + secondFrame);
  expectReadError(file("bad.trace"), {"trailing data after the compressed body"});
}

TEST_F(ReaderBodyTest, HugeWorkItemCount) {
  for (bool compressed : {false, true}) {
    expectReadError(patchedBody(0, 1ull << 62, 8, compressed),
                    {"work-item 0 (of 8) claims 4611686018427387904 records but only 7 of the "
                     "header's 7 remain"});
  }
}

TEST_F(ReaderBodyTest, InvalidRecords) {
  size_t record1OfWorkItem2 = 8 + 2 * 48 + 8 + 8 + 48;
  for (bool compressed : {false, true}) {
    expectReadError(
        patchedBody(record1OfWorkItem2 + kKindInRecord, kAccessKindCount, 1, compressed),
        {"work-item 2, record 1: invalid record kind 6 (kinds are 0..5)"});
    expectReadError(patchedBody(8 + kDepthInRecord, 8, 1, compressed),
                    {"work-item 0, record 0: record depth 8 exceeds 7"});
    // An instruction id past the format's limit (version 2 ids index a table of at most that many).
    expectReadError(patchedBody(8 + 8 + 2, 0x10, 1, compressed),
                    {"work-item 0, record 0: record instruction id 1048576 exceeds the limit of 1048575"});
    // Flags: bit 4 means nothing; the truncation flag only on a record deeper than 7 loops.
    expectReadError(patchedBody(8 + kFlagsInRecord, 0x10, 1, compressed),
                    {"work-item 0, record 0: record flags 0x10 hold unknown bits (known: 0x8f)"});
    expectReadError(patchedBody(8 + kFlagsInRecord, kRecordDepthTruncated, 1, compressed),
                    {"work-item 0, record 0: record depth ", " has the truncation flag, which only a depth over 7 may have"});
  }
}

TEST_F(ReaderBodyTest, BodyHoldsFewerRecordsThanTheHeaderSays) {
  std::string bytes = good_;
  patchLE(bytes, kRecordCountAt, 8, 8);
  fixChecksum(bytes);
  writeBytes(file("bad.trace"), bytes);
  expectReadError(file("bad.trace"), {"truncated body: the header's 8 work-items and 8 records"});
  writeBytes(file("bad.trace"), compressBody(bytes));
  expectReadError(file("bad.trace"), {"the body holds 7 records but the header says 8"});
}

TEST_F(ReaderBodyTest, BodyHoldsFewerWorkItemsThanTheHeaderSays) {
  // Work-item 7's fence moved into work-item 6: the body then ends one count early.
  const std::string body = bodyOf(good_);
  std::string moved = body;
  size_t workItem6 = body.size() - 8 - 48 - 8;
  patchLE(moved, workItem6, 1, 8);
  moved.resize(moved.size() - 8 - 48);
  moved += body.substr(body.size() - 48);
  writeBytes(file("bad.trace"), compressedImage(headerOf(good_), moved));
  expectReadError(file("bad.trace"),
                  {"truncated body: the body ends inside the record count of work-item 7"});
}

TEST_F(ReaderBodyTest, ZstdErrors) {
  std::string zstd = compressBody(good_);
  std::string bytes = zstd;
  bytes[kSampleHeaderSize] ^= 0x55;  // frame magic
  writeBytes(file("bad.trace"), bytes);
  expectReadError(file("bad.trace"), {"corrupt compressed body: Unknown frame descriptor"});
  writeSample(file("zstd.trace"), true);  // the writer adds a content checksum
  bytes = readBytes(file("zstd.trace"));
  bytes.back() ^= 0x55;
  writeBytes(file("bad.trace"), bytes);
  expectReadError(file("bad.trace"),
                  {"corrupt compressed body: Restored data doesn't match checksum"});
}

// ---------------------------------------------------------------- body checksum

// The reader streams an uncompressed body and checks its checksum once it has read the last
// work-item: the call that would return false reports the corruption.
TEST_F(ReaderBodyTest, FlippedBodyByteIsReportedAtTheEndOfTheBody) {
  const std::string expected = file("bad.trace") + ": body checksum mismatch (corrupt body)";
  // Byte 1 of the first record's address (0x1000 -> 0x1100), the trailer's first byte, and
  // the last record's last byte (an iteration counter the fence does not use).
  for (size_t at : {kSampleHeaderSize + 8 + 1, good_.size() - 8, good_.size() - 9}) {
    SCOPED_TRACE(at);
    std::string bytes = good_;
    bytes[at] ^= 0x01;
    writeBytes(file("bad.trace"), bytes);
    TraceReader reader(file("bad.trace"));
    std::vector<Record> records;
    for (uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(reader.nextWorkItem(records)) << i;
    try {
      reader.nextWorkItem(records);
      ADD_FAILURE() << "no error";
    } catch (const TraceFileError& e) {
      EXPECT_EQ(e.what(), expected);
    }
  }
}

TEST_F(ReaderBodyTest, TruncatedInsideTheBodyChecksum) {
  writeBytes(file("cut.trace"), good_.substr(0, good_.size() - 4));
  EXPECT_EQ(readError(file("cut.trace")),
            file("cut.trace") + ": truncated body: the header's 8 work-items and 7 records need 408 bytes with the "
                                "body checksum, the file has only 404 bytes after the header");
}

// Files from before the body checksum (flag bit 1 clear, no trailer) read as before.
TEST_F(ReaderBodyTest, FilesWithoutTheBodyChecksumStillRead) {
  const std::string old = withoutBodyChecksum(good_, kSampleHeaderSize);
  ASSERT_EQ(old.size(), good_.size() - 8);
  writeBytes(file("old.trace"), old);
  TraceReader reader(file("old.trace"));
  EXPECT_EQ(readAll(reader), sampleWorkItems());
  writeBytes(file("cut.trace"), old.substr(0, old.size() - 1));
  EXPECT_EQ(readError(file("cut.trace")),
            file("cut.trace") + ": truncated body: the header's 8 work-items and 7 records need 400 bytes, the file "
                                "has only 399 bytes after the header");
}

// Through a pipe the reader cannot check the size up front: it streams, then reads the
// checksum. (Each case reads to the end, so the writer never writes into a closed pipe.)
TEST_F(ReaderBodyTest, ChecksumOfAStreamedBody) {
  auto readThroughFifo = [&](const std::string& bytes) {
    std::string fifo = file("fifo.trace");
    std::filesystem::remove(fifo);
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
    std::string message = readError(fifo);
    writer.join();
    return message;
  };
  EXPECT_EQ(readThroughFifo(good_), "");
  std::string flipped = good_;
  flipped[kSampleHeaderSize + 8 + 1] ^= 0x01;
  EXPECT_EQ(readThroughFifo(flipped), file("fifo.trace") + ": body checksum mismatch (corrupt body)");
  EXPECT_EQ(readThroughFifo(good_.substr(0, good_.size() - 3)),
            file("fifo.trace") + ": truncated body: the file ends inside the body checksum (header: 8 work-items, "
                                 "7 records)");
  EXPECT_EQ(readThroughFifo(withoutBodyChecksum(good_, kSampleHeaderSize)), "");
}

// Every single-byte corruption either reads cleanly or throws TraceFileError; with checksums
// on the header and on an uncompressed body, every one in an uncompressed file throws.
TEST_P(BothEncodings, EveryByteFlipIsReadOrReported) {
  writeSample(file("good.trace"), GetParam());
  std::string good = readBytes(file("good.trace"));
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bytes = good;
    bytes[at] ^= 0xff;
    writeBytes(file("bad.trace"), bytes);
    std::string message;
    EXPECT_NO_THROW(message = readError(file("bad.trace"))) << at;
    if (!GetParam()) {
      EXPECT_NE(message, "") << "a flipped byte " << at << " went unnoticed";
    }
  }
}

}  // namespace
}  // namespace cltrace::test

namespace cltrace::test {
namespace {

// ---------------------------------------------------------------- format version 2

using UnitsTest = TempDirTest;
class UnitsBothEncodings : public TempDirTest, public ::testing::WithParamInterface<bool> {};
INSTANTIATE_TEST_SUITE_P(Trace, UnitsBothEncodings, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "zstd" : "plain"; });

TEST_P(UnitsBothEncodings, RoundTripsUnitsAsRecords) {
  writeUnitsSample(file("u.trace"), GetParam());
  TraceReader reader(file("u.trace"));
  const TraceHeader& h = reader.header();
  EXPECT_EQ(h.version, kTraceFormatUnits);
  EXPECT_EQ(h.recordCount, 10u);
  EXPECT_EQ(h.unitCount, 13u);
  ASSERT_EQ(h.instructions.size(), 9u);
  EXPECT_EQ(h.instructions[6].dynamic, DynamicWord::Size);
  EXPECT_EQ(h.instructions[7].flags, kFenceRead);
  EXPECT_EQ(h.instructions[8].depth, 9u);
  EXPECT_EQ(h.instructionTexts, sampleUnitsHeader(false).instructionTexts);
  EXPECT_EQ(readAll(reader), sampleUnitRecords());
}

TEST_F(UnitsTest, FileHoldsTheInstructionTableAndSixteenByteUnits) {
  writeUnitsSample(file("u.trace"), false);
  std::string bytes = readBytes(file("u.trace"));
  const TraceHeader h = sampleUnitsHeader(false);
  const uint64_t headerSize = headerSizeOf(h);
  EXPECT_EQ(bytes.size(), headerSize + 8 * 8 + 16 * 13 + 8);
  EXPECT_EQ(getLE(bytes, kVersionAt, 4), 2u);
  EXPECT_EQ(getLE(bytes, kFlagsAt, 4), kFlagBodyChecksum);
  EXPECT_EQ(getLE(bytes, bytes.size() - 8, 8), XXH64(bytes.data() + headerSize, 8 * 8 + 16 * 13, 0));
  EXPECT_EQ(getLE(bytes, kRecordSizeAt, 4), 16u);
  // After the buffer table: unit count, instruction count, 12 bytes per instruction, then each
  // instruction's text (a string), then the checksum.
  size_t texts = 0;
  for (const std::string& t : h.instructionTexts) texts += 4 + t.size();
  const size_t table = headerSize - 8 - texts - 12 * 9 - 4 - 8;
  EXPECT_EQ(getLE(bytes, table + 12 + 12 * 9, 4), 15u);  // "%1 = load float"
  EXPECT_EQ(getLE(bytes, table, 8), 13u);
  EXPECT_EQ(getLE(bytes, table + 8, 4), 9u);
  const size_t memcpyAt = table + 12 + 12 * 6;  // kind, flags, dynamic, reserved, size, depth
  EXPECT_EQ(getLE(bytes, memcpyAt, 1), uint64_t(AccessKind::Store));
  EXPECT_EQ(getLE(bytes, memcpyAt + 2, 1), uint64_t(DynamicWord::Size));
  const size_t deepAt = table + 12 + 12 * 8;
  EXPECT_EQ(getLE(bytes, deepAt + 4, 4), 2u);
  EXPECT_EQ(getLE(bytes, deepAt + 8, 4), 9u);
  // Work-item 0: two units: load at 0x1000 (instruction 0), then the store in one loop.
  EXPECT_EQ(getLE(bytes, headerSize, 8), 2u);
  EXPECT_EQ(getLE(bytes, headerSize + 8, 8), 0x1000u);
  EXPECT_EQ(getLE(bytes, headerSize + 16, 4), 0u);
  EXPECT_EQ(getLE(bytes, headerSize + 24 + 8, 4), 2u);   // the store's instruction id
  EXPECT_EQ(getLE(bytes, headerSize + 24 + 12, 4), 0u);  // its iteration counter
}

// The sample's loops: a chain of 9 (loop k in loop k - 1) holding instructions 2 (depth 1),
// 3 (depth 2) and 8 (depth 9), and loop 9, outermost, holding none.
LoopNest sampleLoops() {
  constexpr uint32_t N = LoopNest::kNone;
  LoopNest nest;
  nest.parent = {N, 0, 1, 2, 3, 4, 5, 6, 7, N};
  nest.innermost = {N, N, 0, 1, N, N, N, N, 8};
  return nest;
}

void writeUnitsWithLoops(const std::string& path, bool compressed, const LoopNest& loops) {
  TraceHeader h = sampleUnitsHeader(compressed);
  h.loops = loops;
  TraceWriter writer(path, h);
  for (const auto& records : sampleUnitRecords()) {
    std::vector<uint32_t> words = encodeUnits(h.instructions, records);
    writer.writeWorkItemUnits(words.data(), words.size() / kUnitWords);
  }
  writer.close();
}

TEST_P(UnitsBothEncodings, RoundTripsTheLoopTable) {
  writeUnitsWithLoops(file("l.trace"), GetParam(), sampleLoops());
  TraceReader reader(file("l.trace"));
  ASSERT_TRUE(reader.header().loops.has_value());
  EXPECT_EQ(*reader.header().loops, sampleLoops());
  EXPECT_EQ(reader.header().loops->chain(3), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(reader.header().loops->chain(8), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(reader.header().loops->chain(0).empty());
  EXPECT_EQ(readAll(reader), sampleUnitRecords());
  // Without a table there is none to read.
  writeUnitsSample(file("u.trace"), GetParam());
  EXPECT_FALSE(TraceReader(file("u.trace")).header().loops.has_value());
}

TEST_F(UnitsTest, LoopTableFollowsTheInstructionTextsBehindFlagBit2) {
  writeUnitsSample(file("u.trace"), false);
  writeUnitsWithLoops(file("l.trace"), false, sampleLoops());
  const std::string plain = readBytes(file("u.trace"));
  const std::string bytes = readBytes(file("l.trace"));
  const size_t tableAt = headerSizeOf(sampleUnitsHeader(false)) - 8;  // where the checksum was
  EXPECT_EQ(getLE(bytes, kFlagsAt, 4), kFlagBodyChecksum | 4u);
  EXPECT_EQ(bytes.size(), plain.size() + 4 + 4 * 10 + 4 * 9);
  EXPECT_EQ(bytes.substr(kFlagsAt + 4, tableAt - kFlagsAt - 4), plain.substr(kFlagsAt + 4, tableAt - kFlagsAt - 4));
  EXPECT_EQ(getLE(bytes, tableAt, 4), 10u);  // loops; then numbers + 1, 0 for none
  const uint64_t parents[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 0};
  for (size_t l = 0; l < 10; ++l) EXPECT_EQ(getLE(bytes, tableAt + 4 + 4 * l, 4), parents[l]) << "loop " << l;
  const uint64_t innermost[9] = {0, 0, 1, 2, 0, 0, 0, 0, 9};
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(getLE(bytes, tableAt + 44 + 4 * i, 4), innermost[i]) << "instruction " << i;
  const size_t checksumAt = tableAt + 4 + 40 + 36;
  EXPECT_EQ(getLE(bytes, checksumAt, 8), fnv1a64(bytes.data(), checksumAt));
}

TEST_F(UnitsTest, InstructionFlagsWithUnknownBitsAreRefused) {
  writeUnitsSample(file("u.trace"), false);
  std::string bytes = readBytes(file("u.trace"));
  // The instruction count (9) and instruction 0's entry: load, flags 0, no dynamic word, 4 bytes,
  // depth 0.
  const std::string table = std::string("\x09\0\0\0", 4) + std::string("\0\0\0\0\x04\0\0\0\0\0\0\0", 12);
  const size_t at = bytes.find(table);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 4 + 1] = 0x10;
  const size_t checksumAt = headerSizeOf(sampleUnitsHeader(false)) - 8;
  patchLE(bytes, checksumAt, fnv1a64(bytes.data(), checksumAt), 8);
  writeBytes(file("bad.trace"), bytes);
  expectReadError(file("bad.trace"), {"instruction 0 has flags 0x10 with unknown bits (known: 0x8f)"});
}

TEST_F(UnitsTest, InconsistentLoopTablesAreRefusedByWriterAndReader) {
  constexpr uint32_t N = LoopNest::kNone;
  struct Case {
    void (*change)(LoopNest&);
    const char* words;
  };
  const Case cases[] = {
      {[](LoopNest& n) { n.parent[1] = 5; }, "loop table: loop 1 names loop 5 as its parent, which is not numbered before it"},
      {[](LoopNest& n) { n.parent[0] = 0; }, "loop table: loop 0 names loop 0 as its parent"},
      {[](LoopNest& n) { n.innermost[2] = 10; }, "loop table: instruction 2 is in loop 10, but the table has 10 loops"},
      {[](LoopNest& n) { n.innermost[2] = 1; }, "loop table: instruction 2 has loop depth 1, but the loop table puts it in 2 loops"},
      {[](LoopNest& n) { n.innermost[0] = 9; }, "loop table: instruction 0 has loop depth 0, but the loop table puts it in 1 loop"},
      {[](LoopNest& n) { n.innermost[3] = N; }, "loop table: instruction 3 has loop depth 2, but the loop table puts it in 0 loops"},
  };
  // The reader's case: a valid table of the same size written, then the bytes changed and the
  // header checksum mended.
  writeUnitsWithLoops(file("l.trace"), false, sampleLoops());
  const std::string good = readBytes(file("l.trace"));
  const size_t tableAt = headerSizeOf(sampleUnitsHeader(false)) - 8;
  const size_t checksumAt = tableAt + 4 + 40 + 36;
  const auto fixLoopsChecksum = [&](std::string& bytes) {
    patchLE(bytes, checksumAt, fnv1a64(bytes.data(), checksumAt), 8);
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.words);
    LoopNest nest = sampleLoops();
    c.change(nest);
    try {
      writeUnitsWithLoops(file("w.trace"), false, nest);
      ADD_FAILURE() << "the writer took it";
    } catch (const TraceFileError& e) {
      EXPECT_NE(std::string(e.what()).find(c.words), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(file("w.trace")));
    std::string bytes = good;
    for (size_t l = 0; l < nest.parent.size(); ++l)
      patchLE(bytes, tableAt + 4 + 4 * l, nest.parent[l] == N ? 0 : nest.parent[l] + 1, 4);
    for (size_t i = 0; i < nest.innermost.size(); ++i)
      patchLE(bytes, tableAt + 44 + 4 * i, nest.innermost[i] == N ? 0 : nest.innermost[i] + 1, 4);
    fixLoopsChecksum(bytes);
    writeBytes(file("bad.trace"), bytes);
    expectReadError(file("bad.trace"), {c.words});
  }
  // A table for another number of instructions, and one in format version 1.
  LoopNest shorter = sampleLoops();
  shorter.innermost.pop_back();
  EXPECT_THROW(writeUnitsWithLoops(file("w.trace"), false, shorter), TraceFileError);
  TraceHeader v1 = sampleHeader(false);
  v1.loops = LoopNest{};
  expectWriteError([&] { TraceWriter w(file("w.trace"), v1); }, {"version 1 has no loop table"});
  // A loop count over the limit is refused before anything is allocated for it.
  std::string huge = good;
  patchLE(huge, tableAt, 0xFFFFFFF0u, 4);
  writeBytes(file("bad.trace"), huge);
  expectReadError(file("bad.trace"), {"loop count 4294967280 exceeds the limit of 1048576"});
}

TEST_P(UnitsBothEncodings, TruncatedAnywhereIsReported) {
  writeUnitsSample(file("u.trace"), GetParam());
  std::string bytes = readBytes(file("u.trace"));
  for (size_t keep = 0; keep < bytes.size(); ++keep) {
    writeBytes(file("cut.trace"), bytes.substr(0, keep));
    try {
      TraceReader reader(file("cut.trace"));
      readAll(reader);
      ADD_FAILURE() << "no error with " << keep << " of " << bytes.size() << " bytes";
    } catch (const TraceFileError&) {
    }
  }
}

TEST_P(UnitsBothEncodings, EveryByteFlipIsReadOrReported) {
  writeUnitsSample(file("u.trace"), GetParam());
  std::string bytes = readBytes(file("u.trace"));
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    writeBytes(file("flip.trace"), flipped);
    try {
      TraceReader reader(file("flip.trace"));
      readAll(reader);
      EXPECT_TRUE(GetParam()) << "a flipped byte " << at << " went unnoticed in an uncompressed file";
    } catch (const TraceFileError&) {
    }
  }
}

TEST_F(UnitsTest, FlippedAddressByteIsReportedByTheBodyChecksum) {
  writeUnitsSample(file("u.trace"), false);
  std::string bytes = readBytes(file("u.trace"));
  const uint64_t body = headerSizeOf(sampleUnitsHeader(false));
  bytes[body + 8 + 1] ^= 0x01;  // byte 1 of the first record's address: 0x1000 -> 0x1100
  writeBytes(file("bad.trace"), bytes);
  TraceReader reader(file("bad.trace"));
  std::vector<Record> records;
  ASSERT_TRUE(reader.nextWorkItem(records));
  EXPECT_EQ(records.at(0).address, 0x1100u);  // read before the end is checked
  for (uint64_t i = 1; i < 8; ++i) ASSERT_TRUE(reader.nextWorkItem(records)) << i;
  try {
    reader.nextWorkItem(records);
    ADD_FAILURE() << "no error";
  } catch (const TraceFileError& e) {
    EXPECT_EQ(e.what(), file("bad.trace") + ": body checksum mismatch (corrupt body)");
  }
}

TEST_F(UnitsTest, FilesWithoutTheBodyChecksumStillRead) {
  writeUnitsSample(file("u.trace"), false);
  const uint64_t headerSize = headerSizeOf(sampleUnitsHeader(false));
  writeBytes(file("old.trace"), withoutBodyChecksum(readBytes(file("u.trace")), headerSize));
  TraceReader reader(file("old.trace"));
  EXPECT_EQ(reader.header().unitCount, 13u);
  EXPECT_EQ(readAll(reader), sampleUnitRecords());
}

TEST_F(UnitsTest, UnitsNamingUnknownInstructionsOrRunningPastTheEndAreReported) {
  writeUnitsSample(file("u.trace"), false);
  std::string bytes = readBytes(file("u.trace"));
  const uint64_t body = headerSizeOf(sampleUnitsHeader(false));
  std::string unknown = bytes;
  patchLE(unknown, body + 8 + 8, 99, 4);  // work-item 0's first record names instruction 99
  writeBytes(file("bad.trace"), unknown);
  try {
    TraceReader reader(file("bad.trace"));
    readAll(reader);
    ADD_FAILURE() << "no error";
  } catch (const TraceFileError& e) {
    EXPECT_NE(std::string(e.what()).find("work-item 0 (of 8): record at unit 0 names instruction 99, "
                                         "but the kernel has 9"),
              std::string::npos)
        << e.what();
  }
  std::string past = bytes;
  patchLE(past, body + 8 + 8, 8, 4);  // now a 3-unit record (instruction 8) in a 2-unit work-item
  writeBytes(file("past.trace"), past);
  try {
    TraceReader reader(file("past.trace"));
    readAll(reader);
    ADD_FAILURE() << "no error";
  } catch (const TraceFileError& e) {
    EXPECT_NE(std::string(e.what()).find("record of instruction 8 at unit 0 runs past the work-item's 2 units"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(UnitsTest, WriterChecksVersionsShapesAndUnits) {
  auto expectWriteError = [&](auto&& body, const std::string& words) {
    try {
      body();
      ADD_FAILURE() << "no error, expected '" << words << "'";
    } catch (const TraceFileError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expectWriteError([&] {
    TraceWriter w(file("a.trace"), sampleUnitsHeader(false));
    w.writeWorkItem(sampleUnitRecords()[0]);
  }, "48-byte records need format version 1");
  expectWriteError([&] {
    TraceWriter w(file("a.trace"), sampleHeader(false));
    uint32_t words[4] = {0, 0, 0, 0};
    w.writeWorkItemUnits(words, 1);
  }, "unit records need format version 2");
  expectWriteError([&] {
    TraceWriter w(file("a.trace"), sampleUnitsHeader(false));
    uint32_t words[4] = {0, 0, 42, 0};
    w.writeWorkItemUnits(words, 1);
  }, "work-item 0: record at unit 0 names instruction 42, but the kernel has 9");
  expectWriteError([&] {
    TraceHeader h = sampleUnitsHeader(false);
    h.instructions[3].kind = static_cast<AccessKind>(9);
    TraceWriter w(file("a.trace"), h);
  }, "invalid header: instruction 3 has invalid kind 9");
  expectWriteError([&] {
    TraceHeader h = sampleUnitsHeader(false);
    h.unitCount = 12;
    TraceWriter w(file("a.trace"), h);
    for (const auto& records : sampleUnitRecords()) {
      std::vector<uint32_t> words = encodeUnits(h.instructions, records);
      w.writeWorkItemUnits(words.data(), words.size() / kUnitWords);
    }
  }, "more units than the header's 12");
  EXPECT_FALSE(std::filesystem::exists(file("a.trace")));
}

}  // namespace
}  // namespace cltrace::test
