#include "cltrace/plot/raster.h"

#include <stdexcept>

namespace cltrace::plot {

Raster::Raster(uint32_t binsX, uint32_t binsY, uint64_t xExtent, uint64_t yExtent)
    : binsX_(binsX), binsY_(binsY), xExtent_(xExtent == 0 ? 1 : xExtent),
      yExtent_(yExtent == 0 ? 1 : yExtent) {
  if (binsX == 0 || binsY == 0) throw std::invalid_argument("plot: bin counts must be > 0");
  const size_t n = size_t(binsX) * binsY;
  count_.assign(n, 0);
  sum_.assign(n, 0.0);
}

void Raster::merge(const Raster& o) {
  if (o.binsX_ != binsX_ || o.binsY_ != binsY_ || o.xExtent_ != xExtent_ || o.yExtent_ != yExtent_)
    throw std::invalid_argument("plot: cannot merge rasters of different geometry");
  for (size_t i = 0; i < count_.size(); ++i) {
    count_[i] += o.count_[i];
    sum_[i] += o.sum_[i];
  }
}

uint64_t Raster::total() const {
  uint64_t t = 0;
  for (uint64_t c : count_) t += c;
  return t;
}

}  // namespace cltrace::plot
