# Helpers for the end-to-end scripts: a scratch directory and assertions that say what failed.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_error "words" command...: the command must exit non-zero and print the words.
expect_error() {
  local words=$1; shift
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || fail "expected failure of: $* (output: $out)"
  echo "$out" | grep -qF -- "$words" || fail "expected '$words' from: $* (got: $out)"
  echo "ok: $words"
}
