// A density grid of one plot panel: binsX x binsY bins over x in [0, xExtent) (execution order)
// and y in [0, yExtent) (element offset). Each bin holds the number of points that fell into it
// and the sum of their colour values; mean() is the value a renderer colours the bin with.
//
// Binning is integer and exact: bin x = floor(x * binsX / xExtent), bin y = floor(y * binsY /
// yExtent) (computed in 128 bits). Points beyond an extent are clamped into the last bin.
// Bins are stored row-major with row 0 = the lowest element offsets (the bottom of the plot).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cltrace::plot {

class Raster {
 public:
  Raster() = default;
  // Throws std::invalid_argument when a bin count is 0 (extents of 0 are treated as 1).
  Raster(uint32_t binsX, uint32_t binsY, uint64_t xExtent, uint64_t yExtent);

  void add(uint64_t x, uint64_t y, double value) {
    const size_t i = size_t(binY(y)) * binsX_ + binX(x);
    ++count_[i];
    sum_[i] += value;
  }
  // Adds every bin of `other` (same geometry; std::invalid_argument otherwise).
  void merge(const Raster& other);

  uint32_t binX(uint64_t x) const { return bin(x, binsX_, xExtent_); }
  uint32_t binY(uint64_t y) const { return bin(y, binsY_, yExtent_); }

  uint32_t binsX() const { return binsX_; }
  uint32_t binsY() const { return binsY_; }
  uint64_t xExtent() const { return xExtent_; }
  uint64_t yExtent() const { return yExtent_; }

  uint64_t count(uint32_t bx, uint32_t by) const { return count_[size_t(by) * binsX_ + bx]; }
  double sum(uint32_t bx, uint32_t by) const { return sum_[size_t(by) * binsX_ + bx]; }
  // sum / count; 0 for an empty bin.
  double mean(uint32_t bx, uint32_t by) const {
    const size_t i = size_t(by) * binsX_ + bx;
    return count_[i] == 0 ? 0.0 : sum_[i] / double(count_[i]);
  }
  uint64_t total() const;  // points added

  // Row-major (row 0 = lowest y) storage.
  const std::vector<uint64_t>& counts() const { return count_; }
  const std::vector<double>& sums() const { return sum_; }

 private:
  static uint32_t bin(uint64_t v, uint32_t bins, uint64_t extent) {
    if (v >= extent) return bins - 1;
    return static_cast<uint32_t>((static_cast<unsigned __int128>(v) * bins) / extent);
  }

  uint32_t binsX_ = 1, binsY_ = 1;
  uint64_t xExtent_ = 1, yExtent_ = 1;
  std::vector<uint64_t> count_ = std::vector<uint64_t>(1, 0);
  std::vector<double> sum_ = std::vector<double>(1, 0.0);
};

}  // namespace cltrace::plot
