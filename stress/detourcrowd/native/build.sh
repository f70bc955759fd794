#!/usr/bin/env bash
# Builds DetourCrowd's reference run (crowd_reference.cpp) natively with g++ -O2, the
# levels README's build, into target/detourcrowd/crowd_reference. EXTRA_FLAGS adds to the
# compiler's flags (EXTRA_FLAGS=-flto for a whole-program build, as waymark's release
# profile is); OUT names another binary.
#
# Recast's C++ sources (zlib licence) come from RECAST_SOURCE if set (a recastnavigation
# checkout), otherwise from the recastnavigation-sys crate, which vendors them: it is
# fetched into cargo's registry on first use (crates.io is reachable where the packages
# are), never built as Rust and never a dependency of waymark.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
crate="recastnavigation-sys"
version="1.0.3"

find_source() {
    local registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
    # No match is not an error: the caller fetches the crate then looks again.
    ls -d "$registry"/*/"$crate-$version"/recastnavigation 2>/dev/null | head -n 1 || true
}

source="${RECAST_SOURCE:-}"
if [[ -z "$source" ]]; then
    source="$(find_source)"
    if [[ -z "$source" ]]; then
        fetch="$(mktemp -d)"
        mkdir -p "$fetch/src"
        printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n' \
            "$crate" "$version" > "$fetch/Cargo.toml"
        echo 'fn main() {}' > "$fetch/src/main.rs"
        (cd "$fetch" && cargo fetch --quiet)
        rm -rf "$fetch"
        source="$(find_source)"
    fi
fi
if [[ ! -d "$source/DetourCrowd" ]]; then
    echo "no Recast sources at '$source' (set RECAST_SOURCE to a recastnavigation checkout)" >&2
    exit 1
fi

out="$root/target/detourcrowd"
mkdir -p "$out"
# shellcheck disable=SC2086 # EXTRA_FLAGS is a list of flags
g++ -O2 -std=c++17 -w ${EXTRA_FLAGS:-} \
    -I"$source/Recast/Include" -I"$source/Detour/Include" -I"$source/DetourCrowd/Include" \
    "$here/crowd_reference.cpp" \
    "$source"/Recast/Source/*.cpp "$source"/Detour/Source/*.cpp "$source"/DetourCrowd/Source/*.cpp \
    -o "$out/${OUT:-crowd_reference}"
echo "$out/${OUT:-crowd_reference} (Recast sources: $source)"
# The query run needs no DetourCrowd.
# shellcheck disable=SC2086
g++ -O2 -std=c++17 -w ${EXTRA_FLAGS:-} \
    -I"$source/Recast/Include" -I"$source/Detour/Include" \
    "$here/query_reference.cpp" "$source"/Recast/Source/*.cpp "$source"/Detour/Source/*.cpp \
    -o "$out/${QUERY_OUT:-query_reference}"
echo "$out/${QUERY_OUT:-query_reference}"
# dtTileCache's temporary obstacles: the anchor of the obstacle bench.
# shellcheck disable=SC2086
g++ -O2 -std=c++17 -w ${EXTRA_FLAGS:-} \
    -I"$source/Recast/Include" -I"$source/Detour/Include" -I"$source/DetourTileCache/Include" \
    "$here/tilecache_reference.cpp" "$source"/Recast/Source/*.cpp "$source"/Detour/Source/*.cpp \
    "$source"/DetourTileCache/Source/*.cpp \
    -o "$out/${TILECACHE_OUT:-tilecache_reference}"
echo "$out/${TILECACHE_OUT:-tilecache_reference}"
