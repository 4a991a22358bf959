#include "cltrace/plot/element_map.h"

#include <algorithm>
#include <stdexcept>

namespace cltrace::plot {

ElementMap::ElementMap(const std::vector<TraceBuffer>& buffers, uint32_t elementSize)
    : elementSize_(elementSize) {
  if (elementSize == 0) throw std::invalid_argument("plot: element size must be > 0");
  std::vector<const TraceBuffer*> sorted;
  for (const TraceBuffer& b : buffers)
    if (b.size > 0) sorted.push_back(&b);
  // By base, the larger first where two start together, so that a parent comes before the
  // sub-buffers inside it.
  std::stable_sort(sorted.begin(), sorted.end(), [](const TraceBuffer* a, const TraceBuffer* b) {
    return a->virtualBase != b->virtualBase ? a->virtualBase < b->virtualBase : a->size > b->size;
  });
  for (const TraceBuffer* b : sorted) {
    if (!buffers_.empty() && buffers_.back().virtualBase == b->virtualBase &&
        buffers_.back().size == b->size) {
      buffers_.back().name += "/" + b->name;  // one buffer bound to two arguments
      continue;
    }
    if (!buffers_.empty() && b->virtualBase - buffers_.back().virtualBase < buffers_.back().size &&
        b->size <= buffers_.back().size - (b->virtualBase - buffers_.back().virtualBase)) {
      buffers_.back().name += " (holding " + b->name + ")";  // a sub-buffer inside its parent
      continue;
    }
    StackedBuffer s;
    s.name = b->name;
    s.virtualBase = b->virtualBase;
    s.size = b->size;
    s.start = extent_;
    s.elements = b->size / elementSize + (b->size % elementSize != 0 ? 1 : 0);
    extent_ += s.elements;
    buffers_.push_back(std::move(s));
  }
}

std::optional<uint64_t> ElementMap::elementOf(uint64_t address) const {
  // Last buffer whose base is <= address.
  auto it = std::upper_bound(buffers_.begin(), buffers_.end(), address,
                             [](uint64_t a, const StackedBuffer& b) { return a < b.virtualBase; });
  if (it == buffers_.begin()) return std::nullopt;
  --it;
  const uint64_t offset = address - it->virtualBase;
  if (offset >= it->size) return std::nullopt;
  return it->start + offset / elementSize_;
}

}  // namespace cltrace::plot
