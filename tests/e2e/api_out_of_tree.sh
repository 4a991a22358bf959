# A program outside cltrace's tree built against its C++ API as the README says (CMake
# add_subdirectory, linking cltrace_wrapper), then run: its traced launch computes and traces.
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
cmake -S "$here/api_project" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCLTRACE_SOURCE_DIR="$(cd "$here/../.." && pwd)" > "$work/configure.log" 2>&1 || fail "configure: $(tail -20 "$work/configure.log")"
cmake --build "$work/build" -j2 > "$work/build.log" 2>&1 || fail "build: $(tail -30 "$work/build.log")"
out=$("$work/build/myapp" "$work/saxpy.cltrace") || fail "myapp: $out"
# y[10] = 2 * 10 + 1; a load of x, a load and a store of y per work-item.
[ "$out" = "y[10] = 21, 192 records" ] || fail "myapp printed: $out"
"$CLTRACE" stats "$work/saxpy.cltrace" | grep -E "^records: 192$" >/dev/null || fail "trace: $("$CLTRACE" stats "$work/saxpy.cltrace")"
echo "ok: a program outside the tree builds against the API and traces"
