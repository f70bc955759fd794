"""The table of stress/detourcrowd/compare_bake_stages.sh: reads lines `recast JSON` and
`waymark JSON` (one per bake run, rounds in any order) on standard input and prints, per
stage, the median of Recast's and waymark's stage times and the median of their ratios."""

import json
import statistics
import sys

STAGES = ["rasterize", "filter", "compact", "erode", "distance_field", "regions",
          "contours", "polygon_mesh", "detail", "navmesh"]


def main():
    level = sys.argv[1]
    runs = {"recast": [], "waymark": []}
    for line in sys.stdin:
        side, text = line.split(" ", 1)
        runs[side].append(json.loads(text))
    recast_runs, waymark_runs = runs["recast"], runs["waymark"]
    print(f"{level}: {len(recast_runs)} rounds, medians (ms)")
    print(f"  {'stage':15} {'recast':>8} {'waymark':>8} {'ratio':>6}")
    rows = [(stage,
             [run["bake_stage_ms"].get(stage, 0.0) for run in recast_runs],
             [run["bake_stage_ms"].get(stage) for run in waymark_runs])
            for stage in STAGES]
    rows.append(("total", [run["bake_ms"] for run in recast_runs],
                 [run["bake_ms"] for run in waymark_runs]))
    for stage, recast, waymark in rows:
        if waymark[0] is None:
            print(f"  {stage:15} {statistics.median(recast):8.3f} {'-':>8} {'-':>6}")
            continue
        ratio = statistics.median(w / r for w, r in zip(waymark, recast))
        print(f"  {stage:15} {statistics.median(recast):8.3f} "
              f"{statistics.median(waymark):8.3f} {ratio:6.3f}")


if __name__ == "__main__":
    main()
