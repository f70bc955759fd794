"""Plots stress/results/crowd_scaling.csv as an SVG: agents/ms and ms per frame (total and
per pass) against the agent count, log-scaled N. No third-party packages."""
import csv
import math
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
n = [float(r["agents"]) for r in rows]
series_left = {"agents/ms": [float(r["agents_per_ms"]) for r in rows]}
passes = ["schedule", "follow", "slope", "neighbours", "avoid", "move", "separate", "feedback"]
series_right = {"frame (median)": [float(r["ms_per_frame_median"]) for r in rows]}
for p in passes:
    if p + "_ms" in rows[0]:
        series_right[p] = [float(r[p + "_ms"]) for r in rows]
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"]
W, H, M = 520, 300, 50


def panel(x0, title, series, log_y):
    xs = [math.log10(v) for v in n]
    lo_x, hi_x = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    values = [v for s in series.values() for v in s if v > 0]
    lo_y = math.log10(min(values)) if log_y else 0.0
    hi_y = math.log10(max(values)) if log_y else max(values) * 1.1
    if hi_y <= lo_y:
        hi_y = lo_y + 1
    px = lambda v: x0 + M + (math.log10(v) - lo_x) / (hi_x - lo_x) * (W - 2 * M)
    py = lambda v: H - M - ((math.log10(v) if log_y else v) - lo_y) / (hi_y - lo_y) * (H - 2 * M)
    parts = [f'<text x="{x0 + W / 2}" y="20" text-anchor="middle" font-size="13">{title}</text>',
             f'<rect x="{x0 + M}" y="{M}" width="{W - 2 * M}" height="{H - 2 * M}" fill="none" stroke="#999"/>']
    for v in n:
        parts.append(f'<text x="{px(v):.1f}" y="{H - M + 15}" text-anchor="middle" font-size="10">{int(v) // 1000}k</text>')
    for i, (name, ys) in enumerate(series.items()):
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(n, ys) if y > 0)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colours[i % len(colours)]}" stroke-width="2"/>')
        parts.append(f'<text x="{x0 + M + 5}" y="{M + 14 + 13 * i}" font-size="11" fill="{colours[i % len(colours)]}">{name}</text>')
    for frac in (0.0, 0.5, 1.0):
        y_value = lo_y + frac * (hi_y - lo_y)
        label = 10 ** y_value if log_y else y_value
        parts.append(f'<text x="{x0 + M - 4}" y="{H - M - frac * (H - 2 * M) + 4:.1f}" text-anchor="end" font-size="10">{label:.3g}</text>')
    return parts


svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{H}"><rect width="100%" height="100%" fill="white"/>']
svg += panel(0, "agents per ms (higher is better)", series_left, False)
svg += panel(W, "ms per frame, median, total and per pass (log)", series_right, True)
svg.append("</svg>")
open(out, "w").write("\n".join(svg))
