#!/usr/bin/env bash
# Flow like for like: waymark against native DetourCrowd on a level's shared crowd, the
# same agents, the same 300 frames at 1/30 s, complete arrivals counted by the same rule
# (within 0.25 m of the target, horizontally), partial ends apart by the same rule (within
# 0.25 m of the end of a corridor that stops short of the target), overlapping pairs and
# their depths by the same measure. stress/flow_suite.sh runs the whole suite of levels.
#
#   stress/detourcrowd/compare_flow.sh [LEVEL=dungeon] [ROUNDS=5] [N=1000] [-- waymark flags]
#
# Both runs are deterministic, so arrivals, overlaps and stuck agents are the same every
# round; speed is not: each round times DetourCrowd (avoidance 3, one thread) and then
# waymark (`--skip-quality`, the machine's two cores) back to back, and the last lines give
# the median agents/ms ratio. Extra flags after `--` go to waymark's `crowd`.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
level_name="${1:-dungeon}"
rounds="${2:-5}"
agents="${3:-1000}"
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
level="$root/assets/levels/$level_name.obj"
csv="$root/assets/levels/${level_name}_crowd_agents.csv"
"$root/stress/detourcrowd/native/build.sh" > /dev/null
(cd "$root" && cargo build --release --quiet)
reference="$root/target/detourcrowd/crowd_reference"
waymark="$root/target/release/waymark"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
crowd() {
    "$waymark" crowd "$level" --preset recast --agents-csv "$csv" --agents "$agents" --json "$@" 2>/dev/null
}

detour_json=$("$reference" "$level" "$csv" "$agents" 3)
ours_json=$(crowd "$@")
python3 - "$detour_json" "$ours_json" <<'PY'
import json, sys
detour, ours = (json.loads(text) for text in sys.argv[1:3])
for name, run in (("detourcrowd", detour), ("waymark", ours)):
    print(f"{name:12} complete arrivals {run['arrivals']}, partial ends {run['partial_arrivals']} "
          f"(apart), overlapping pairs per frame {run['overlap_pairs_per_frame']:.0f}, depth "
          f"p50 {run['overlap_depth_p50_m']:.3f} m p99 {run['overlap_depth_p99_m']:.3f} m, stuck "
          f"{run['stuck_agents']}, progress efficiency {run['progress_efficiency']:.2f}")
print(f"complete arrivals ratio {ours['arrivals'] / max(detour['arrivals'], 1):.2f}, overlap ratio "
      f"{ours['overlap_pairs_per_frame'] / max(detour['overlap_pairs_per_frame'], 1e-9):.3f}")
PY
ratios=()
printf 'round  detourcrowd_agents_per_ms  waymark_agents_per_ms  ratio\n'
for round in $(seq 1 "$rounds"); do
    detour=$("$reference" "$level" "$csv" "$agents" 3 | field agents_per_ms)
    ours=$(crowd --skip-quality "$@" | field agents_per_ms)
    ratio=$(python3 -c "print(f'{$ours / $detour:.2f}')")
    ratios+=("$ratio")
    printf '%5d  %25.1f  %21.1f  %5s\n' "$round" "$detour" "$ours" "$ratio"
done
python3 -c "import statistics,sys; print(f'median ratio over {len(sys.argv)-1} rounds: {statistics.median(map(float, sys.argv[1:])):.2f}')" "${ratios[@]}"
