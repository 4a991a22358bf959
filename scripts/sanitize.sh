#!/usr/bin/env bash
# The C++ libraries' unit tests built with sanitizers (no OpenCL in them, so no driver's own
# reports); any report fails the run:
#  - AddressSanitizer and UndefinedBehaviorSanitizer: the cache simulator, the scheduler, trace
#    files and plots (build folder build-sanitize/);
#  - ThreadSanitizer: the cache simulator, whose runs go on several threads at once, and the
#    scheduler, whose trace files are read ahead on a thread of their own (build-tsan/).
#   scripts/sanitize.sh        (after scripts/setup.sh; scripts/test.sh runs it last)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 TSAN_OPTIONS=halt_on_error=1
status=0

# Builds `tests` (paths below the build folder) into `out` with `flags`, then runs each.
check() {
  local out="$1" flags="$2"
  shift 2
  local tests=("$@")
  cmake -S "$here" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$out" -j"$(nproc)" --target "${tests[@]##*/}"
  local t name log ok
  # Runs test binary $t from its folder, its output in $log.
  run() { (cd "$out/$(dirname "$t")" && "./$name" >"$log" 2>&1); }
  for t in "${tests[@]}"; do
    name=$(basename "$t")
    log="$out/$name.log"
    ok=0
    if run; then
      ok=1
    elif grep -q "LeakSanitizer has encountered a fatal error" "$log"; then
      # LeakSanitizer needs ptrace, which some containers forbid; the other checks still run.
      echo "sanitize: $name: LeakSanitizer cannot run here; running again without leak checks"
      ASAN_OPTIONS=detect_leaks=0 run && ok=1
    fi
    if [ $ok = 1 ]; then
      echo "sanitize: $(basename "$out")/$name passed ($(grep -c '^\[       OK \]' "$log") tests)"
    else
      echo "sanitize: $(basename "$out")/$name FAILED; its output ($log) ends:" >&2
      tail -40 "$log" >&2
      status=1
    fi
  done
}

check "$here/build-sanitize" "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
  tests/cachesim/cltrace_cachesim_tests tests/scheduler/cltrace_scheduler_tests tests/runtime/runtime_tests \
  tests/plot/plot_tests
check "$here/build-tsan" "-fsanitize=thread" tests/cachesim/cltrace_cachesim_tests tests/scheduler/cltrace_scheduler_tests
exit $status
