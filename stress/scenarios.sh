#!/usr/bin/env bash
# The avoidance scenario suite: quality and cost of each standard scenario at a few sizes,
# and the shared dungeon and nav_test crowds, one CSV row per run.
# Writes stress/results/scenarios.csv. Usage: stress/scenarios.sh
# Columns: scenario, agents, flags, completion_s (empty: not everyone arrived, or the
# dungeon, whose agents cycle through targets), completion_ratio, stuck_agents (no progress
# along the corridor for 3 s at the end), arrivals, partial_arrivals, progress_efficiency,
# order_to_motion_frames_p95, overlap_pairs_per_frame, max_overlap_m,
# max_overlap_of_radius, off_mesh_agents, ms_per_frame_median, agents_per_ms,
# fell_off_support, stop_error_m, walk_time_error (the last three empty for crowds; the
# walk time error only for scenarios with a closed form: the conveyor).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=stress/results/scenarios.csv
echo "scenario,agents,flags,completion_s,completion_ratio,stuck_agents,arrivals,partial_arrivals,progress_efficiency,order_to_motion_frames_p95,overlap_pairs_per_frame,max_overlap_m,max_overlap_of_radius,off_mesh_agents,ms_per_frame_median,agents_per_ms,fell_off_support,stop_error_m,walk_time_error" > "$out"
row() {
  # $1 scenario name, $2 agents, $3 flags, $4 radius (for the dungeon), then the JSON.
  python3 - "$1" "$2" "$3" "$4" "$5" >> "$out" <<'PY'
import json, sys
name, agents, flags, radius, text = sys.argv[1:]
r = json.loads(text)
radius = float(r.get("radius_m", radius))
def num(v):
    return "" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))
print(",".join([name, agents, '"' + flags + '"', num(r.get("completion_s")), num(r.get("completion_ratio")),
                num(r["stuck_agents"]), num(r["arrivals"]), num(r["partial_arrivals"]),
                num(r["progress_efficiency"]), num(r["order_to_motion_frames_p95"]),
                num(r["overlap_pairs_per_frame"]), num(r["max_overlap_m"]),
                num(r["max_overlap_m"] / radius), num(r["off_mesh_agents"]), num(r["ms_per_frame_median"]),
                num(r["agents_per_ms"]), num(r.get("fell_off_support")), num(r.get("stop_error_m")),
                num(r.get("walk_time_error"))]))
PY
  tail -1 "$out"
}
for spec in "circle 250" "circle 1000" "corridor 100" "corridor 200" "bottleneck 50" "bottleneck 100" "bottleneck 200" "corridor-swap 400" "doorway 200" "crossing 400" "conveyor 200" "turntable 200"; do
  set -- $spec
  for flags in "" "--contact slide --slow-turn 0" "--contact inelastic --slow-turn 0.7" "--squeeze 0.3" "--pass-through-after 0"; do
    # Each scenario's own settings, then both contact models explicitly, then stalled pairs
    # allowed to give 30% of their radii, then held walkers never passing through.
    json=$(target/release/waymark scenario "$1" --agents "$2" --json $flags)
    row "$1" "$2" "${flags:-scenario defaults}" 0 "$json"
  done
done
for level in dungeon nav_test; do
  for flags in "" "--contact inelastic --slow-turn 0.7" "--squeeze 0.3" "--pass-through-after 0" "--pass-through-after 2"; do
    json=$(target/release/waymark crowd "assets/levels/$level.obj" --preset recast \
      --agents-csv "assets/levels/${level}_crowd_agents.csv" --agents 1000 --json $flags)
    row "$level" 1000 "${flags:-crowd defaults}" 0.6 "$json"
  done
done
# The one-way references of the two-way scenarios (half the agents, one group).
for spec in "corridor-swap 400" "doorway 200"; do
  set -- $spec
  json=$(target/release/waymark scenario "$1" --agents "$2" --one-way --json)
  row "$1" "$2" "--one-way" 0 "$json"
done
