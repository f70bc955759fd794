#!/usr/bin/env bash
# waymark's solo bake against Recast's, stage by stage, run back to back so both see the
# machine in the same state.
#
#   stress/detourcrowd/compare_bake_stages.sh [ROUNDS=3]
#
# Each round runs, on dungeon.obj and nav_test.obj, Recast (`query_reference`: RecastDemo's
# default solo bake, five bakes in one process, each stage's median) and waymark
# (`cargo run --release --example bake_stages`: the same settings on one thread, eleven
# bakes, each stage's median), the two taking turns at going first. Prints, per level and
# stage, the median over the rounds of both stage times and of their ratio (below 1:
# waymark faster). Recast's `navmesh` row (Detour's tile data and navmesh) has no waymark
# counterpart; it counts in Recast's total. waymark's `areas` stage (convex volumes) has
# no work here.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-3}"
"$root/stress/detourcrowd/native/build.sh" > /dev/null
(cd "$root" && cargo build --release --quiet --example bake_stages)
recast="$root/target/detourcrowd/query_reference"
waymark="$root/target/release/examples/bake_stages"
for level in dungeon nav_test; do
    obj="$root/assets/levels/$level.obj"
    csv="$root/assets/levels/${level}_queries.csv"
    lines=()
    for round in $(seq 1 "$rounds"); do
        run_recast() { lines+=("recast $("$recast" "$obj" "$csv")"); }
        run_waymark() { lines+=("waymark $("$waymark" "$obj" 11)"); }
        if ((round % 2)); then run_recast; run_waymark; else run_waymark; run_recast; fi
    done
    printf '%s\n' "${lines[@]}" | python3 "$root/stress/detourcrowd/bake_stages_table.py" "$level"
done
