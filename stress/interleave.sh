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
# ...) adds each binary's median of that pass's per-run median, in milliseconds; PASS=all
# adds every pass's.
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
            python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["agents_per_ms"], json.dumps(d["pass_ms"], separators=(",", ":")))')
        echo "$round $index $value" >> "$results"
    done
done
python3 - "$results" "$pass" "${binaries[@]}" <<'PY'
import json, statistics, sys
rows = [line.split(maxsplit=3) for line in open(sys.argv[1])]
pass_name = sys.argv[2]
binaries = sys.argv[3:]
value = {(int(r), int(i)): float(v) for r, i, v, _ in rows}
pass_ms = {(int(r), int(i)): json.loads(p) for r, i, _, p in rows}
rounds = sorted({int(r) for r, _, _, _ in rows})
for index, binary in enumerate(binaries):
    runs = [value[(r, index)] for r in rounds]
    ratios = [value[(r, index)] / value[(r, 0)] for r in rounds]
    def median_of(name):
        return statistics.median(pass_ms[(r, index)][name] for r in rounds)
    if pass_name == "all":
        names = pass_ms[(rounds[0], index)].keys()
        passes = ", " + ", ".join(f"{name} {median_of(name):.3f}" for name in names
                                  if median_of(name) >= 0.01) + " ms"
    elif pass_name:
        passes = f", {pass_name} {median_of(pass_name):.3f} ms"
    else:
        passes = ""
    print(f"{binary}: median {statistics.median(runs):.0f} agents/ms, "
          f"ratio to the first {statistics.median(ratios):.3f}{passes} "
          f"(runs {', '.join(f'{v:.0f}' for v in runs)})")
PY
rm -f "$results"
