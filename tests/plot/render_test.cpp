// scripts/plot_trace.py on rasters made by the library: PNG and SVG of the requested size for
// every colouring. Skipped when no python3 with matplotlib and numpy is found ($CLTRACE_PYTHON,
// python3 in PATH, /usr/bin/python3 — the same order as `cltrace plot`).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/plot/plot.h"
#include "cltrace/plot/raster_file.h"
#include "test_util.h"  // tests/scheduler

#ifndef CLTRACE_PLOT_SCRIPT_PATH
#error "CLTRACE_PLOT_SCRIPT_PATH must name scripts/plot_trace.py"
#endif

namespace cltrace::plot {
namespace {

std::string findPython() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CLTRACE_PYTHON"); env && *env)
    candidates.push_back(env);
  else
    candidates = {"python3", "/usr/bin/python3"};
  for (const std::string& py : candidates)
    if (std::system((py + " -c 'import matplotlib, numpy' >/dev/null 2>&1").c_str()) == 0) return py;
  return {};
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Width and height from a PNG's IHDR chunk (big-endian at bytes 16..23).
bool pngSize(const std::string& png, uint32_t& w, uint32_t& h) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || png.compare(12, 4, "IHDR") != 0)
    return false;
  auto be = [&png](size_t i) {
    return uint32_t(uint8_t(png[i])) << 24 | uint32_t(uint8_t(png[i + 1])) << 16 |
           uint32_t(uint8_t(png[i + 2])) << 8 | uint32_t(uint8_t(png[i + 3]));
  };
  w = be(16);
  h = be(20);
  return true;
}

// A launch big enough to fill many bins: 32 x 32 transpose, 16 x 2 workgroups (thesis 8.1).
PlotData transposePlot(ColorBy color, uint32_t widthPx, uint32_t heightPx) {
  constexpr uint64_t in = 0x10000, out = 0x20000;
  const NDRange range = sched::test::range2(32, 32, 16, 2);
  auto trace = sched::test::buildTrace(range, [&](const sched::test::Item& it, sched::test::Emit& e) {
    const uint64_t x = it.global[0], y = it.global[1];
    e.load(0, in + 4 * (y * 32 + x));
    e.store(1, out + 4 * (x * 32 + y));
  });
  std::vector<TraceBuffer> buffers(2);
  buffers[0].name = "in";
  buffers[0].size = 4096;
  buffers[0].virtualBase = in;
  buffers[1].name = "out";
  buffers[1].size = 4096;
  buffers[1].virtualBase = out;
  PlotRequest r;
  r.color = color;
  r.cache = cachesim::Config::fromPreset("gtx480-16k");
  suggestBins(widthPx, heightPx, r.policies.size(), r.binsX, r.binsY);
  return rasterize([&] { return std::make_unique<sched::MemoryWorkgroupSource>(range, trace); }, buffers, r);
}

