// Element offsets for plots: the buffers of a trace stacked one above the other (thesis figure
// 8.1: y = element offset, the input matrix at 0..1023, the output matrix at 1024..2047).
//
// Buffers are ordered by virtual base. Buffer i occupies the element offsets
// [start_i, start_i + ceil(size_i / elementSize)), where start_0 = 0 and each buffer starts where
// the previous one ends (the gaps of the virtual layout are dropped). An address `a` inside
// buffer i maps to start_i + (a - virtualBase_i) / elementSize. Buffer table entries with the
// same base and size (one buffer bound to two arguments) are one buffer; their names are joined
// with '/'. A buffer inside another (a sub-buffer inside its parent) takes no room of its own:
// its addresses are the parent's, named "parent (holding sub)". Empty buffers take no room.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cltrace/trace_file.h"

namespace cltrace::plot {

struct StackedBuffer {
  std::string name;
  uint64_t virtualBase = 0;
  uint64_t size = 0;      // bytes
  uint64_t start = 0;     // first element offset
  uint64_t elements = 0;  // ceil(size / elementSize)
};

class ElementMap {
 public:
  // Throws std::invalid_argument when elementSize is 0.
  explicit ElementMap(const std::vector<TraceBuffer>& buffers, uint32_t elementSize = 4);

  // Stacked element offset of `address`, or nothing when it lies outside every buffer.
  std::optional<uint64_t> elementOf(uint64_t address) const;
  // Total stacked extent (sum of the buffers' element counts).
  uint64_t extent() const { return extent_; }
  uint32_t elementSize() const { return elementSize_; }
  const std::vector<StackedBuffer>& buffers() const { return buffers_; }

 private:
  std::vector<StackedBuffer> buffers_;  // ascending virtualBase, non-empty
  uint32_t elementSize_;
  uint64_t extent_ = 0;
};

}  // namespace cltrace::plot
