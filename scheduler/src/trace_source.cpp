#include "cltrace/scheduler/trace_source.h"

#include <stdexcept>
#include <string>

namespace cltrace::sched {

TraceReaderSource::TraceReaderSource(TraceReader& reader) : reader_(&reader) { init(); }

TraceReaderSource::TraceReaderSource(const std::string& path)
    : owned_(std::make_unique<TraceReader>(path)), reader_(owned_.get()) {
  init();
}

void TraceReaderSource::init() {
  const TraceHeader& header = reader_->header();
  validateRange(header.range);
  if (header.workItemCount != header.range.workItems())
    throw std::invalid_argument("scheduler: trace has " + std::to_string(header.workItemCount) +
                                " work-items but its NDRange has " +
                                std::to_string(header.range.workItems()));
  groups_ = header.range.workgroups();
}

TraceReaderSource::~TraceReaderSource() = default;

const NDRange& TraceReaderSource::range() const { return reader_->header().range; }

std::string TraceReaderSource::kernelName() const { return reader_->header().kernelName; }

const LoopNest* TraceReaderSource::loopNest() const {
  const std::optional<LoopNest>& loops = reader_->header().loops;
  return loops ? &*loops : nullptr;
}

bool TraceReaderSource::nextWorkgroup(WorkgroupTrace& out) {
  if (nextGroup_ >= groups_) return false;
  const uint64_t size = range().workgroupSize();
  out.clear();
  out.id = nextGroup_;
  out.offsets.push_back(0);
  for (uint64_t t = 0; t < size; ++t) {
    if (!reader_->appendNextWorkItem(out.records))
      throw TraceFileError("trace ends inside workgroup " + std::to_string(nextGroup_) +
                           " (after " + std::to_string(nextGroup_ * size + t) + " of " +
                           std::to_string(groups_ * size) + " work-items)");
    out.offsets.push_back(out.records.size());
  }
  // After the last workgroup, the reader checks the end of the body (trailing data, a
  // compressed frame's end and checksum) when asked for a work-item beyond the last.
  if (++nextGroup_ == groups_) {
    std::vector<Record> none;
    reader_->nextWorkItem(none);
  }
  return true;
}

}  // namespace cltrace::sched
