#include "cltrace/plot/raster_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "cltrace/guarded_json.h"

#include "cltrace/scheduler/config.h"

namespace cltrace::plot {
namespace {

void putU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
uint32_t getU32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

void writeRasterFile(const std::string& path, const PlotData& data, const RenderOptions& render) {
  const uint32_t binsX = data.panels.empty() ? 1 : data.panels.front().raster.binsX();
  const uint32_t binsY = data.panels.empty() ? 1 : data.panels.front().raster.binsY();
  const uint64_t panelBytes = 8ull * binsX * binsY;

  nlohmann::json meta;
  meta["version"] = 1;
  meta["kernel"] = data.kernelName;
  meta["color"] = colorByName(data.color);
  meta["color_label"] = colorByLabel(data.color);
  meta["value_min"] = data.valueMin;
  meta["value_max"] = data.valueMax;
  meta["width_px"] = render.widthPx;
  meta["height_px"] = render.heightPx;
  meta["title"] = render.title;
  meta["x_extent"] = data.xExtent;
  meta["y_extent"] = data.yExtent;
  meta["element_size"] = data.elementSize;
  meta["bins_x"] = binsX;
  meta["bins_y"] = binsY;
  meta["buffers"] = nlohmann::json::array();
  for (const StackedBuffer& b : data.buffers)
    meta["buffers"].push_back({{"name", b.name}, {"start", b.start}, {"elements", b.elements}});
  meta["panels"] = nlohmann::json::array();
  uint64_t offset = 0;
  for (const Panel& p : data.panels) {
    if (p.raster.binsX() != binsX || p.raster.binsY() != binsY)
      throw std::invalid_argument("plot: panels of one plot must have the same bins");
    meta["panels"].push_back({{"policy", sched::policyName(p.policy)},
                              {"points", p.stats.points},
                              {"outside", p.stats.outside},
                              {"misses", p.stats.misses},
                              {"unresolved", p.stats.unresolved},
                              {"offset", offset}});
    offset += panelBytes;
  }

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot create (" + std::strerror(errno) + ")");
  // Names come from the trace file, which may hold bytes that are not UTF-8: replaced (U+FFFD)
  // rather than refused by the JSON library.
  out << kRasterMagicLine << '\n' << meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  std::string buf;
  buf.reserve(size_t(panelBytes));
  for (const Panel& p : data.panels) {
    buf.clear();
    const Raster& r = p.raster;
    for (uint64_t c : r.counts())
      putU32(buf, uint32_t(std::min<uint64_t>(c, std::numeric_limits<uint32_t>::max())));
    for (uint32_t by = 0; by < binsY; ++by)
      for (uint32_t bx = 0; bx < binsX; ++bx) {
        const float v = float(r.mean(bx, by));
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        putU32(buf, bits);
      }
    out.write(buf.data(), std::streamsize(buf.size()));
  }
  out.close();
  if (!out) throw std::runtime_error(path + ": write failed");
}

RasterFileContents readRasterFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&path](const std::string& what) { return std::runtime_error(path + ": " + what); };
  const size_t eol1 = data.find('\n');
  if (eol1 == std::string::npos || data.compare(0, eol1, kRasterMagicLine) != 0)
    throw fail("not a cltrace raster file");
  const size_t eol2 = data.find('\n', eol1 + 1);
  if (eol2 == std::string::npos) throw fail("truncated metadata");
  RasterFileContents c;
  c.metadata = data.substr(eol1 + 1, eol2 - eol1 - 1);
  const size_t body = eol2 + 1;
  const size_t bodyBytes = data.size() - body;
  std::vector<uint64_t> offsets;
  try {
    // cltrace writes a flat object; a deep one would recurse off the stack in an error message.
    const nlohmann::json meta = parseGuardedJson<nlohmann::json>(
        c.metadata, 8, "nested too deep", [](const std::string& key) { return "key '" + key + "' given twice"; });
    c.binsX = meta.at("bins_x").get<uint32_t>();
    c.binsY = meta.at("bins_y").get<uint32_t>();
    for (const auto& panel : meta.at("panels")) offsets.push_back(panel.at("offset").get<uint64_t>());
  } catch (const nlohmann::json::exception& e) {
    throw fail("bad metadata: " + jsonErrorText(e));
  } catch (const std::invalid_argument& e) {
    throw fail(std::string("bad metadata: ") + e.what());
  }
  // Each panel is a count and a value (4 bytes each) per bin; the sizes are checked against
  // the file before anything is allocated or read, without overflowing.
  const uint64_t n = uint64_t(c.binsX) * c.binsY;
  if (n > bodyBytes / 8) throw fail("truncated body");
  for (const uint64_t offset : offsets) {
    if (offset > bodyBytes - 8 * n) throw fail("truncated body");
    const auto* p = reinterpret_cast<const unsigned char*>(data.data()) + body + offset;
    RasterFileContents::PanelGrid g;
    g.counts.resize(n);
    g.values.resize(n);
    for (size_t i = 0; i < n; ++i) g.counts[i] = getU32(p + 4 * i);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t bits = getU32(p + 4 * (n + i));
      std::memcpy(&g.values[i], &bits, 4);
    }
    c.panels.push_back(std::move(g));
  }
  uint64_t panelBytes = 0;
  if (__builtin_mul_overflow(8 * n, uint64_t{c.panels.size()}, &panelBytes) || panelBytes != bodyBytes)
    throw fail("unexpected bytes after the body");
  return c;
}

}  // namespace cltrace::plot
