// The raster file: the density grids of a PlotData, handed from C++ to scripts/plot_trace.py.
//
// Layout (little-endian):
//   line 1   "CLTRACE-RASTER 1\n"
//   line 2   one JSON object (no newline inside) and "\n":
//            {"version": 1, "kernel": str, "color": "thread"|"warp"|"workgroup"|"hit",
//             "color_label": str, "value_min": num, "value_max": num,
//             "width_px": int, "height_px": int, "title": str,
//             "x_extent": int, "y_extent": int, "element_size": int,
//             "bins_x": int, "bins_y": int,
//             "buffers": [{"name": str, "start": int, "elements": int}],
//             "panels": [{"policy": str, "points": int, "outside": int, "misses": int,
//                         "unresolved": int, "offset": int}]}
//   body     for each panel, starting at byte `offset` counted from the first body byte:
//            counts  u32 x bins_y x bins_x (row-major, row 0 = lowest element offsets;
//                    a count above 2^32-1 is written as 2^32-1)
//            values  f32 x bins_y x bins_x (the bin's mean colour value; 0 when empty)
//            so a panel takes 8 * bins_x * bins_y bytes.
// Bin (c, r) covers execution indices [ceil(c * x_extent / bins_x), ceil((c+1) * x_extent /
// bins_x)) and element offsets likewise with y_extent / bins_y (raster.h).
//
// Python: head, meta, body = data.split(b"\n", 2); np.frombuffer(body, "<u4", n, offset).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cltrace/plot/plot.h"

namespace cltrace::plot {

inline constexpr char kRasterMagicLine[] = "CLTRACE-RASTER 1";

struct RenderOptions {
  uint32_t widthPx = 1600;
  uint32_t heightPx = 600;
  std::string title;  // empty: the script makes one from the kernel name and colouring
};

// Writes `data` to `path`. Throws std::runtime_error naming the file on failure.
void writeRasterFile(const std::string& path, const PlotData& data, const RenderOptions& render);

// What a raster file holds (for tests and tools).
struct RasterFileContents {
  std::string metadata;  // the JSON line
  struct PanelGrid {
    std::vector<uint32_t> counts;
    std::vector<float> values;
  };
  uint32_t binsX = 0, binsY = 0;
  std::vector<PanelGrid> panels;
};
// Reads and checks a raster file. Throws std::runtime_error naming the file and the problem.
RasterFileContents readRasterFile(const std::string& path);

}  // namespace cltrace::plot
