#!/usr/bin/env python3
"""Render a cltrace raster file as PNG or SVG: one panel per scheduling policy, side by side.

Usage: plot_trace.py RASTER -o OUT.png|OUT.svg [--width PX --height PX]

`cltrace plot` writes RASTER (density grids computed in C++; format in
plot/include/cltrace/plot/raster_file.h) and calls this script; it can also be run by hand on a
raster kept with `cltrace plot --raster FILE`. Each panel shows element offset (y) against
execution order (x), as in figure 8.1 of the Crawford thesis. A bin is coloured with the mean
colour value of its points (thread, warp or workgroup id); empty bins stay white. For the hit
colouring, bins whose points all hit are drawn in light blue and bins with misses are overlaid in
yellow-orange to red by their miss fraction. Sparse panels draw each bin a little wider (--spread)
so single points stay visible.

The image has exactly the requested size in pixels (SVG: the root element's width and height).
Needs numpy and matplotlib (Debian: apt-get install python3-matplotlib python3-numpy).
"""

import argparse
import copy
import json
import os
import re
import sys

MAGIC = b"CLTRACE-RASTER 1"
DPI = 100
# Axes layout (fractions of the figure); plot/src/plot.cpp suggestBins() assumes the same.
LEFT, RIGHT, BOTTOM, TOP, GAP = 0.06, 0.89, 0.12, 0.88, 0.08


def fail(message):
    print(f"plot_trace.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def read_raster(path, np):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    parts = data.split(b"\n", 2)
    if len(parts) != 3 or parts[0] != MAGIC:
        fail(f"{path}: not a cltrace raster file")
    try:
        meta = json.loads(parts[1].decode("utf-8"))
    except ValueError as e:
        fail(f"{path}: bad metadata ({e})")
    body = parts[2]
    try:
        bx, by = int(meta["bins_x"]), int(meta["bins_y"])
        offsets = [int(p["offset"]) for p in meta["panels"]]
    except (KeyError, TypeError, ValueError) as e:
        fail(f"{path}: bad metadata (missing or malformed {e})")
    if bx < 0 or by < 0 or any(off < 0 for off in offsets):
        fail(f"{path}: bad metadata (negative size or offset)")
    n = bx * by
    panels = []
    for p, off in zip(meta["panels"], offsets):
        if off + 8 * n > len(body):
            fail(f"{path}: truncated body")
        counts = np.frombuffer(body, dtype="<u4", count=n, offset=off).reshape(by, bx)
        values = np.frombuffer(body, dtype="<f4", count=n, offset=off + 4 * n).reshape(by, bx)
        panels.append((p, counts, values))
    return meta, panels


def spread(np, occupied, values, radius):
    """Draws each occupied bin `radius` bins wider: empty bins nearby take the nearest value."""
    if radius <= 0:
        return occupied, values
    h, w = occupied.shape
    out_occ, out_val = occupied.copy(), values.copy()
    pad_occ, pad_val = np.pad(occupied, radius), np.pad(values, radius)
    offsets = [(dy, dx) for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1)
               if (dy, dx) != (0, 0)]
    offsets.sort(key=lambda o: (o[0] * o[0] + o[1] * o[1], o))
    for dy, dx in offsets:
        src_occ = pad_occ[radius + dy:radius + dy + h, radius + dx:radius + dx + w]
        src_val = pad_val[radius + dy:radius + dy + h, radius + dx:radius + dx + w]
        fill = src_occ & ~out_occ
        out_val[fill] = src_val[fill]
        out_occ |= fill
    return out_occ, out_val


def auto_radius(np, panels):
    """Sparse plots (few points per pixel) get bigger marks so that single points stay visible."""
    total = sum(c.size for _, c, _ in panels) or 1
    used = sum(int(np.count_nonzero(c)) for _, c, _ in panels) / total
    return 2 if used < 0.02 else 1 if used < 0.1 else 0


