# Loads and stores of different types do not alias (C's type rules, which a GPU compiler
# applies): Rodinia particlefilter's likelihood kernel reads arrayX[i] and arrayY[i] (floats)
# once for its loop over the object's pixels, which stores only ints (ind[]), as the GPU keeps
# them in registers. Before, cltrace compiled without clang's type-based alias tags and read
# both on every iteration (9000 loads of them where the GPU makes 1000). Counts by hand, per
# work-item.
source "$(dirname "$0")/lib.sh"
cat > "$work/likelihood.cl" <<'CL'
__kernel void likelihood(__global const float* arrayX, __global const float* arrayY,
                         __global const int* objxy, __global int* ind, int countOnes, int IszY,
                         int Nfr, int k, int max_size) {
  int i = get_global_id(0);
  for (int y = 0; y < countOnes; y++) {
    int indX = (int)arrayX[i] + objxy[y * 2 + 1];
    int indY = (int)arrayY[i] + objxy[y * 2];
    ind[i * countOnes + y] = abs(indX * IszY * Nfr + indY * Nfr + k);
    if (ind[i * countOnes + y] >= max_size) ind[i * countOnes + y] = 0;
  }
}
CL
counts() {
  "$CLTRACE" stats "$1" | awk '$1 == "load" { l = $2 } $1 == "store" { s = $2 } END { print l, s }'
}
# 32 work-items, countOnes = 10: arrayX[i] and arrayY[i] once (2 loads), objxy twice per
# iteration (20), ind[] stored once per iteration (10) and read back from the value stored (no
# load); every index is below max_size, so no second store: 22 loads and 10 stores per work-item.
"$CLTRACE" run "$work/likelihood.cl" --kernel likelihood --global 32 --local 32 \
  --arg buffer:float:32:fill:1 --arg buffer:float:32:fill:2 --arg buffer:int:20:fill:1 \
  --arg buffer:int:320 --arg scalar:int:10 --arg scalar:int:8 --arg scalar:int:2 --arg scalar:int:3 \
  --arg scalar:int:100000 -o "$work/likelihood.cltrace" > /dev/null || fail "likelihood run"
[ "$(counts "$work/likelihood.cltrace")" = "704 320" ] ||
  fail "likelihood: loads stores $(counts "$work/likelihood.cltrace"), expected 704 320"
echo "ok: float loads are read once in a loop that stores only ints"
