#!/usr/bin/env bash
# Runs each fuzz target of a build for a while on its seed corpus: run.sh BUILD SECONDS NAME...
# New inputs go to BUILD/corpus/NAME (the checked-in seeds stay as they are); a crash, leak,
# sanitizer report or hang (over 10 s on one input) stops it with the input in BUILD/crashes/.
# Add a fixed crash's input to tests/fuzz/corpus/NAME/ so the replay test keeps it fixed.
set -euo pipefail
build=$1 seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/crashes"
# Clang's sanitizers print file:line through an external symbolizer: the first one installed.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in llvm-symbolizer-19 llvm-symbolizer addr2line; do
    if command -v "$s" >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v "$s"); break; fi
  done
fi
for name in "$@"; do
  target="$build/bin/fuzz_$name"
  if [ ! -x "$target" ]; then
    [ "$name" = parquet ] && { echo "fuzz: no $target (no pyarrow Arrow C++): skipped"; continue; }
    echo "fuzz: no $target" >&2
    exit 1
  fi
  mkdir -p "$build/corpus/$name"
  echo "fuzz: $name for ${seconds}s"
  # -rss_limit_mb: LibTorch alone holds a few hundred MB; inputs up to the biggest seed or 4 KiB.
  log="$build/fuzz-$name.log"
  extra=()
  # Arrow allocates what a damaged header claims (up to terabytes) and reports the failed malloc
  # as an error: let such mallocs fail as they do outside the fuzzer (allocator_may_return_null,
  # set by fuzz_parquet.cpp) rather than count as libFuzzer's out-of-memory.
  [ "$name" = parquet ] && extra=(-malloc_limit_mb=1048576)
  [ -f "$here/$name.dict" ] && extra+=(-dict="$here/$name.dict")
  status=0
  "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 "${extra[@]}" \
    -print_final_stats=1 -artifact_prefix="$build/crashes/$name-" \
    "$build/corpus/$name" "$here/corpus/$name" >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 80 "$log" >&2
    echo "fuzz: $name failed (exit $status); the input is in $build/crashes/, the log $log" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' "$log" | sed "s/^/  $name: /"
done
