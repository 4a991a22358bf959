// Helpers shared by the output writers and the reader (internal).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cltrace/scheduler/output.h"

namespace cltrace::sched::detail {

inline void storeLE32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline void storeLE64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint32_t loadLE32(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline uint64_t loadLE64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

std::unique_ptr<StepWriter> makeBinaryWriter(const std::string& path, const ScheduleInfo& info);

}  // namespace cltrace::sched::detail
