#!/usr/bin/env bash
# Runs a test program under one of ATen's CPU kernel sets: `kernel_set.sh SET PROGRAM [ARGS...]`.
# ATen picks the widest set the CPU has (avx512, else avx2) unless ATEN_CPU_CAPABILITY names a
# narrower one, and the sets round differently (vector widths, summation orders), so a numeric
# test that passes under one and fails under another checks rounding luck, not the code's
# promise. ctest runs each numeric program as it is (the CPU's own set) and again as
# NAME@default (scalar kernels) and NAME@avx2; the avx2 run is skipped (exit 77) where avx2 is
# already the CPU's own set, since the plain run was that run.
set -euo pipefail
set_name=$1
shift
if [ "$set_name" = avx2 ] || [ "$set_name" = avx512 ]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
  has() { [[ " $flags " == *" $1 "* ]]; }
  if ! has avx2; then echo "skipped: this CPU has no avx2"; exit 77; fi
  # ATen's avx512 set needs avx512f, bw, vl and dq.
  widest=avx2
  if has avx512f && has avx512bw && has avx512vl && has avx512dq; then widest=avx512; fi
  if [ "$set_name" = avx512 ] && [ "$widest" != avx512 ]; then echo "skipped: this CPU has no avx512"; exit 77; fi
  if [ "$set_name" = "$widest" ]; then
    echo "skipped: $set_name is this CPU's own kernel set, which the plain run of the test used"
    exit 77
  fi
fi
export ATEN_CPU_CAPABILITY=$set_name
exec "$@"