class Render : public ::testing::Test {
 protected:
  void SetUp() override {
    python_ = findPython();
    if (python_.empty()) GTEST_SKIP() << "no python3 with matplotlib and numpy";
    dir_ = ::testing::TempDir() + "plot_render_" + std::to_string(::getpid());
    ASSERT_EQ(std::system(("mkdir -p '" + dir_ + "'").c_str()), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  int render(const std::string& raster, const std::string& out, const std::string& extra = "") {
    return std::system((python_ + " '" CLTRACE_PLOT_SCRIPT_PATH "' '" + raster + "' -o '" + out + "' " +
                        extra + " >'" + dir_ + "/log' 2>&1")
                           .c_str());
  }
  std::string python_, dir_;
};

TEST_F(Render, PngAndSvgOfTheRequestedSizeForEveryColouring) {
  struct Size {
    uint32_t w, h;
  };
  for (ColorBy color : {ColorBy::Thread, ColorBy::Warp, ColorBy::Workgroup, ColorBy::Hit}) {
    for (Size s : {Size{800, 300}, Size{333, 217}}) {
      SCOPED_TRACE(std::string(colorByName(color)) + " " + std::to_string(s.w) + "x" + std::to_string(s.h));
      const std::string raster = dir_ + "/" + colorByName(color) + ".raster";
      writeRasterFile(raster, transposePlot(color, s.w, s.h), RenderOptions{s.w, s.h, {}});
      const std::string png = dir_ + "/" + colorByName(color) + ".png";
      ASSERT_EQ(render(raster, png), 0) << readFile(dir_ + "/log");
      uint32_t w = 0, h = 0;
      const std::string bytes = readFile(png);
      ASSERT_TRUE(pngSize(bytes, w, h)) << "not a PNG: " << png;
      EXPECT_EQ(w, s.w);
      EXPECT_EQ(h, s.h);
      EXPECT_GT(bytes.size(), 1000u);

      const std::string svg = dir_ + "/" + colorByName(color) + ".svg";
      ASSERT_EQ(render(raster, svg), 0) << readFile(dir_ + "/log");
      const std::string text = readFile(svg);
      const size_t head = text.find("<svg");
      ASSERT_NE(head, std::string::npos);
      const std::string tag = text.substr(head, text.find('>', head) - head);
      EXPECT_NE(tag.find("width=\"" + std::to_string(s.w) + "px\""), std::string::npos) << tag;
      EXPECT_NE(tag.find("height=\"" + std::to_string(s.h) + "px\""), std::string::npos) << tag;
      EXPECT_NE(text.find("<image"), std::string::npos);  // the panels are embedded rasters
    }
  }
}

TEST_F(Render, SizeOverrideAndErrors) {
  const std::string raster = dir_ + "/t.raster";
  writeRasterFile(raster, transposePlot(ColorBy::Thread, 640, 480), RenderOptions{640, 480, "title"});
  const std::string png = dir_ + "/t.png";
  ASSERT_EQ(render(raster, png, "--width 500 --height 200 --spread 0"), 0) << readFile(dir_ + "/log");
  uint32_t w = 0, h = 0;
  ASSERT_TRUE(pngSize(readFile(png), w, h));
  EXPECT_EQ(w, 500u);
  EXPECT_EQ(h, 200u);
  EXPECT_NE(render(raster, dir_ + "/t.jpg"), 0);
  EXPECT_NE(readFile(dir_ + "/log").find(".png or .svg"), std::string::npos);
  std::ofstream(dir_ + "/bad.raster") << "not a raster\n";
  EXPECT_NE(render(dir_ + "/bad.raster", png), 0);
  EXPECT_NE(readFile(dir_ + "/log").find("not a cltrace raster file"), std::string::npos);
}

TEST_F(Render, TraceWithoutAccessesGivesEmptyPanels) {
  const NDRange range = sched::test::range1(4, 2);
  auto trace = sched::test::buildTrace(range, [](const sched::test::Item&, sched::test::Emit& e) { e.barrier(0); });
  for (ColorBy color : {ColorBy::Thread, ColorBy::Hit}) {
    PlotRequest r;
    r.color = color;
    r.cache = cachesim::Config::fromPreset("gtx480-16k");
    PlotData d = rasterize([&] { return std::make_unique<sched::MemoryWorkgroupSource>(range, trace); }, {}, r);
    EXPECT_EQ(d.xExtent, 0u);
    EXPECT_EQ(d.panels.size(), 4u);
    const std::string raster = dir_ + "/empty.raster", png = dir_ + "/empty.png";
    writeRasterFile(raster, d, RenderOptions{300, 200, {}});
    ASSERT_EQ(render(raster, png), 0) << readFile(dir_ + "/log");
    uint32_t w = 0, h = 0;
    ASSERT_TRUE(pngSize(readFile(png), w, h));
    EXPECT_EQ(w, 300u);
    EXPECT_EQ(h, 200u);
  }
}

}  // namespace
}  // namespace cltrace::plot
