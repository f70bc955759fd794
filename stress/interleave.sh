#!/usr/bin/env bash
# Interleaved runs of several waymark binaries on the same crowd, for comparisons on a
# machine whose speed drifts from minute to minute: each round runs every binary once, in
# an order rotated round by round, and the summary gives each binary's median agents/ms
# and the median over rounds of its ratio to the first binary's run in the same round.
#
#   stress/interleave.sh ROUNDS BINARY... [-- CROWD_ARGS...]
#
# CROWD_ARGS default to the dungeon's 1,000 shared agents (`crowd assets/levels/dungeon.obj
# --preset recast --agents-csv assets/levels/dungeon_crowd_agents.csv --agents 1000`);
# `--json --skip-quality` is always added. Build the binaries to compare from their
# commits (`git worktree add /tmp/before COMMIT && cd /tmp/before && cargo build
# --release`). PASS=NAME (a key of the JSON's `pass_ms`: follow, avoid, separate, feedback,
# ...) adds each binary's median of that pass's per-run median, in milliseconds.
set -euo pipefail
pass="${PASS:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="$1"
shift
binaries=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    binaries+=("$1")
    shift
done
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then
    crowd_args=("$@")
else
    crowd_args=("$root/assets/levels/dungeon.obj" --preset recast
        --agents-csv "$root/assets/levels/dungeon_crowd_agents.csv" --agents 1000)
fi
count=${#binaries[@]}
results=$(mktemp)
for round in $(seq 0 $((rounds - 1))); do
    for turn in $(seq 0 $((count - 1))); do
        index=$(((turn + round) % count))
        value=$("${binaries[$index]}" crowd "${crowd_args[@]}" --json --skip-quality 2>/dev/null |
            python3 -c 'import json,sys; d=json.load(sys.stdin); p=sys.argv[1]; print(d["agents_per_ms"], d["pass_ms"][p] if p else 0)' "$pass")
        echo "$round $index $value" >> "$results"
    done
done
python3 - "$results" "$pass" "${binaries[@]}" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
pass_name = sys.argv[2]
binaries = sys.argv[3:]
value = {(int(r), int(i)): float(v) for r, i, v, _ in rows}
pass_ms = {(int(r), int(i)): float(p) for r, i, _, p in rows}
rounds = sorted({int(r) for r, _, _, _ in rows})
for index, binary in enumerate(binaries):
    runs = [value[(r, index)] for r in rounds]
    ratios = [value[(r, index)] / value[(r, 0)] for r in rounds]
    passes = (f", {pass_name} {statistics.median(pass_ms[(r, index)] for r in rounds):.3f} ms"
              if pass_name else "")
    print(f"{binary}: median {statistics.median(runs):.0f} agents/ms, "
          f"ratio to the first {statistics.median(ratios):.3f}{passes} "
          f"(runs {', '.join(f'{v:.0f}' for v in runs)})")
PY
rm -f "$results"
