# A kernel that cannot be instrumented, launched three times under `cltrace wrap`: the program
# runs as it would alone, the first launch says why it cannot be traced, and the later ones are
# refused at once (not instrumented again, each saying the same at length); after a compile
# error's lines, that the launch runs untraced is a line of its own.
source "$(dirname "$0")/lib.sh"
# A read through a pointer that may be a program-scope variable or the buffer (OpenCL 2.0):
# cltrace cannot tell which, so refuses the kernel.
cat > "$work/sel.cl" <<'CL'
global float lut[16];
__kernel void k(__global float* a) {
  global float* q = a[0] > 0 ? lut : a;
  a[get_global_id(0)] = q[1];
}
CL
plain=$("$ONE_BUFFER_HOST" "$work/sel.cl" -cl-std=CL2.0 3) || fail "the host alone: $plain"
out=$("$CLTRACE" wrap --out "$work/t" -- "$ONE_BUFFER_HOST" "$work/sel.cl" -cl-std=CL2.0 3 2>"$work/err") ||
  fail "wrapped: $(cat "$work/err")"
[ "$out" = "$plain" ] || fail "wrapped output: $out (alone: $plain)"
why="kernel 'k' reads through a pointer that may point into the program-scope variable 'lut' or into a buffer"
[ "$(grep -cF "could not trace k launch 0: $why" "$work/err")" -eq 1 ] || fail "launch 0: $(cat "$work/err")"
[ "$(grep -cF "$why" "$work/err")" -eq 1 ] || fail "the reason said more than once: $(cat "$work/err")"
for n in 1 2; do
  grep -F "could not trace k launch $n: its instrumented kernel could not be made at launch 0 (said then); it runs untraced" \
    "$work/err" >/dev/null || fail "launch $n: $(cat "$work/err")"
done
[ "$(cut -f1,2 "$work/t/untraced.tsv" | tr '\t\n' ': ')" = "0:k 1:k 2:k " ] || fail "untraced.tsv: $(cat "$work/t/untraced.tsv")"
echo "ok: an untraceable kernel is refused once with its reason, then at once"

# A kernel cltrace cannot compile (an OpenCL C 2.0 builtin without -cl-std; PoCL takes 3.0):
# the compiler's lines, the hint, then that the launch runs untraced on a line of its own.
printf '__kernel void k(__global float* a) { a[get_global_linear_id()] = 1.0f; }\n' > "$work/linear.cl"
plain=$("$ONE_BUFFER_HOST" "$work/linear.cl" "" 1) || fail "the host alone: $plain"
out=$("$CLTRACE" wrap --out "$work/lin" -- "$ONE_BUFFER_HOST" "$work/linear.cl" "" 1 2>"$work/lin.err") ||
  fail "wrapped: $(cat "$work/lin.err")"
[ "$out" = "$plain" ] || fail "wrapped output: $out (alone: $plain)"
grep -Fx "cltrace: the program's k launch 0 runs untraced" "$work/lin.err" > /dev/null ||
  fail "no line saying the launch runs untraced: $(cat "$work/lin.err")"
grep -Fx "; it runs untraced" "$work/lin.err" > /dev/null && fail "a fragment on its own line: $(cat "$work/lin.err")"
grep -F "could not trace k launch 0: the kernel does not compile" "$work/lin.err" > /dev/null ||
  fail "no reason: $(cat "$work/lin.err")"
echo "ok: after a compiler's lines, the launch runs untraced is a line of its own"
