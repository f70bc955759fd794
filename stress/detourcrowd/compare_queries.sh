#!/usr/bin/env bash
# waymark's path queries against native Detour on the shared query sets, run back to back
# so both see the machine in the same state: the query speed gate (mean time per query,
# nearest polygon for both ends + path + straight path, at most half of Detour's), measured
# like for like instead of against the levels README's figures from another machine.
#
#   stress/detourcrowd/compare_queries.sh [ROUNDS=5]
#
# Each round runs, on dungeon.obj and nav_test.obj with their 10,000 pairs, Detour
# (`query_reference`, RecastDemo's default bake, one thread) and `waymark path --preset
# recast --queries` (one thread), the two taking turns at going first, and prints both mean
# µs per query and their ratio (below 1: waymark faster); the last lines give each level's
# median ratio over the rounds. Both report the same complete fraction (0.8223 on dungeon,
# 0.2808 on nav_test), which the script checks, and mean complete lengths within 0.1%
# (45.76 m on dungeon; 24.95 against Detour's 24.93 m on nav_test).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-5}"
"$root/stress/detourcrowd/native/build.sh" > /dev/null
(cd "$root" && cargo build --release --quiet)
detour="$root/target/detourcrowd/query_reference"
waymark="$root/target/release/waymark"
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$1'])"; }
printf '%-9s %5s %12s %13s %7s\n' level round detour_us waymark_us ratio
for level in dungeon nav_test; do
    obj="$root/assets/levels/$level.obj"
    csv="$root/assets/levels/${level}_queries.csv"
    ratios=()
    for round in $(seq 1 "$rounds"); do
        run_detour() { detour_json=$("$detour" "$obj" "$csv"); }
        run_waymark() { waymark_json=$("$waymark" path "$obj" --preset recast --queries "$csv" --json); }
        if ((round % 2)); then run_detour; run_waymark; else run_waymark; run_detour; fi
        for key in complete_fraction; do
            a=$(echo "$detour_json" | field "$key"); b=$(echo "$waymark_json" | field "$key")
            python3 -c "import sys; sys.exit(abs($a - $b) > 1e-3)" || {
                echo "$level: $key differs: detour $a, waymark $b" >&2; exit 1; }
        done
        detour_us=$(echo "$detour_json" | field mean_us)
        waymark_us=$(echo "$waymark_json" | field mean_us)
        ratio=$(python3 -c "print(f'{$waymark_us / $detour_us:.3f}')")
        ratios+=("$ratio")
        printf '%-9s %5d %12.3f %13.3f %7s\n' "$level" "$round" "$detour_us" "$waymark_us" "$ratio"
    done
    median=$(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c 'import sys; v=[float(l) for l in sys.stdin]; print(f"{sorted(v)[len(v)//2]:.3f}")')
    echo "$level: median ratio over $rounds rounds: $median"
done
