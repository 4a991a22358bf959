# A host program whose OpenCL objects come and go (tests/e2e/lifetime_host.cpp) under
# `cltrace wrap`: a cloned kernel is traced with its own arguments; a program made from a
# binary at the address of a released source program is not taken for it (it runs untraced,
# as every program not built from source); a kernel's printf prints once.
source "$(dirname "$0")/lib.sh"
plain=$("$LIFETIME_HOST")
wrapped=$("$CLTRACE" wrap --out "$work/t" -- "$LIFETIME_HOST" 2>"$work/err") || fail "wrapped exit status: $(cat "$work/err")"
# Device printf and the host's stdout are separate streams into the pipe: compare the lines.
[ "$(echo "$plain" | sort)" = "$(echo "$wrapped" | sort)" ] || fail "output differs:
$plain
---
$wrapped"
[ "$(echo "$wrapped" | grep -c '^hello from work-item 0$')" = 1 ] || fail "printf did not print once: $wrapped"
[ "$(echo "$wrapped" | grep -c ' correct$')" = 2 ] || fail "results: $wrapped"
[ "$(cut -f2 "$work/t/launches.tsv" | tr '\n' ' ')" = "scale scale hello " ] || fail "launches: $(cat "$work/t/launches.tsv")"
grep -q "cannot trace k launch 2: its program was not created from source" "$work/err" || fail "binary program: $(cat "$work/err")"
# The clone's launch: 64 work-items, each a load and a store of d.
"$CLTRACE" stats "$work/t/scale-1.cltrace" | grep -E "^records: 128$" >/dev/null || fail "clone: $("$CLTRACE" stats "$work/t/scale-1.cltrace" | head -3)"
# With a NULL-local or stand-in launch the kernel runs again after tracing; printf still prints
# once: the sample host's launches print nothing, so check `run` on a printing kernel instead.
printf '__kernel void p(__global int* d) { printf("item %%d\\n", (int)get_global_id(0)); d[get_global_id(0)] = 1; }\n' > "$work/p.cl"
out=$("$CLTRACE" run "$work/p.cl" --kernel p --global 4 --local 2 --arg buffer:int:4 -o "$work/p.cltrace")
[ "$(echo "$out" | grep -c '^item ')" = 4 ] || fail "run printed: $out"
echo "wrap lifetimes: all checks passed"
