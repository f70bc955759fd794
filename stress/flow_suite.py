"""The flow suite: waymark's crowd (avoidance on and off) and native DetourCrowd on the same
levels and agents, counted by the same rules, one row per point; see stress/flow_suite.sh.

Points: the shared dungeon (250, 500, 1,000 agents) and nav_test (250, 500, 1,000, 2,000)
crowds from assets/levels; the generated hills (four seeds) and city (two seeds), each at
about 5%, 15% and 30% of the baked walkable area covered by bodies; the open plaza crossed
by four groups and the long corridor walked in counter-flow, at 10% and 30%. Generated
levels and their agents are written by `waymark export` as OBJ and CSV, so both crowds
read the same files. Every run is 1,800 frames at 1/30 s with RecastDemo's bake and
DetourCrowd's reference agents (radius 0.6, speed 3.5, acceleration 8).

Per point, in this order: DetourCrowd alone (its update timed, overlaps and flow measured
between updates), waymark alone with --skip-quality (timed), then waymark with avoidance
on and off side by side (quality measured; not timed). Both crowds count a complete
arrival within 0.25 m of the requested target, a partial end within 0.25 m of the end of
a corridor that stops short of the target, and give the next target after either.
"""
import csv
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAYMARK = os.path.join(ROOT, "target", "release", "waymark")
REFERENCE = os.path.join(ROOT, "target", "detourcrowd", "crowd_reference")
FRAMES = int(os.environ.get("FRAMES", "1800"))
SIZE_FOR = 400  # generated levels: about 4,700 m² of walkable area

COLUMNS = [
    "level", "seed", "agents", "coverage",
    "arrivals_on", "arrivals_off", "arrivals_detour", "arrivals_ratio",
    "partial_on", "partial_off", "partial_detour",
    "pairs_on", "pairs_off", "pairs_detour", "pairs_passing_on",
    "depth_p50_on", "depth_p99_on", "depth_p50_detour", "depth_p99_detour",
    "stuck_on", "stuck_detour", "stuck_share_on",
    "efficiency_on", "efficiency_off", "efficiency_detour",
    "agents_per_ms_on", "agents_per_ms_detour", "speed_ratio",
]


def points():
    """(name, seed, obj, csv, agents or None, coverage or None) per point."""
    levels = os.path.join(ROOT, "assets", "levels")
    out = []
    for name, counts in (("dungeon", (250, 500, 1000)), ("nav_test", (250, 500, 1000, 2000))):
        for n in counts:
            out.append((name, 0, os.path.join(levels, f"{name}.obj"),
                        os.path.join(levels, f"{name}_crowd_agents.csv"), n, None))
    for name, seeds in (("hills", (1, 2, 3, 4)), ("city", (1, 2))):
        for seed in seeds:
            for coverage in (0.05, 0.15, 0.30):
                out.append((name, seed, None, None, None, coverage))
    for name in ("plaza", "corridor"):
        for coverage in (0.10, 0.30):
            out.append((name, 1, None, None, None, coverage))
    return out


