#!/usr/bin/env bash
# The C++ libraries' unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer:
# the cache simulator, the scheduler, trace files and plots (no OpenCL in them, so no driver's
# own reports). Any report fails the run. Its own build folder: build-sanitize/.
#   scripts/sanitize.sh        (after scripts/setup.sh; scripts/test.sh runs it last)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/build-sanitize"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S "$here" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
tests=(tests/cachesim/cltrace_cachesim_tests tests/scheduler/cltrace_scheduler_tests tests/runtime/runtime_tests
       tests/plot/plot_tests)
cmake --build "$out" -j"$(nproc)" --target "${tests[@]##*/}"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${tests[@]}"; do
  name=$(basename "$t")
  log="$out/$name.log"
  run() { (cd "$out/$(dirname "$t")" && "./$name" >"$log" 2>&1); }
  ok=0
  if run; then
    ok=1
  elif grep -q "LeakSanitizer has encountered a fatal error" "$log"; then
    # LeakSanitizer needs ptrace, which some containers forbid; the other checks still run.
    echo "sanitize: $name: LeakSanitizer cannot run here; running again without leak checks"
    ASAN_OPTIONS=detect_leaks=0 run && ok=1
  fi
  if [ $ok = 1 ]; then
    echo "sanitize: $name passed ($(grep -c '^\[       OK \]' "$log") tests)"
  else
    echo "sanitize: $name FAILED; its output ($log) ends:" >&2
    tail -40 "$log" >&2
    status=1
  fi
done
exit $status
