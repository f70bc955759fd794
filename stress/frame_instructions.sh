#!/usr/bin/env bash
# The step's own work frame by frame, free of the machine's stalls: instructions executed
# by each `Crowd::step` (valgrind's callgrind, one rayon thread, a profile dumped as each
# step returns), then their median, their largest and the largest's ratio to the median.
# Wall-clock frame times on a shared machine carry its stalls (a core taken for a
# millisecond stretches one frame); instruction counts show whether the step itself ever
# does twice a usual frame's work (the first frame with every request fresh
# included). Instructions are not time (cache misses are not counted), so this complements
# `cargo run --release --example frame_times`, it does not replace it.
#
#   stress/frame_instructions.sh [N=10000] [FRAMES=300] [CROWD_ARGS...]
#
# CROWD_ARGS default to `--avoidance off` (the crowd without avoidance). About a minute per
# hundred frames at 10,000 agents. Needs valgrind.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
agents="${1:-10000}"
frames="${2:-300}"
shift $(($# < 2 ? $# : 2))
crowd_args=("$@")
[ ${#crowd_args[@]} -eq 0 ] && crowd_args=(--avoidance off)
(cd "$root" && cargo build --release --quiet)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step='waymark::crowd::step::<impl waymark::crowd::runtime::Crowd>::step_on_pool'
(cd "$work" && RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$work/frame" \
    --toggle-collect="$step" --dump-after="$step" \
    "$root/target/release/waymark" crowd city --agents "$agents" --frames "$frames" \
    "${crowd_args[@]}" --json --skip-quality > /dev/null 2> "$work/valgrind.log")
python3 - "$work" <<'PY'
import glob, statistics, sys
frames = []
for path in glob.glob(sys.argv[1] + "/frame.*"):
    number = int(path.rsplit(".", 1)[1])
    with open(path) as profile:
        total = next(int(line.split()[1]) for line in profile if line.startswith(("totals:", "summary:")))
    frames.append((number - 1, total))
frames.sort()
counts = [total for _, total in frames]
median = statistics.median(counts)
frame, largest = max(frames, key=lambda f: f[1])
print(f"{len(counts)} frames: median {median / 1e6:.2f} M instructions, largest {largest / 1e6:.2f} M "
      f"(frame {frame}), {largest / median:.3f}x the median; first frame {counts[0] / 1e6:.2f} M "
      f"({counts[0] / median:.3f}x); frames over twice the median: {sum(c > 2 * median for c in counts)}")
PY
