// The local size cltrace picks when a program launches with a NULL local size.
#pragma once

#include <array>
#include <cstdint>

#include "cltrace/trace_file.h"
#include "cltrace/wrapper/opencl.h"

namespace cltrace::wrapper {

// Deterministic and device independent apart from `maxWorkGroupSize`: dimension 0 gets the
// largest divisor of its global size that is at most min(256, maxWorkGroupSize); each further
// dimension gets the largest divisor of its global size that keeps the product within that
// limit. (A Fermi-like 256 keeps warps full; the trace records the choice.)
std::array<uint64_t, 3> chooseLocalSize(const NDRange& range, uint64_t maxWorkGroupSize);

uint64_t maxWorkGroupSize(cl_device_id device);

}  // namespace cltrace::wrapper
