#!/usr/bin/env bash
# Runs each fuzz target of the trace reader for a bounded time (default 60 s each) on
# its committed corpus. Needs the nightly toolchain and cargo-fuzz; installs cargo-fuzz
# from crates.io when it is missing.
#   crates/kairos-trace/fuzz/run.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: installing the nightly toolchain (libFuzzer needs it)"
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi
for target in metadata packet; do
    # A scratch copy: new inputs libFuzzer finds do not dirty the committed corpus.
    scratch="$(mktemp -d)"
    cp corpus/"$target"/* "$scratch"/
    echo "== fuzz $target for ${secs}s"
    cargo +nightly fuzz run "$target" "$scratch" -- -max_total_time="$secs" -rss_limit_mb=1024 -malloc_limit_mb=512
    rm -rf "$scratch"
done
