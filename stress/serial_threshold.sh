#!/usr/bin/env bash
# Where a second thread starts to pay: each crowd size stepped on one thread
# (`--serial-below-agents` above the size) and on the pool (`--serial-below-agents 0`),
# taking turns round by round, for `CrowdConfig::serial_below_agents`.
#
#   stress/serial_threshold.sh [ROUNDS=5] [N ...] [-- CROWD_ARGS...]
#
# N defaults to 50 100 200 400 800 agents; CROWD_ARGS to the generated city (`city`), any
# `waymark crowd` level and flags otherwise (`--agents N --json --skip-quality` are added).
# Prints, per size, the median agents/ms of each and the median over rounds of one thread's
# over the pool's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-5}"
[ $# -gt 0 ] && shift
sizes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    sizes+=("$1")
    shift
done
[ $# -gt 0 ] && shift
[ ${#sizes[@]} -gt 0 ] || sizes=(50 100 200 400 800)
crowd_args=("$@")
[ ${#crowd_args[@]} -gt 0 ] || crowd_args=(city)
(cd "$root" && cargo build --release --quiet)
waymark="$root/target/release/waymark"
results=$(mktemp)
for size in "${sizes[@]}"; do
    for round in $(seq 0 $((rounds - 1))); do
        # The order alternates round by round: neither runs always first.
        for turn in 0 1; do
            mode=$(((turn + round) % 2))
            threshold=$([ "$mode" = 0 ] && echo $((size + 1)) || echo 0)
            value=$("$waymark" crowd "${crowd_args[@]}" --agents "$size" --json --skip-quality \
                --serial-below-agents "$threshold" 2>/dev/null |
                python3 -c 'import json,sys; print(json.load(sys.stdin)["agents_per_ms"])')
            echo "$size $round $mode $value" >> "$results"
        done
    done
done
python3 - "$results" <<'PY'
import statistics, sys
value = {}
for line in open(sys.argv[1]):
    size, round_, mode, agents_per_ms = line.split()
    value[(int(size), int(round_), int(mode))] = float(agents_per_ms)
for size in sorted({key[0] for key in value}):
    rounds = sorted({key[1] for key in value if key[0] == size})
    one = [value[(size, r, 0)] for r in rounds]
    pool = [value[(size, r, 1)] for r in rounds]
    ratio = statistics.median(o / p for o, p in zip(one, pool))
    print(f"{size} agents: one thread {statistics.median(one):.0f} agents/ms, "
          f"the pool {statistics.median(pool):.0f}, one thread / pool {ratio:.2f}x")
PY
rm -f "$results"
