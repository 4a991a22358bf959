// The jitter of the miss latency: round(sigma * |Z|) cycles for a standard normal Z (the
// half-normal of the paper's latency model, rounded to whole cycles, halves upwards).
//
// The jitter is a whole number, so it is drawn from its discrete distribution directly:
//   P(0) = P(sigma |Z| < 1/2),  P(k) = P(k - 1/2 <= sigma |Z| < k + 1/2)  for k >= 1,
// through an alias table (Walker/Vose): one generator draw, one table entry and one compare a
// sample, against a logarithm, a square root and a division per two samples for the polar
// method. The table covers k up to about 9 sigma; its last entry stands for the rest of the
// tail (probability below 1e-18), which is then drawn exactly with Marsaglia's normal-tail
// method. A sigma too large for a table of kMaxEntries draws every sample by the polar method
// (Rng::halfNormal) and rounds it. Either way the samples follow the same distribution and
// depend only on the generator's seed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cltrace/cachesim/rng.h"

namespace cltrace::cachesim {

class LatencyJitter {
 public:
  static constexpr uint32_t kMaxEntries = 2048;  // a power of two

  explicit LatencyJitter(double sigma);

  // One jitter value in whole cycles.
  uint64_t sample(Rng& rng) {
    if (sigma_ <= 0.0) return 0;
    if (entries_ == 0) return roundedHalfNormal(rng);
    // The top bits pick an entry, the 53 below them are the uniform of the entry's coin (the
    // table has a power-of-two size, so the pick is exactly uniform).
    const uint64_t r = rng.next();
    const uint32_t i = static_cast<uint32_t>(r >> (64 - indexBits_));
    const double coin = static_cast<double>((r << indexBits_) >> 11) * 0x1.0p-53;
    const Entry& e = entry_[i];
    const uint32_t k = coin < e.keep ? i : e.alias;
    if (k == tailEntry_) [[unlikely]]
      return sampleTail(rng);
    return k;
  }

  // For tests: the table's size (0 without a table) and the probability it gives value k
  // (k < size - 1; the last entry is the tail beyond), and the exact probability of k.
  uint32_t entries() const { return entries_; }
  // Jitters of one sigma share their table while any of them lives (the SMs of a run).
  bool sharesTableWith(const LatencyJitter& other) const { return table_ != nullptr && table_ == other.table_; }
  double tableProbability(uint32_t k) const;
  double exactProbability(uint64_t k) const;
  // A draw from the tail entry's values alone (what sample() does when it picks that entry).
  uint64_t sampleTail(Rng& rng);

 private:
  uint64_t roundedHalfNormal(Rng& rng);

  double sigma_;
  uint32_t entries_ = 0;    // table size (a power of two), 0: no table
  uint32_t indexBits_ = 0;  // log2(entries_)
  uint32_t tailEntry_ = 0;  // the entry that stands for values >= tailEntry_
  struct Entry {
    double keep;     // probability that the entry gives its own value (else `alias`)
    uint32_t alias;
  };
  std::shared_ptr<const std::vector<Entry>> buildTable() const;
  std::shared_ptr<const std::vector<Entry>> table_;  // shared by every jitter with this sigma
  const Entry* entry_ = nullptr;                      // table_'s entries
};

}  // namespace cltrace::cachesim
