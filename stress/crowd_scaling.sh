#!/usr/bin/env bash
# Crowd scaling on a generated level: agents/ms and ms per frame against N, per pass.
# Writes stress/results/crowd_scaling.csv and, with python3, stress/results/crowd_scaling.svg.
# LEVEL=hills runs on the generated terrain instead of the city (results named
# crowd_scaling_hills*).
# Usage: stress/crowd_scaling.sh [FRAMES] [N ...]   (default: 300 frames; 1k..100k agents)
# AVOIDANCE=off runs without local avoidance (default on); results go to
# crowd_scaling.csv / crowd_scaling_no_avoidance.csv.
# Every run is its own process: peak_rss_mib is that run's peak (bake + navmesh + crowd).
# BUDGET_PER_AGENT=F sets the path-search node budget per frame to F nodes an agent
# (`--node-budget-per-agent F`, in place of the default rate; never below the fixed floor
# of 2,048), results then going to crowd_scaling_served.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-300}
shift || true
sizes=("$@")
if [ ${#sizes[@]} -eq 0 ]; then
  sizes=(1000 2000 5000 10000 20000 50000 100000)
fi
cargo build --release --quiet
avoidance=${AVOIDANCE:-on}
level=${LEVEL:-city}
case "$level" in
  city|hills) ;;
  *) echo "LEVEL must be city or hills, not '$level'" >&2; exit 2 ;;
esac
name=crowd_scaling
if [ "$level" = hills ]; then name=crowd_scaling_hills; fi
if [ "$avoidance" = off ]; then name=${name}_no_avoidance; fi
budget_per_agent=${BUDGET_PER_AGENT:-}
# WARM_UP=F runs F untimed frames first (`--warm-up-frames`), so the measured frames are
# those of a crowd that walks (with BUDGET_PER_AGENT, the first burst served by then).
warm_up=${WARM_UP:-0}
if [ "$warm_up" != 0 ]; then name=${name}_warm; fi
if [ -n "$budget_per_agent" ]; then name=${name}_served; fi
out=stress/results/$name.csv
echo "agents,frames,ms_per_frame_median,ms_per_frame_max,agents_per_ms,waiting_for_path,path_wait_frames_p95,nodes_expanded_max_frame,node_budget,ingest_ms,schedule_ms,adopt_ms,follow_ms,slope_ms,neighbours_ms,avoid_ms,move_ms,separate_ms,feedback_ms,peak_rss_mib,lane_bytes_per_agent,corridor_mib,level" > "$out"
for n in "${sizes[@]}"; do
  budget=()
  if [ -n "$budget_per_agent" ]; then
    budget=(--node-budget-per-agent "$budget_per_agent")
  fi
  json=$(target/release/waymark crowd "$level" --agents "$n" --frames "$frames" --warm-up-frames "$warm_up" --avoidance "$avoidance" "${budget[@]}" --json)
  python3 - "$json" >> "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
p = r["pass_ms"]
row = [r["agents"], r["frames"], r["ms_per_frame_median"], r["ms_per_frame_max"], r["agents_per_ms"],
       r["waiting_for_path"], r["path_wait_frames_p95"], r["nodes_expanded_max_frame"], r["node_budget"],
       p["ingest"], p["schedule"], p["adopt"], p["follow"], p["slope"], p.get("neighbours", 0.0), p["avoid"], p["move"], p["separate"], p["feedback"],
       r["peak_rss_mib"], r["lane_bytes_per_agent"], r["corridors"]["mib"], '"' + r["level"] + '"']
print(",".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row))
PY
  tail -1 "$out"
done
python3 stress/plot.py "$out" "stress/results/$name.svg" && echo "plot: stress/results/$name.svg"
