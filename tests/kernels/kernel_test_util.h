// Helpers for the bundled-kernel tests: run specs built from a kernel's launch manifest, read a
// trace back per work-item, and check single records.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cltrace/trace_file.h"
#include "cltrace/wrapper/standalone.h"

namespace cltrace::kernels_test {

inline std::string kernelSource(const std::string& name) {
  return std::string(CLTRACE_SOURCE_DIR) + "/kernels/" + name + ".cl";
}

// The launch exactly as kernels/NAME.json describes it.
inline wrapper::RunSpec manifestSpec(const std::string& name) {
  wrapper::RunSpec s;
  s.sourcePath = kernelSource(name);
  if (!wrapper::applyManifest(s, false, false, false, false))
    ADD_FAILURE() << "no launch manifest for " << name;
  return s;
}

// Kernel name and build options from the manifest; range and arguments as given.
inline wrapper::RunSpec smallSpec(const std::string& name, const NDRange& range,
                                  const std::vector<std::string>& args) {
  wrapper::RunSpec s;
  s.sourcePath = kernelSource(name);
  s.range = range;
  for (const auto& a : args) s.args.push_back(wrapper::parseArgSpec(a));
  if (!wrapper::applyManifest(s, false, true, true, false))
    ADD_FAILURE() << "no launch manifest for " << name;
  return s;
}

inline NDRange range1d(uint64_t global, uint64_t local) { return NDRange::fromSizes({global}, {local}); }

inline NDRange range2d(uint64_t gx, uint64_t gy, uint64_t lx, uint64_t ly) {
  return NDRange::fromSizes({gx, gy}, {lx, ly});
}

// A trace file under the temp directory, removed when the object goes.
struct TempTrace {
  std::string path;
  explicit TempTrace(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() / "cltrace-kernels-tests";
    std::filesystem::create_directories(dir);
    path = (dir / (name + "-" + std::to_string(::getpid()) + ".cltrace")).string();
  }
  ~TempTrace() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

struct Traced {
  TraceHeader header;
  std::vector<std::vector<Record>> items;  // per work-item, in file order
  wrapper::RunOutput out;
};

// Traces `spec` and reads the whole trace back; also checks that every access hit a buffer.
inline Traced traceAll(const wrapper::RunSpec& spec, const std::string& name) {
  TempTrace file(name);
  Traced t;
  t.out = wrapper::runStandalone(spec, file.path);
  EXPECT_EQ(t.out.launch.outsideAccesses, 0u) << name;
  EXPECT_TRUE(t.out.launch.warnings.empty()) << name << ": " << t.out.launch.warnings.front();
  TraceReader reader(file.path);
  t.header = reader.header();
  std::vector<Record> records;
  while (reader.nextWorkItem(records)) t.items.push_back(records);
  return t;
}

// One expected record; `iterations` lists the enclosing loop counters, outermost first.
struct Want {
  AccessKind kind;
  uint32_t instruction;
  uint64_t address;
  uint32_t size;
  std::vector<uint32_t> iterations = {};
  uint8_t flags = 0;
};

inline void expectRecord(const Record& r, const Want& w, const std::string& where) {
  EXPECT_EQ(r.kind, uint8_t(w.kind)) << where;
  EXPECT_EQ(r.instruction, w.instruction) << where;
  EXPECT_EQ(r.address, w.address) << where;
  EXPECT_EQ(r.size, w.size) << where;
  EXPECT_EQ(r.flags, w.flags) << where;
  ASSERT_EQ(r.depth, w.iterations.size()) << where;
  for (size_t i = 0; i < w.iterations.size(); ++i)
    EXPECT_EQ(r.iterations[i], w.iterations[i]) << where << ", loop counter " << i;
}

inline void expectRecords(const std::vector<Record>& got, const std::vector<Want>& want,
                          const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i)
    expectRecord(got[i], want[i], where + ", record " + std::to_string(i));
}

template <typename T>
std::vector<T> contents(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace cltrace::kernels_test
