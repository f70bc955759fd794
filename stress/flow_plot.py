"""Plots the flow suite's table (stress/flow_suite.py) as an SVG: per level a panel of
complete arrivals against coverage and one of overlapping pairs per frame against coverage
(log scale), waymark with avoidance, waymark without and DetourCrowd; points of one seed
joined. No third-party packages."""
import csv
import math
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
levels = []
for row in rows:
    if row["level"] not in levels:
        levels.append(row["level"])
SERIES = [  # (column suffix, label, colour)
    ("on", "waymark", "#1f77b4"),
    ("off", "waymark, avoidance off", "#aaaaaa"),
    ("detour", "DetourCrowd", "#d62728"),
]
W, H, M = 300, 230, 46


def panel(x0, y0, level, metric, log_y):
    picked = [r for r in rows if r["level"] == level]
    xs = [float(r["coverage"]) for r in picked]
    series = [(suffix, label, colour) for suffix, label, colour in SERIES
              if f"{metric}_{suffix}" in picked[0]]
    values = [float(r[f"{metric}_{s}"]) for r in picked for s, _, _ in series]
    positive = [v for v in values if v > 0] or [1.0]
    lo_x, hi_x = 0.0, max(xs) * 1.1
    if log_y:
        lo_y, hi_y = math.log10(min(positive)) - 0.1, math.log10(max(positive)) + 0.1
    else:
        lo_y, hi_y = 0.0, max(values) * 1.1 or 1.0
    px = lambda v: x0 + M + (v - lo_x) / (hi_x - lo_x) * (W - 1.4 * M)
    py = lambda v: y0 + H - M - (((math.log10(max(v, 10 ** lo_y)) if log_y else v) - lo_y)
                                 / (hi_y - lo_y) * (H - 1.7 * M))
    title = f"{level}: {'complete arrivals' if metric == 'arrivals' else 'overlapping pairs / frame'}"
    parts = [f'<text x="{x0 + W / 2}" y="{y0 + 16}" text-anchor="middle" font-size="12">{title}</text>',
             f'<line x1="{px(lo_x)}" y1="{py(10 ** lo_y if log_y else lo_y)}" x2="{px(hi_x)}" '
             f'y2="{py(10 ** lo_y if log_y else lo_y)}" stroke="black"/>',
             f'<line x1="{px(lo_x)}" y1="{y0 + 24}" x2="{px(lo_x)}" '
             f'y2="{py(10 ** lo_y if log_y else lo_y)}" stroke="black"/>']
    for tick in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        if tick <= hi_x:
            parts.append(f'<text x="{px(tick)}" y="{y0 + H - M + 14}" text-anchor="middle" '
                         f'font-size="9">{tick:.0%}</text>')
    for k in range(5):
        value = lo_y + (hi_y - lo_y) * k / 4
        shown = 10 ** value if log_y else value
        parts.append(f'<text x="{x0 + M - 4}" y="{py(shown) + 3}" text-anchor="end" '
                     f'font-size="9">{shown:.0f}</text>')
    for suffix, _, colour in series:
        for seed in sorted({r["seed"] for r in picked}):
            run = sorted((float(r["coverage"]), float(r[f"{metric}_{suffix}"]))
                         for r in picked if r["seed"] == seed)
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in run)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                         f'stroke-width="1.2"/>')
            for x, y in run:
                parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" '
                             f'fill="{colour}"/>')
    return parts


parts = []
for column, level in enumerate(levels):
    parts += panel(column * W, 0, level, "arrivals", False)
    parts += panel(column * W, H, level, "pairs", True)
legend_y = 2 * H + 14
for index, (_, label, colour) in enumerate(SERIES):
    x = 20 + index * 220
    parts.append(f'<circle cx="{x}" cy="{legend_y - 4}" r="4" fill="{colour}"/>')
    parts.append(f'<text x="{x + 10}" y="{legend_y}" font-size="12">{label}</text>')
parts.append(f'<text x="{20 + 3 * 220}" y="{legend_y}" font-size="11">x: share of the walkable '
             f'area covered by bodies; 1,800 frames at 1/30 s</text>')
width, height = max(1, len(levels)) * W, 2 * H + 26
svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
       f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>'
       + "".join(parts) + "</svg>\n")
open(out, "w").write(svg)
