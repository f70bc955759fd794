#!/usr/bin/env bash
# Runs one criterion bench target several times and prints, per benchmark, the criterion
# median of each run and the median of those medians (this machine is noisy: quote that).
# Usage: benches/medians.sh BENCH [RUNS] [extra criterion args...]
# Example: benches/medians.sh bake 3 --warm-up-time 2 --measurement-time 6
# For another build, set both: CARGO_TARGET_DIR=target/v3 RUSTFLAGS="-C target-cpu=x86-64-v3"
set -euo pipefail
cd "$(dirname "$0")/.."
bench=$1
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
results=$(mktemp)
for run in $(seq 1 "$runs"); do
  cargo bench --bench "$bench" -- "$@" > /dev/null 2>&1
  find "${CARGO_TARGET_DIR:-target}/criterion" -path '*/new/estimates.json' -newer "$results" -print0 |
    xargs -0 -I{} python3 -c '
import json, sys
path = sys.argv[1]
name = "/".join(path.split("/criterion/")[1].split("/")[:-2])
median_ms = json.load(open(path))["median"]["point_estimate"] / 1e6
print(f"{name} {median_ms:.3f}")' {} >> "$results.runs"
  touch "$results"
done
python3 - "$results.runs" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, value = line.split()
    runs[name].append(float(value))
for name in sorted(runs):
    values = runs[name]
    print(f"{name:45s} median {statistics.median(values):8.2f} ms  runs {' '.join(f'{v:.2f}' for v in values)}")
PY
rm -f "$results" "$results.runs"
