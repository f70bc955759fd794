#!/usr/bin/env bash
# `waymark view` in a real headless browser: writes two replays and their pages (the
# built-in level with 200 agents; the city with 10,000 agents over 300 frames, whose trace
# must stay within 50 MB), then drives them in Debian's Chromium through playwright-core
# (view_test.mjs). Installs Chromium from the system's packages when it is missing and this
# runs as root; where no browser can be had, prints why and exits 0 (skipped).
#
#   tests/view/run.sh [OUT_DIR]     (default target/view-test; screenshots land there)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/target/view-test}"
mkdir -p "$out"

skip() {
    echo "view test skipped: $1"
    exit 0
}

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        echo "installing Chromium from the system's packages"
        apt-get install -y -qq chromium >"$out/apt.log" 2>&1 ||
            { apt-get update -qq >>"$out/apt.log" 2>&1 && apt-get install -y -qq chromium >>"$out/apt.log" 2>&1; } ||
            true
    fi
    [ -x "$chromium" ] || skip "no Chromium at $chromium and none could be installed (see $out/apt.log)"
fi
command -v node >/dev/null || skip "no Node.js to drive the browser"
command -v npm >/dev/null || skip "no npm to install playwright-core"
(cd "$here" && npm ci --no-audit --no-fund --silent) ||
    skip "playwright-core could not be installed from the npm registry"

cd "$root"
cargo build --release --quiet --bin waymark
waymark="$root/target/release/waymark"
"$waymark" crowd --frames 300 --trace "$out/small.jsonl" >/dev/null
"$waymark" view --trace "$out/small.jsonl" --out "$out/small.html"
"$waymark" crowd city --agents 10000 --frames 300 --skip-quality --trace "$out/large.jsonl" >/dev/null
"$waymark" view --trace "$out/large.jsonl" --out "$out/large.html"
trace_bytes=$(stat -c %s "$out/large.jsonl")
echo "the 10,000-agent, 300-frame trace: $trace_bytes bytes"
if [ "$trace_bytes" -gt 50000000 ]; then
    echo "the 10,000-agent trace is over 50 MB" >&2
    exit 1
fi
CHROMIUM="$chromium" node "$here/view_test.mjs" "$out/small.html" "$out/large.html" "$out"
