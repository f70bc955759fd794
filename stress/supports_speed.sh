#!/usr/bin/env bash
# Moving supports at scale: the 10,000-agent city with a tenth of its walkable
# area on moving floors (open squares as belts at 0.5 m/s, about a tenth of the agents
# standing on them over the run) against the static city, paired runs of one binary
# alternating, the median of the per-round agents/ms ratios.
#
#   stress/supports_speed.sh [ROUNDS=7] [AGENTS=10000] [SHARE=0.1]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-7}"
agents="${2:-10000}"
share="${3:-0.1}"
(cd "$root" && cargo build --release --quiet)
waymark="$root/target/release/waymark"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
ratios=()
printf 'round  static_agents_per_ms  belts_agents_per_ms  ratio\n'
for round in $(seq 1 "$rounds"); do
    still=$("$waymark" crowd city --agents "$agents" --json --skip-quality 2>/dev/null | field agents_per_ms)
    moving=$("$waymark" crowd city --agents "$agents" --belt-share "$share" --json --skip-quality 2>/dev/null | field agents_per_ms)
    ratio=$(python3 -c "print(f'{$moving / $still:.3f}')")
    ratios+=("$ratio")
    printf '%5d  %20.1f  %19.1f  %5s\n' "$round" "$still" "$moving" "$ratio"
done
on=$("$waymark" crowd city --agents "$agents" --belt-share "$share" --json --skip-quality 2>/dev/null | field agents_on_moving_supports)
echo "agents on moving supports at the end of the run: $on of $agents"
python3 -c "import statistics,sys; print(f'median ratio over {len(sys.argv)-1} rounds: {statistics.median(map(float, sys.argv[1:])):.3f}')" "${ratios[@]}"
