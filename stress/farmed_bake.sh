#!/usr/bin/env bash
# A farmed bake on one machine: the level's tile grid cut into PARTS bands of rows, each
# band baked by its own process (all at once, as a job array's tasks would run), the parts
# merged, and the result compared byte for byte with the whole bake of the same level.
#
#   stress/farmed_bake.sh LEVEL PARTS [bake flags...]
#   stress/farmed_bake.sh assets/levels/nav_test.obj 4 --preset recast --tile-size 32
#
# Prints the grid, each part's tiles and time, the merge, and "identical" (exit 0) or the
# first differing byte (exit 1). Files go to target/farmed/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
    echo "usage: $0 LEVEL PARTS [bake flags...]" >&2
    exit 2
fi
level="$1"
parts="$2"
shift 2
out=target/farmed
mkdir -p "$out"
rm -f "$out"/part_*.wmnav
cargo build --release --quiet --bin waymark
waymark=target/release/waymark

start=$(date +%s.%N)
"$waymark" bake "$level" "$@" --json --out "$out/whole.wmnav" >"$out/whole.json"
whole_s=$(echo "$(date +%s.%N) - $start" | bc)
read -r columns rows < <(python3 -c "import json; g=json.load(open('$out/whole.json'))['tile_grid']; print(g[0], g[1])")
echo "tile grid ${columns}x${rows}; whole bake ${whole_s} s"
if [ "$parts" -gt "$rows" ]; then
    parts=$rows
fi

# Band i holds rows [i*rows/parts, (i+1)*rows/parts).
start=$(date +%s.%N)
pids=()
for ((i = 0; i < parts; i++)); do
    first=$((i * rows / parts))
    end=$(((i + 1) * rows / parts))
    "$waymark" bake "$level" "$@" --tiles "0..$columns,$first..$end" --json \
        --out "$out/part_$i.wmnav" >"$out/part_$i.json" &
    pids+=($!)
done
for pid in "${pids[@]}"; do
    wait "$pid"
done
parts_s=$(echo "$(date +%s.%N) - $start" | bc)
for ((i = 0; i < parts; i++)); do
    python3 -c "import json; r=json.load(open('$out/part_$i.json')); print('  part $i: rows', r['tile_rectangle'][1], r['tiles'], 'tiles', r['polygons'], 'polygons,', round(r['bake_ms'], 1), 'ms')"
done
echo "parts baked in ${parts_s} s (processes at once)"
"$waymark" merge "$out"/part_*.wmnav --out "$out/merged.wmnav"
if cmp "$out/merged.wmnav" "$out/whole.wmnav"; then
    echo "identical: the merged parts are the whole bake, byte for byte"
else
    exit 1
fi
