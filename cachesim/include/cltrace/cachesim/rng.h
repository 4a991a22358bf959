// Small deterministic random number generator used by the cache simulator.
//
// The standard distributions (std::normal_distribution, ...) give different sequences on
// different standard libraries; the simulator's results must only depend on the seed, so it
// uses its own generator (SplitMix64) and its own half-normal sampling (Marsaglia's polar method).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace cltrace::cachesim {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n); n > 0.
  uint64_t below(uint64_t n) {
    // Multiply-shift; the bias for n << 2^64 is negligible for simulation purposes.
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

  // |N(0, sigma^2)|: the half-normal distribution of the paper's latency model. Marsaglia's
  // polar method; each round gives two independent normals, the second is kept for the next call.
  double halfNormal(double sigma) {
    if (sigma <= 0.0) return 0.0;
    if (haveSpare_) {
      haveSpare_ = false;
      return sigma * std::fabs(spare_);
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    haveSpare_ = true;
    return sigma * std::fabs(u * f);
  }

 private:
  uint64_t state_;
  double spare_ = 0.0;
  bool haveSpare_ = false;
};

// Mixes two values into one well-spread seed (for per-SM generators derived from a run seed).
inline uint64_t mixSeed(uint64_t a, uint64_t b) {
  Rng r(a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull));
  return r.next();
}

}  // namespace cltrace::cachesim