def main():
    ap = argparse.ArgumentParser(description="Render a cltrace raster file (PNG or SVG).")
    ap.add_argument("raster")
    ap.add_argument("-o", "--output", required=True, help="output file, .png or .svg")
    ap.add_argument("--width", type=int, help="pixels (default: the raster's width_px)")
    ap.add_argument("--height", type=int, help="pixels (default: the raster's height_px)")
    ap.add_argument("--spread", type=int, default=-1,
                    help="draw each non-empty bin N bins wider (default: 2 when under 2%% of the "
                         "bins hold points, 1 under 10%%, else 0)")
    args = ap.parse_args()

    # From the name's last dot, as cltrace plot reads it (a file named ".png" is a PNG; splitext
    # would call it a name without an extension).
    name = os.path.basename(args.output)
    ext = name[name.rfind("."):].lower() if "." in name else ""
    if ext not in (".png", ".svg"):
        fail(f"{args.output}: output must end in .png or .svg")
    try:
        import numpy as np
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LinearSegmentedColormap, ListedColormap, Normalize
        from matplotlib.patches import Patch
        from matplotlib.transforms import blended_transform_factory
    except ImportError as e:
        fail(f"{e}; install python3-matplotlib and python3-numpy "
             "(apt-get install python3-matplotlib python3-numpy) or run scripts/setup.sh")

    meta, panels = read_raster(args.raster, np)
    width = args.width or int(meta.get("width_px", 1600))
    height = args.height or int(meta.get("height_px", 600))
    if width < 16 or height < 16:
        fail("width and height must be at least 16 pixels")

    plt.rcParams["font.size"] = max(5.0, min(10.0, height / 60.0, width / 120.0))
    # SVG element ids (clip paths and the like) are random unless salted: the same plot twice
    # would differ.
    plt.rcParams["svg.hashsalt"] = "cltrace"
    # A quarter pixel more: the backends truncate or round the size, both give the request.
    fig = plt.figure(figsize=((width + 0.25) / DPI, (height + 0.25) / DPI), dpi=DPI)
    fig.patch.set_facecolor("white")

    n = max(1, len(panels))
    pw = (RIGHT - LEFT) / (n + GAP * (n - 1))
    x_extent = max(1, int(meta["x_extent"]))
    y_extent = max(1, int(meta["y_extent"]))
    extent = [0, x_extent, 0, y_extent]
    hit = meta["color"] == "hit"
    vmin, vmax = float(meta["value_min"]), float(meta["value_max"])
    if vmax <= vmin:
        vmax = vmin + 1.0

    if hit:
        cmap = LinearSegmentedColormap.from_list("miss", ["#fec44f", "#f03b20", "#bd0026"])
        norm = Normalize(0.0, 1.0)
        hit_cmap = ListedColormap(["#9ecae1"])
        hit_cmap.set_bad(alpha=0.0)
    else:
        cmap = copy.copy(plt.get_cmap("turbo"))
        norm = Normalize(vmin, vmax)
    cmap.set_bad(alpha=0.0)

    radius = args.spread if args.spread >= 0 else auto_radius(np, panels)
    # Room above the panels for the figure's title (2% from the top) and the panels' (two lines
    # with --color hit, 6 points above the axes); titles are "large" (1.2 x the font, lines of
    # 1.2 x that): a fixed fraction of a short figure was too little.
    font_px = plt.rcParams["font.size"] * DPI / 72.0
    title_lines = 1 + (2 if hit else 1)
    above = 0.02 * height + 1.44 * font_px * title_lines + 6 * DPI / 72.0 + 0.3 * font_px
    top = max(min(TOP, 1.0 - above / height), BOTTOM + 0.05)  # a tiny figure keeps some panel
    image = None
    for i, (p, counts, values) in enumerate(panels):
        ax = fig.add_axes([LEFT + i * pw * (1 + GAP), BOTTOM, pw, top - BOTTOM])
        values = values.astype(np.float64)
        kw = dict(origin="lower", extent=extent, aspect="auto", interpolation="nearest")
        if hit:
            occ, _ = spread(np, counts > 0, np.zeros(values.shape), radius)
            ax.imshow(np.ma.masked_where(~occ, np.zeros(values.shape)), cmap=hit_cmap,
                      vmin=0, vmax=1, **kw)
            occ, val = spread(np, (counts > 0) & (values > 0), values, radius)
            image = ax.imshow(np.ma.masked_where(~occ, val), cmap=cmap, norm=norm, **kw)
        else:
            occ, val = spread(np, counts > 0, values, radius)
            image = ax.imshow(np.ma.masked_where(~occ, val), cmap=cmap, norm=norm, **kw)
        title = p["policy"]
        if hit and int(p["points"]) > 0:
            inside = int(p["points"]) - int(p["outside"])
            # Per lane access, stores included (under write-through no-allocate every store
            # misses): not the simulator's read miss rate per line request.
            title += f"\n{100.0 * int(p['misses']) / max(1, inside):.1f}% of lane accesses miss"
        ax.set_title(title)
        ax.set_xlabel("execution order")
        ax.set_xlim(0, x_extent)
        ax.set_ylim(0, y_extent)
        ax.ticklabel_format(axis="both", style="sci", scilimits=(-4, 5), useOffset=False)
        # Buffer boundaries; names in the first panel.
        trans = blended_transform_factory(ax.transAxes, ax.transData)
        for b in meta["buffers"]:
            start, elements = int(b["start"]), int(b["elements"])
            if start > 0:
                ax.axhline(start, color="0.55", linewidth=0.6, linestyle="--")
            if i == 0 and elements > 0:
                ax.text(0.01, start + elements / 2.0, b["name"], transform=trans, fontsize="small",
                        color="0.3", va="center", ha="left", alpha=0.8)
        if i == 0:
            ax.set_ylabel(f"element offset ({int(meta['element_size'])}-byte elements)")
        else:
            ax.tick_params(labelleft=False)

    cax = fig.add_axes([RIGHT + 0.015, BOTTOM, 0.012, top - BOTTOM])
    if image is None:
        from matplotlib.cm import ScalarMappable
        image = ScalarMappable(norm=norm, cmap=cmap)
    bar = fig.colorbar(image, cax=cax)
    bar.set_label(meta["color_label"])
    if hit:
        fig.legend(handles=[Patch(color="#9ecae1", label="all hit"),
                            Patch(color="#f03b20", label="misses")],
                   loc="upper right", ncol=2, frameon=False, fontsize="small")
    title = meta.get("title") or f"{meta['kernel'] or 'kernel'}: coloured by {meta['color']}"
    fig.suptitle(title)

    try:
        if ext == ".png":
            fig.savefig(args.output, dpi=DPI, format="png", metadata={"Software": None})
        else:
            fig.savefig(args.output, format="svg", metadata={"Date": None})
    except OSError as e:
        fail(f"{args.output}: {e.strerror}")
    plt.close(fig)
    if ext == ".svg":
        # matplotlib writes the size in points; state it in pixels (the viewBox keeps the drawing).
        with open(args.output, "r", encoding="utf-8") as f:
            svg = f.read()
        head = re.search(r"<svg\b[^>]*>", svg)
        if head:
            tag = re.sub(r'\bwidth="[^"]*"', f'width="{width}px"', head.group(0), count=1)
            tag = re.sub(r'\bheight="[^"]*"', f'height="{height}px"', tag, count=1)
            svg = svg[:head.start()] + tag + svg[head.end():]
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)


if __name__ == "__main__":
    main()
