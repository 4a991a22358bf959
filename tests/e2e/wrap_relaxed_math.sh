# A program built with -cl-fast-relaxed-math: PoCL compiles its source with fast, approximate
# math, vectorised across a workgroup of 16, which the instrumented kernel does not reproduce bit for bit (10 of 64
# values differed by an ulp), so the traced launch puts the buffers back and the program's own
# kernel writes them: the program prints exactly what it prints alone.
source "$(dirname "$0")/lib.sh"
cat > "$work/fast.cl" <<'CL'
__kernel void k(__global float* a) {
  size_t i = get_global_id(0);
  float x = a[i], y = a[(i + 1) % 64];
  a[i + 64] = sqrt(fabs(y)) + x / y + exp(x) * 1e-3f;
}
CL
# The options may come with clCompileProgram and the link have none (a linked program is as
# approximate as its units were compiled: it used to be traced in place, and an ulp off).
for how in build link; do
  for options in -cl-fast-relaxed-math -cl-unsafe-math-optimizations; do
    plain=$("$ONE_BUFFER_HOST" "$work/fast.cl" "$options" 2 16 "$how") || fail "alone: $plain"
    wrapped=$("$CLTRACE" wrap --out "$work/t" -- "$ONE_BUFFER_HOST" "$work/fast.cl" "$options" 2 16 "$how" \
      2>"$work/err") || fail "wrapped: $(cat "$work/err")"
    [ "$plain" = "$wrapped" ] || fail "$how $options: values differ under wrap:
$plain
---
$wrapped"
    [ "$(cut -f1,2 "$work/t/launches.tsv" | tr '\t\n' ': ')" = "0:k 1:k " ] || fail "launches: $(cat "$work/t/launches.tsv")"
    echo "ok: $how $options: the same values under wrap, both launches traced"
  done
done
