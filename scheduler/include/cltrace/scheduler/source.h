// Where the scheduler's input comes from: one workgroup at a time, in workgroup order.
//
// The scheduler holds only the workgroups resident on some SM; a source hands them over one by
// one (streaming). Implementations: MemoryWorkgroupSource (tests, small traces),
// TraceReaderSource (trace files, trace_source.h), or your own (e.g. a synthetic generator).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cltrace/loop_nest.h"
#include "cltrace/record.h"
#include "cltrace/trace_file.h"

namespace cltrace::sched {

// The records of every work-item of one workgroup.
struct WorkgroupTrace {
  uint64_t id = 0;  // linear workgroup id, x fastest
  // Records of all work-items, concatenated in local-id order (x fastest).
  std::vector<Record> records;
  // workgroupSize + 1 entries: the records of local thread t are
  // records[offsets[t] .. offsets[t + 1]).
  std::vector<uint64_t> offsets;

  uint32_t threadCount() const {
    return offsets.empty() ? 0 : static_cast<uint32_t>(offsets.size() - 1);
  }
  void clear() {
    records.clear();
    offsets.clear();
  }
};

class WorkgroupSource {
 public:
  virtual ~WorkgroupSource() = default;
  // The launch geometry; workgroupSize() work-items per workgroup.
  virtual const NDRange& range() const = 0;
  // Informational (written into scheduled files).
  virtual std::string kernelName() const { return {}; }
  // The kernel's loops (which loop encloses which instruction), when the source knows them:
  // the scheduler then compares two instructions' counters over exactly the loops enclosing
  // both; without them it infers those loops from the records (docs/scheduler.md). Valid for
  // as long as the source.
  virtual const LoopNest* loopNest() const { return nullptr; }
  // Fills `out` with the next workgroup (ids 0, 1, 2, ... in order) and returns true, or
  // returns false after the last one. `out` is reused between calls: keep its capacity.
  // Throws (e.g. TraceFileError) on bad input.
  virtual bool nextWorkgroup(WorkgroupTrace& out) = 0;
};

// One work-item's records, identified by its global id (offset included).
struct WorkItemTrace {
  std::array<uint64_t, 3> globalId{0, 0, 0};
  std::vector<Record> records;
};

// Holds a whole (small) launch in memory. Work-items may be given in any order; they are
// arranged into workgroup order. A work-item that is not given has no records. Throws
// std::invalid_argument for a global id outside the NDRange, a duplicate, or a bad NDRange.
class MemoryWorkgroupSource : public WorkgroupSource {
 public:
  MemoryWorkgroupSource(const NDRange& range, std::vector<WorkItemTrace> items,
                        std::string kernelName = {});
  // Work-items in file order (workgroups x fastest, then local id x fastest).
  MemoryWorkgroupSource(const NDRange& range, const std::vector<std::vector<Record>>& fileOrder,
                        std::string kernelName = {});

  const NDRange& range() const override { return range_; }
  std::string kernelName() const override { return kernelName_; }
  const LoopNest* loopNest() const override { return loopNest_ ? &*loopNest_ : nullptr; }
  bool nextWorkgroup(WorkgroupTrace& out) override;
  // Starts again from workgroup 0.
  void rewind() { next_ = 0; }
  // The kernel's loops, for records whose instructions they describe (none by default).
  void setLoopNest(LoopNest nest) { loopNest_ = std::move(nest); }

 private:
  NDRange range_;
  std::string kernelName_;
  std::optional<LoopNest> loopNest_;
  std::vector<std::vector<Record>> items_;  // file order
  uint64_t next_ = 0;
};

// Checks what the scheduler needs of an NDRange (dims 1..3, non-zero sizes, global divisible
// by local in every dimension); throws std::invalid_argument naming the problem.
void validateRange(const NDRange& range);

// File-order index of a work-item (workgroup-major, see trace_file.h) from its global id.
uint64_t fileOrderIndex(const NDRange& range, const std::array<uint64_t, 3>& globalId);

}  // namespace cltrace::sched
