#include "cltrace/wrapper/local_size.h"

#include <algorithm>

namespace cltrace::wrapper {

std::array<uint64_t, 3> chooseLocalSize(const NDRange& range, uint64_t maxWorkGroupSize) {
  uint64_t budget = std::min<uint64_t>(256, std::max<uint64_t>(maxWorkGroupSize, 1));
  std::array<uint64_t, 3> local{1, 1, 1};
  for (uint32_t d = 0; d < range.dims && d < 3; ++d) {
    uint64_t best = 1;
    for (uint64_t c = std::min(budget, range.global[d]); c >= 1; --c)
      if (range.global[d] % c == 0) {
        best = c;
        break;
      }
    local[d] = best;
    budget /= best;
  }
  return local;
}

uint64_t maxWorkGroupSize(cl_device_id device) {
  size_t size = 0;
  check(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof size, &size, nullptr),
        "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
  return size;
}

}  // namespace cltrace::wrapper
