#include "cltrace/cachesim/latency.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace cltrace::cachesim {

namespace {

// Jitter beyond this many cycles (a sigma near the doubles' limit) is held here, so that the
// fill cycle (issue cycle + minimum latency + jitter) cannot wrap.
constexpr double kMaxJitter = 4611686018427387904.0;  // 2^62

// round(x) for x >= 0, halves upwards, at most kMaxJitter. Below 2^52 the conversion truncates to
// floor(x) and x - floor(x) is exact; from 2^52 on x is an integer.
uint64_t roundNonNegative(double x) {
  if (!(x < kMaxJitter)) return static_cast<uint64_t>(kMaxJitter);
  if (!(x < 4503599627370496.0)) return static_cast<uint64_t>(x);
  const uint64_t whole = static_cast<uint64_t>(x);
  return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

}  // namespace

LatencyJitter::LatencyJitter(double sigma) : sigma_(sigma) {
  if (!(sigma > 0.0)) return;
  // Values 0 .. tail - 1 get entries of their own; P(jitter >= 9 sigma) is about 2e-19.
  const double explicitValues = std::ceil(9.0 * sigma) + 1.0;
  if (!(explicitValues + 1.0 <= kMaxEntries)) return;  // too wide: the polar method draws each
  tailEntry_ = static_cast<uint32_t>(explicitValues);
  entries_ = 2;
  indexBits_ = 1;
  while (entries_ < tailEntry_ + 1) {
    entries_ *= 2;
    ++indexBits_;
  }
  // Every SM of a run (and every run) has the same sigma: they share one table, so that the
  // host's caches hold one copy.
  static std::mutex mutex;
  static std::map<uint64_t, std::weak_ptr<const std::vector<Entry>>> tables;  // by sigma's bits
  uint64_t key;
  std::memcpy(&key, &sigma, sizeof key);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = tables.find(key); it != tables.end()) table_ = it->second.lock();
  if (!table_) {
    table_ = buildTable();
    for (auto it = tables.begin(); it != tables.end();) it = it->second.expired() ? tables.erase(it) : std::next(it);
    tables[key] = table_;
  }
  entry_ = table_->data();
}

std::shared_ptr<const std::vector<LatencyJitter::Entry>> LatencyJitter::buildTable() const {
  // Vose's construction: scale the probabilities by the table size, then pair each entry
  // below 1 with one above, which fills its rest.
  std::vector<double> scaled(entries_, 0.0);
  for (uint32_t k = 0; k < tailEntry_; ++k) scaled[k] = exactProbability(k) * entries_;
  scaled[tailEntry_] = std::erfc((tailEntry_ - 0.5) / (sigma_ * std::sqrt(2.0))) * entries_;
  auto table = std::make_shared<std::vector<Entry>>(entries_);
  std::vector<Entry>& t = *table;
  std::vector<uint32_t> small, large;
  for (uint32_t i = 0; i < entries_; ++i) {
    t[i] = Entry{1.0, i};
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back(), l = large.back();
    small.pop_back();
    t[s] = Entry{scaled[s], l};
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left holds 1 up to rounding: such entries always give themselves (keep = 1).
  return table;
}

double LatencyJitter::exactProbability(uint64_t k) const {
  if (!(sigma_ > 0.0)) return k == 0 ? 1.0 : 0.0;
  const double scale = sigma_ * std::sqrt(2.0);  // P(sigma |Z| < x) = erf(x / scale)
  if (k == 0) return std::erf(0.5 / scale);
  // Differences of erfc keep their precision far into the tail, where erf rounds to 1.
  return std::erfc((static_cast<double>(k) - 0.5) / scale) - std::erfc((static_cast<double>(k) + 0.5) / scale);
}

double LatencyJitter::tableProbability(uint32_t k) const {
  if (k >= entries_) return 0.0;
  double mass = entry_[k].keep;
  for (uint32_t i = 0; i < entries_; ++i)
    if (entry_[i].alias == k && i != k) mass += 1.0 - entry_[i].keep;
  return mass / entries_;
}

uint64_t LatencyJitter::roundedHalfNormal(Rng& rng) { return roundNonNegative(rng.halfNormal(sigma_)); }

uint64_t LatencyJitter::sampleTail(Rng& rng) {
  // Marsaglia's method for the normal tail beyond t: x = sqrt(t^2 - 2 ln u1), kept when
  // u2 x <= t. The value then rounds to tailEntry_ or more.
  const double t = (tailEntry_ - 0.5) / sigma_;
  for (;;) {
    const double u1 = 1.0 - rng.uniform();  // (0, 1]
    const double x = std::sqrt(t * t - 2.0 * std::log(u1));
    if (rng.uniform() * x <= t) return roundNonNegative(sigma_ * x);
  }
}

}  // namespace cltrace::cachesim
