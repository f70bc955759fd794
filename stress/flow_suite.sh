#!/usr/bin/env bash
# The flow suite: waymark (avoidance on and off) against native DetourCrowd, built from
# Recast's sources, on the same OBJ levels and agents CSVs, 1,800 frames at 1/30 s, arrivals,
# partial ends, overlaps and flow counted by the same rules on both sides
# (stress/flow_suite.py has the points and the rules).
#
#   stress/flow_suite.sh [OUT_DIR=stress/results] [-- waymark crowd flags]
#
# Writes OUT_DIR/flow_suite.csv (a row per point) and OUT_DIR/flow_suite.svg (arrivals and
# overlapping pairs against coverage, a panel per level), and prints the acceptance checks
# that did not hold. ONLY=hills,city runs those levels' points alone; FRAMES changes the
# run length. About 15 minutes on two cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/stress/results}"
shift $(( $# > 0 ? 1 : 0 ))
[ "${1:-}" = "--" ] && shift
"$root/stress/detourcrowd/native/build.sh" > /dev/null
(cd "$root" && cargo build --release --quiet)
exec python3 "$root/stress/flow_suite.py" "$out" "$@"
