#include "cltrace/scheduler/source.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace cltrace::sched {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("scheduler: " + what);
}

std::string idText(const std::array<uint64_t, 3>& id) {
  return "(" + std::to_string(id[0]) + ", " + std::to_string(id[1]) + ", " + std::to_string(id[2]) +
         ")";
}

}  // namespace

void validateRange(const NDRange& range) {
  if (range.dims < 1 || range.dims > 3)
    fail("NDRange dims must be 1, 2 or 3 (got " + std::to_string(range.dims) + ")");
  for (int d = 0; d < 3; ++d) {
    const std::string dim = std::to_string(d);
    if (range.global[d] == 0) fail("NDRange global size " + dim + " is 0");
    if (range.local[d] == 0) fail("NDRange local size " + dim + " is 0");
    if (range.global[d] % range.local[d] != 0)
      fail("NDRange global size " + dim + " (" + std::to_string(range.global[d]) +
           ") is not a multiple of the local size (" + std::to_string(range.local[d]) +
           "): non-uniform workgroups are not supported");
  }
  // The rest as trace files are checked: the last global id fits, unused dimensions are plain.
  if (const std::string problem = rangeProblem(range); !problem.empty()) fail("NDRange: " + problem);
  if (range.workgroupSize() > 0xffffffffull)
    fail("workgroup size " + std::to_string(range.workgroupSize()) + " is too large");
}

uint64_t fileOrderIndex(const NDRange& range, const std::array<uint64_t, 3>& globalId) {
  std::array<uint64_t, 3> group{}, local{};
  for (int d = 0; d < 3; ++d) {
    if (globalId[d] < range.offset[d] || globalId[d] - range.offset[d] >= range.global[d])
      fail("work-item " + idText(globalId) + " lies outside the NDRange");
    const uint64_t rel = globalId[d] - range.offset[d];
    group[d] = rel / range.local[d];
    local[d] = rel % range.local[d];
  }
  const auto groups = range.groups();
  const uint64_t groupLinear = (group[2] * groups[1] + group[1]) * groups[0] + group[0];
  const uint64_t localLinear = (local[2] * range.local[1] + local[1]) * range.local[0] + local[0];
  return groupLinear * range.workgroupSize() + localLinear;
}

MemoryWorkgroupSource::MemoryWorkgroupSource(const NDRange& range, std::vector<WorkItemTrace> items,
                                             std::string kernelName)
    : range_(range), kernelName_(std::move(kernelName)) {
  validateRange(range_);
  items_.resize(range_.workItems());
  std::vector<bool> seen(items_.size(), false);
  for (auto& item : items) {
    const uint64_t index = fileOrderIndex(range_, item.globalId);
    if (seen[index]) fail("work-item " + idText(item.globalId) + " is given twice");
    seen[index] = true;
    items_[index] = std::move(item.records);
  }
}

MemoryWorkgroupSource::MemoryWorkgroupSource(const NDRange& range,
                                             const std::vector<std::vector<Record>>& fileOrder,
                                             std::string kernelName)
    : range_(range), kernelName_(std::move(kernelName)), items_(fileOrder) {
  validateRange(range_);
  if (items_.size() != range_.workItems())
    fail("in-memory trace has " + std::to_string(items_.size()) + " work-items, the NDRange " +
         std::to_string(range_.workItems()));
}

bool MemoryWorkgroupSource::nextWorkgroup(WorkgroupTrace& out) {
  if (next_ >= range_.workgroups()) return false;
  const uint64_t size = range_.workgroupSize();
  out.clear();
  out.id = next_;
  out.offsets.push_back(0);
  for (uint64_t t = 0; t < size; ++t) {
    const auto& recs = items_[next_ * size + t];
    out.records.insert(out.records.end(), recs.begin(), recs.end());
    out.offsets.push_back(out.records.size());
  }
  ++next_;
  return true;
}

}  // namespace cltrace::sched
