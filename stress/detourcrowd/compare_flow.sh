#!/usr/bin/env bash
# Flow like for like: waymark against native DetourCrowd on a level's shared crowd, the
# same agents, the same 300 frames at 1/30 s, arrivals counted by the same rule (within
# 0.25 m of the target, horizontally) and overlapping pairs by the same measure (issue 20).
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
detour_wide_json=$("$reference" "$level" "$csv" "$agents" 3 300 0.6)
ours_json=$(crowd "$@")
python3 - "$detour_json" "$detour_wide_json" "$ours_json" <<'PY'
import json, sys
detour, wide, ours = (json.loads(text) for text in sys.argv[1:4])
print(f"detourcrowd: arrivals {detour['arrivals']} within 0.25 m ({wide['arrivals']} within 0.6 m), "
      f"overlapping pairs per frame {detour['overlap_pairs_per_frame']:.0f}")
print(f"waymark:     arrivals {ours['arrivals']} + {ours['partial_arrivals']} partial = "
      f"{ours['arrivals'] + ours['partial_arrivals']}, overlapping pairs per frame "
      f"{ours['overlap_pairs_per_frame']:.0f} (deepest {ours['max_overlap_m']:.2f} m), "
      f"stuck {ours['stuck_agents']}, progress efficiency {ours['progress_efficiency']:.2f}, "
      f"order to motion p95 {ours['order_to_motion_frames_p95']} frames")
arrived = ours['arrivals'] + ours['partial_arrivals']
print(f"arrivals ratio {arrived / max(detour['arrivals'], 1):.2f}, overlap ratio "
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
