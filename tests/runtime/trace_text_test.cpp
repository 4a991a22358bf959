#include "cltrace/trace_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_util.h"
#include "trace_samples.h"

namespace cltrace::test {
namespace {

// Runs a printer on a reader of `path` and returns what it printed.
template <typename Print>
std::string printed(const std::string& path, Print&& print) {
  TraceReader reader(path);
  std::FILE* out = std::tmpfile();
  print(reader, out);
  std::string text(static_cast<size_t>(std::ftell(out)), '\0');
  std::rewind(out);
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  return text;
}

const char* const kSampleHeaderText =
    "trace format 1, body uncompressed\n"
    "kernel: vadd\n"
    "source hash: 0x0123456789abcdef\n"
    "device: test-device\n"
    "ndrange: dims 2, global (4,2), local (2,1), offset (1,0), 4 workgroups\n"
    "local memory: 320 bytes per workgroup\n"
    "alignment: 4096\n"
    "buffers: 2\n"
    "  arg 0 a: base 0x1000 size 64\n"
    "  arg 2 out: base 0x2000 size 32\n"
    "work-items: 8\n"
    "records: 7\n";

using TraceTextTest = TempDirTest;

TEST_F(TraceTextTest, DumpPrintsHeaderAndEveryRecord) {
  writeSample(file("t.trace"), false);
  std::string text =
      printed(file("t.trace"), [](TraceReader& r, std::FILE* out) { dumpTrace(r, out); });
  EXPECT_EQ(
      text,
      std::string(kSampleHeaderText) +
          "wi 0 group (0,0) local (0,0) load instr 0 addr 0x1000 size 4 flags 0x00 iter []\n"
          "wi 0 group (0,0) local (0,0) store instr 2 addr 0x2000 size 4 flags 0x00 iter [0]\n"
          "wi 2 group (1,0) local (0,0) load instr 0 addr 0x1004 size 4 flags 0x00 iter []\n"
          "wi 2 group (1,0) local (0,0) barrier instr 1 addr 0x0 size 0 flags 0x03 iter []\n"
          "wi 4 group (0,1) local (0,0) atomic instr 3 addr 0x201c size 4 flags 0x00 iter [1,2]\n"
          "wi 5 group (0,1) local (1,0) constant_load instr 4 addr 0x9000 size 8 flags 0x00 "
          "iter []\n"
          "wi 7 group (1,1) local (1,0) fence instr 5 addr 0x0 size 0 flags 0x02 iter []\n");
}

TEST_F(TraceTextTest, DumpStopsAtTheLimit) {
  writeSample(file("t.trace"), true);
  std::string text =
      printed(file("t.trace"), [](TraceReader& r, std::FILE* out) { dumpTrace(r, out, 1); });
  std::string header = kSampleHeaderText;
  header.replace(header.find("uncompressed"), 12, "zstd-compressed");
  EXPECT_EQ(text,
            header +
                "wi 0 group (0,0) local (0,0) load instr 0 addr 0x1000 size 4 flags 0x00 iter []\n"
                "... 6 more records not shown (the rest of the file was not read or checked)\n");
}

TEST_F(TraceTextTest, StatsCountKindsInstructionsAndBuffers) {
  writeSample(file("t.trace"), false);
  std::string text =
      printed(file("t.trace"), [](TraceReader& r, std::FILE* out) { printTraceStats(r, out); });
  EXPECT_EQ(text,
            "kernel: vadd\n"
            "work-items: 8 (3 without records)\n"
            "records: 7\n"
            "by kind:\n"
            "  load                               2\n"
            "  store                              1\n"
            "  atomic                             1\n"
            "  constant_load                      1\n"
            "  barrier                            1\n"
            "  fence                              1\n"
            "by instruction:\n"
            "  instr 0 load                       2\n"
            "  instr 1 barrier                    1\n"
            "  instr 2 store                      1\n"
            "  instr 3 atomic                     1\n"
            "  instr 4 constant_load              1\n"
            "  instr 5 fence                      1\n"
            "by buffer (memory accesses):\n"
            "  arg 0 a                            2\n"
            "  arg 2 out                          2\n"
            "  outside                            1\n");
}

// What `stats` prints for a 1-D launch of one workgroup over `buffers`, whose work-items make
// one record each.
std::string statsOfOneRecordPerItem(const std::string& path, std::vector<TraceBuffer> buffers,
                                    const std::vector<Record>& records) {
  TraceHeader h = sampleHeader(false);
  h.buffers = std::move(buffers);
  h.range.dims = 1;
  h.range.global = {records.size(), 1, 1};
  h.range.local = {records.size(), 1, 1};
  h.range.offset = {0, 0, 0};
  h.workItemCount = records.size();
  h.recordCount = records.size();
  WorkItems items;
  for (const Record& r : records) items.push_back({r});
  writeTrace(path, h, items);
  return printed(path, [](TraceReader& r, std::FILE* out) { printTraceStats(r, out); });
}

TEST_F(TraceTextTest, StatsWidenTheLabelColumnForALongBufferName) {
  // "arg 1 g_updating_graph_mask" is 27 characters: every row's label column grows to 28, so the
  // counts stay in one column (the long name used to push its count 4 places right).
  using K = AccessKind;
  const std::string text = statsOfOneRecordPerItem(
      file("w.trace"), {{0, "a", 0x100, 0}, {1, "g_updating_graph_mask", 0x100, 0x100}},
      {makeRecord(K::Load, 0, 0x0, 4), makeRecord(K::Store, 1, 0x100, 4), makeRecord(K::Store, 1, 0x104, 4)});
  EXPECT_NE(text.find("  load                                   1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  instr 1 store                          2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("by buffer (memory accesses):\n"
                      "  arg 0 a                                1\n"
                      "  arg 1 g_updating_graph_mask            2\n"
                      "  outside                                0\n"),
            std::string::npos)
      << text;
}

TEST_F(TraceTextTest, StatsCountAnAccessInAParentPastItsSubBufferForTheParent) {
  // whole [0, 0x1000) holds part [0x200, 0x600), as a sub-buffer at offset 512 lies.
  using K = AccessKind;
  const std::string text = statsOfOneRecordPerItem(file("o.trace"),
                                                   {{0, "whole", 0x1000, 0}, {1, "part", 0x400, 0x200}},
                                                   {makeRecord(K::Load, 0, 0x0, 4),      // whole, before part
                                                    makeRecord(K::Load, 0, 0x200, 4),    // part (inside both)
                                                    makeRecord(K::Load, 0, 0x700, 4),    // whole, past part's end
                                                    makeRecord(K::Load, 0, 0x1000, 4)});  // neither
  EXPECT_NE(text.find("by buffer (memory accesses):\n"
                      "  arg 0 whole                        2  (overlaps arg 1)\n"
                      "  arg 1 part                         1  (overlaps arg 0)\n"
                      "  outside                            1\n"),
            std::string::npos)
      << text;
}

TEST_F(TraceTextTest, StatsCountABufferBoundToSeveralArgumentsForTheFirst) {
  using K = AccessKind;
  const std::string text = statsOfOneRecordPerItem(
      file("a.trace"), {{0, "a", 0x100, 0}, {1, "b", 0x100, 0}, {2, "c", 0x100, 0}},
      {makeRecord(K::Load, 0, 0x0, 4), makeRecord(K::Store, 1, 0x40, 4)});
  EXPECT_NE(text.find("by buffer (memory accesses):\n"
                      "  arg 0 a                            2\n"
                      "  arg 1 b                            0  (= arg 0)\n"
                      "  arg 2 c                            0  (= arg 0)\n"
                      "  outside                            0\n"),
            std::string::npos)
      << text;
}

TEST_F(TraceTextTest, StatsReportACorruptFile) {
  writeSample(file("t.trace"), true);
  std::string bytes = readBytes(file("t.trace"));
  writeBytes(file("t.trace"), bytes.substr(0, bytes.size() - 1));
  EXPECT_THROW(
      printed(file("t.trace"), [](TraceReader& r, std::FILE* out) { printTraceStats(r, out); }),
      TraceFileError);
}

TEST(InstructionSource, IsTheLocationATextBeginsWith) {
  EXPECT_EQ(instructionSource("line 12:17: %27 = load float, float addrspace(1)* %26, align 4"), "line 12:17");
  EXPECT_EQ(instructionSource("line 3: store float %5, float addrspace(1)* %6, align 4"), "line 3");
  EXPECT_EQ(instructionSource("util.h line 4:10: %8 = load i32, i32 addrspace(1)* %7, align 4"), "util.h line 4:10");
  EXPECT_EQ(instructionSource("inc/util.h line 4:10: x"), "inc/util.h line 4:10");
  // No location: plain IR, an empty text, texts that only look alike.
  EXPECT_EQ(instructionSource("%1 = load float, float addrspace(1)* %0, align 4"), "");
  EXPECT_EQ(instructionSource(""), "");
  EXPECT_EQ(instructionSource("line 12:17"), "");           // no ": " after it
  EXPECT_EQ(instructionSource("line x:17: load"), "");      // not a number
  EXPECT_EQ(instructionSource("line 12:: load"), "");       // no column digits
  EXPECT_EQ(instructionSource("sp ace/h.h line 1:2: load"), "sp ace/h.h line 1:2");  // a path with a space
  EXPECT_EQ(instructionSource("fooline 1:2: load"), "");    // "line" inside a word
  EXPECT_EQ(instructionSource("line 12345678901:1: x"), "");  // over 10 digits
}

TEST_F(TraceTextTest, StatsNameEachInstructionsSourceLineWhenItsTextGivesOne) {
  // The version 2 sample with located texts for instructions 0 and 2 (8 of 9 have records).
  TraceHeader h = sampleUnitsHeader(false);
  h.instructionTexts[0] = "line 7:12: %1 = load float";
  h.instructionTexts[2] = "util.h line 3:5: store float";
  const WorkItems items = sampleUnitRecords();
  {
    TraceWriter w(file("u.trace"), h);
    for (const std::vector<Record>& records : items) {
      const std::vector<uint32_t> words = encodeUnits(h.instructions, records);
      w.writeWorkItemUnits(words.data(), words.size() / kUnitWords);
    }
    w.close();
  }
  const std::string text = printed(file("u.trace"), [](TraceReader& r, std::FILE* out) { printTraceStats(r, out); });
  const size_t from = text.find("by instruction:\n"), to = text.find("by buffer");
  ASSERT_NE(from, std::string::npos);
  EXPECT_EQ(text.substr(from, to - from),
            "by instruction:\n"
            "  instr 0 load                       2  line 7:12\n"
            "  instr 1 barrier                    1\n"
            "  instr 2 store                      1  util.h line 3:5\n"
            "  instr 3 atomic                     1\n"
            "  instr 4 constant_load              1\n"
            "  instr 5 fence                      1\n"
            "  instr 6 store                      1\n"
            "  instr 7 fence                      1\n"
            "  instr 8 load                       1\n");
}

}  // namespace
}  // namespace cltrace::test