def run_json(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def export(work, name, seed, coverage):
    stem = os.path.join(work, f"{name}_{seed}_{round(coverage * 100)}")
    args = [WAYMARK, "export", name, "--preset", "recast", "--seed", str(seed),
            "--coverage", str(coverage), "--obj", stem + ".obj", "--agents-csv", stem + ".csv"]
    if name in ("hills", "city"):
        args += ["--size-for", str(SIZE_FOR)]
    report = run_json(args)
    return stem + ".obj", stem + ".csv", report["agents"]


def waymark_args(obj, agents_csv, agents, extra):
    return [WAYMARK, "crowd", obj, "--preset", "recast", "--agents-csv", agents_csv,
            "--agents", str(agents), "--frames", str(FRAMES), "--json"] + extra


def measure(point, work, extra):
    name, seed, obj, agents_csv, agents, coverage = point
    if obj is None:
        obj, agents_csv, agents = export(work, name, seed, coverage)
    detour = run_json([REFERENCE, obj, agents_csv, str(agents), "3", str(FRAMES)])
    timed = run_json(waymark_args(obj, agents_csv, agents, extra + ["--skip-quality"]))
    # Quality runs side by side: nothing of them is timed.
    on_run = subprocess.Popen(waymark_args(obj, agents_csv, agents, extra),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    off = run_json(waymark_args(obj, agents_csv, agents, extra + ["--avoidance", "off"]))
    out, err = on_run.communicate()
    if on_run.returncode != 0:
        sys.exit(f"failed: waymark crowd {obj}\n{err}")
    on = json.loads(out.strip().splitlines()[-1])
    ratio = lambda a, b: a / b if b else float("inf")
    return {
        "level": name, "seed": seed, "agents": on["agents"],
        "coverage": round(on["coverage"], 4),
        "arrivals_on": on["arrivals"], "arrivals_off": off["arrivals"],
        "arrivals_detour": detour["arrivals"],
        "arrivals_ratio": round(ratio(on["arrivals"], detour["arrivals"]), 3),
        "partial_on": on["partial_arrivals"], "partial_off": off["partial_arrivals"],
        "partial_detour": detour["partial_arrivals"],
        "pairs_on": round(on["overlap_pairs_per_frame"], 1),
        "pairs_off": round(off["overlap_pairs_per_frame"], 1),
        "pairs_detour": detour["overlap_pairs_per_frame"],
        # Of waymark's pairs, those with a walker passing through in them.
        "pairs_passing_on": round(on["overlap_pairs_passing_per_frame"], 1),
        "depth_p50_on": on["overlap_depth_p50_m"], "depth_p99_on": on["overlap_depth_p99_m"],
        "depth_p50_detour": detour["overlap_depth_p50_m"],
        "depth_p99_detour": detour["overlap_depth_p99_m"],
        "stuck_on": on["stuck_agents"], "stuck_detour": detour["stuck_agents"],
        "stuck_share_on": round(on["stuck_agents"] / on["agents"], 4),
        "efficiency_on": round(on["progress_efficiency"], 3),
        "efficiency_off": round(off["progress_efficiency"], 3),
        "efficiency_detour": detour["progress_efficiency"],
        "agents_per_ms_on": round(timed["agents_per_ms"], 1),
        "agents_per_ms_detour": detour["agents_per_ms"],
        "speed_ratio": round(ratio(timed["agents_per_ms"], detour["agents_per_ms"]), 2),
    }


def verdicts(rows):
    """The issue's acceptance, point by point: a list of (what, held, detail)."""
    found = []
    low = [r for r in rows if r["coverage"] <= 0.30]
    high = [r for r in rows if r["coverage"] > 0.30]
    for r in low:
        tag = f"{r['level']} {r['seed']} {r['agents']} ({r['coverage']:.0%})"
        found.append((f"{tag}: arrivals >= DetourCrowd's", r["arrivals_on"] >= r["arrivals_detour"],
                      f"{r['arrivals_on']} / {r['arrivals_detour']}"))
        found.append((f"{tag}: pairs <= DetourCrowd's", r["pairs_on"] <= r["pairs_detour"],
                      f"{r['pairs_on']} / {r['pairs_detour']}"))
        found.append((f"{tag}: p99 depth <= DetourCrowd's",
                      r["depth_p99_on"] <= r["depth_p99_detour"],
                      f"{r['depth_p99_on']} / {r['depth_p99_detour']}"))
        found.append((f"{tag}: stuck <= 1%", r["stuck_share_on"] <= 0.01, f"{r['stuck_on']}"))
        if r["coverage"] <= 0.10:
            found.append((f"{tag}: arrivals >= 80% of avoidance off",
                          r["arrivals_on"] >= 0.8 * r["arrivals_off"],
                          f"{r['arrivals_on']} / {r['arrivals_off']}"))
    ratios = [max(r["arrivals_on"], 1) / max(r["arrivals_detour"], 1) for r in low]
    if ratios:
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        found.append(("geometric mean of arrival ratios up to 30% >= 1.15", mean >= 1.15,
                      f"{mean:.3f} over {len(ratios)} points"))
    for r in high:
        tag = f"{r['level']} {r['seed']} {r['agents']} ({r['coverage']:.0%})"
        found.append((f"{tag}: arrivals >= half DetourCrowd's",
                      r["arrivals_on"] >= 0.5 * r["arrivals_detour"],
                      f"{r['arrivals_on']} / {r['arrivals_detour']}"))
        found.append((f"{tag}: pairs <= a quarter of DetourCrowd's",
                      r["pairs_on"] <= 0.25 * r["pairs_detour"],
                      f"{r['pairs_on']} / {r['pairs_detour']}"))
        found.append((f"{tag}: p99 depth <= half the radius sum", r["depth_p99_on"] <= 0.6,
                      f"{r['depth_p99_on']}"))
        found.append((f"{tag}: stuck <= 1%", r["stuck_share_on"] <= 0.01, f"{r['stuck_on']}"))
    for r in rows:
        tag = f"{r['level']} {r['seed']} {r['agents']}"
        wanted = 8.0 if r["level"] in ("dungeon", "nav_test") and r["agents"] == 1000 else 5.0
        found.append((f"{tag}: agents/ms >= {wanted:g}x DetourCrowd's", r["speed_ratio"] >= wanted,
                      f"{r['speed_ratio']}x"))
    return found


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "stress", "results")
    extra = sys.argv[2:]
    only = os.environ.get("ONLY")  # a level name: run only its points
    work = os.path.join(ROOT, "target", "flow_suite")
    os.makedirs(work, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    started = time.time()
    for point in points():
        if only and point[0] not in only.split(","):
            continue
        row = measure(point, work, extra)
        rows.append(row)
        print(f"{row['level']:9} {row['seed']} {row['agents']:5} {row['coverage']:6.1%}  "
              f"arrivals {row['arrivals_on']:5} / off {row['arrivals_off']:5} / detour "
              f"{row['arrivals_detour']:5}  pairs {row['pairs_on']:8} / {row['pairs_detour']:8}  "
              f"p99 {row['depth_p99_on']:.3f} / {row['depth_p99_detour']:.3f}  stuck "
              f"{row['stuck_on']}  speed {row['speed_ratio']}x", flush=True)
    table = os.path.join(out_dir, "flow_suite.csv")
    with open(table, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    subprocess.run([sys.executable, os.path.join(ROOT, "stress", "flow_plot.py"), table,
                    os.path.join(out_dir, "flow_suite.svg")], check=True)
    held = 0
    found = verdicts(rows)
    for what, ok, detail in found:
        held += ok
        if not ok:
            print(f"  not met: {what} ({detail})")
    print(f"{held} of {len(found)} acceptance checks held; {table}; "
          f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
