// WorkgroupSource over a trace file (TraceReader). Kept apart from the rest of the library so
// that the scheduler builds and tests without the trace file implementation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cltrace/scheduler/source.h"
#include "cltrace/trace_file.h"

namespace cltrace::sched {

class TraceReaderSource : public WorkgroupSource {
 public:
  // Reads workgroupSize() work-items per workgroup from `reader` (which must outlive this).
  // Throws std::invalid_argument when the header's NDRange cannot be scheduled or its
  // work-item count disagrees with the NDRange.
  explicit TraceReaderSource(TraceReader& reader);
  // Opens `path` and owns the reader. Throws TraceFileError / std::invalid_argument.
  explicit TraceReaderSource(const std::string& path);
  ~TraceReaderSource() override;

  const NDRange& range() const override;
  std::string kernelName() const override;
  const LoopNest* loopNest() const override;  // the header's loop table, if it has one
  // Throws TraceFileError when the file ends inside a workgroup.
  bool nextWorkgroup(WorkgroupTrace& out) override;

 private:
  void init();

  std::unique_ptr<TraceReader> owned_;
  TraceReader* reader_;
  uint64_t nextGroup_ = 0;
  uint64_t groups_ = 0;
};

}  // namespace cltrace::sched
