#!/usr/bin/env bash
# waymark's speed against native DetourCrowd on a shared crowd, run back to back so both
# see the machine in the same state: the full step's agents/ms with high-quality avoidance
# on both sides, 1,000 agents, --preset recast.
#
#   stress/detourcrowd/compare.sh [ROUNDS=5] [N=1000]
#   LEVEL=nav_test FRAMES=1800 stress/detourcrowd/compare.sh 5   (the flow suite's length)
#
# Each round runs DetourCrowd (avoidance 3, one thread, as in the levels README) and then
# waymark (`crowd --preset recast --agents-csv`, the machine's two cores), FRAMES (300)
# frames at 1/30 s each, on LEVEL (an .obj of assets/levels with its shared agents,
# dungeon by default), and prints both agents/ms (from the median frame) and their ratio;
# the last line is the median ratio over the rounds. With BASELINE=path/to/another/waymark (a build
# of an earlier commit, say from `git worktree add`), each round also runs that binary,
# the two taking turns at going first, and its median ratio is printed too: a
# before/after in the same minutes.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-5}"
agents="${2:-1000}"
level="$root/assets/levels/${LEVEL:-dungeon}.obj"
csv="$root/assets/levels/${LEVEL:-dungeon}_crowd_agents.csv"
frames="${FRAMES:-300}"
"$root/stress/detourcrowd/native/build.sh" > /dev/null
(cd "$root" && cargo build --release --quiet)
reference="$root/target/detourcrowd/crowd_reference"
waymark="$root/target/release/waymark"

baseline="${BASELINE:-}"
agents_per_ms() {
    "$1" crowd "$level" --preset recast --agents-csv "$csv" --agents "$agents" --frames "$frames" --json --skip-quality 2>/dev/null \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["agents_per_ms"])'
}
ratios=()
baseline_ratios=()
printf 'round  detourcrowd_agents_per_ms  waymark_agents_per_ms  ratio%s\n' "${baseline:+  baseline_agents_per_ms  baseline_ratio}"
for round in $(seq 1 "$rounds"); do
    detour=$("$reference" "$level" "$csv" "$agents" 3 "$frames" | python3 -c 'import json,sys; print(json.load(sys.stdin)["agents_per_ms"])')
    # With a baseline, the two waymark builds take turns at running right after
    # DetourCrowd: the place in a round showed an effect of several percent.
    if [ -n "$baseline" ] && [ $((round % 2)) -eq 0 ]; then
        theirs=$(agents_per_ms "$baseline")
        ours=$(agents_per_ms "$waymark")
    else
        ours=$(agents_per_ms "$waymark")
        [ -n "$baseline" ] && theirs=$(agents_per_ms "$baseline")
    fi
    ratio=$(python3 -c "print(f'{$ours / $detour:.2f}')")
    ratios+=("$ratio")
    printf '%5d  %25.1f  %21.1f  %5s' "$round" "$detour" "$ours" "$ratio"
    if [ -n "$baseline" ]; then
        baseline_ratio=$(python3 -c "print(f'{$theirs / $detour:.2f}')")
        baseline_ratios+=("$baseline_ratio")
        printf '  %22.1f  %14s' "$theirs" "$baseline_ratio"
    fi
    printf '\n'
done
median_of() {
    python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" "$@"
}
echo "median ratio over $rounds rounds: $(median_of "${ratios[@]}")"
if [ -n "$baseline" ]; then
    echo "baseline median ratio over $rounds rounds: $(median_of "${baseline_ratios[@]}")"
fi
