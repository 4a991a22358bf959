// Address-to-set mapping: linear (line address modulo the number of sets) and the Fermi XOR
// hash reverse-engineered by Nugteren et al. (HPCA 2014, section 5.1, figure 6).
//
// Fermi hash for 128-byte lines (a = byte address, s = set index):
//   s0 = a7 ^ a13   s1 = a8 ^ a14   s2 = a9 ^ a15   s3 = a10 ^ a17   s4 = a11 ^ a19
//   s5 = a12        (64 sets / 48 KB only; with 32 sets bit 12 is not used)
// The hash is applied to the line address (L = a >> log2(lineSize)): s[4:0] = L[4:0] ^
// {L12, L10, L8, L7, L6}, s5 = L5. For 128-byte lines this is exactly the byte-address form above;
// other line sizes shift the same pattern (as the paper's parameter sweep does).
#pragma once

#include <cstdint>

#include "cltrace/cachesim/config.h"

namespace cltrace::cachesim {

// Fermi XOR hash of a line address for 32 or 64 sets.
inline uint32_t fermiXorSet(uint64_t line, uint32_t sets) {
  uint32_t low = static_cast<uint32_t>(line & 31u);
  uint32_t high = static_cast<uint32_t>(((line >> 6) & 1u) | (((line >> 7) & 1u) << 1) |
                                        (((line >> 8) & 1u) << 2) | (((line >> 10) & 1u) << 3) |
                                        (((line >> 12) & 1u) << 4));
  uint32_t set = low ^ high;
  if (sets == 64) set |= static_cast<uint32_t>((line >> 5) & 1u) << 5;
  return set;
}

class SetIndexer {
 public:
  SetIndexer(SetIndexFunction function, uint32_t sets)
      : function_(function), sets_(sets), mask_(sets - 1), pow2_(sets != 0 && (sets & (sets - 1)) == 0) {
    // The hash reads line bits 0..12: bits 0..4 pass through, and what bits 5..12 add (the
    // XOR of bits 6, 7, 8, 10, 12 and, with 64 sets, s5) comes from a 256-entry table, which
    // is cheaper than gathering the bits one by one on every request.
    if (function_ == SetIndexFunction::FermiXor)
      for (uint32_t high = 0; high < 256; ++high) xorTable_[high] = static_cast<uint8_t>(fermiXorSet(uint64_t{high} << 5, sets_));
  }

  uint32_t operator()(uint64_t line) const {
    if (function_ == SetIndexFunction::FermiXor)
      return static_cast<uint32_t>(line & 31u) ^ xorTable_[(line >> 5) & 255u];
    return pow2_ ? static_cast<uint32_t>(line & mask_) : static_cast<uint32_t>(line % sets_);
  }

  SetIndexFunction function() const { return function_; }
  uint32_t sets() const { return sets_; }

 private:
  SetIndexFunction function_;
  uint32_t sets_;
  uint32_t mask_;
  bool pow2_;
  uint8_t xorTable_[256] = {};  // FermiXor: the set bits that line bits 5..12 give
};

// Set of a byte address for a given configuration (convenience for tests and plots).
inline uint32_t setOfAddress(const Config& config, uint64_t address) {
  uint32_t shift = 0;
  while ((1u << shift) < config.lineSize) ++shift;
  return SetIndexer(config.setIndex, config.sets())(address >> shift);
}

}  // namespace cltrace::cachesim
