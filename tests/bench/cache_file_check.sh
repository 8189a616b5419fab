#!/usr/bin/env bash
# scripts/cache_file.py, which moves a cache between machines (scripts/precompile.sh, gpu_bench.sh's
# PRECOMPILED and CACHE_OUT): what a process committed last and left in the WAL survives a pack
# (a copy of the database file alone loses it), pack/unpack round-trip a real i8gemm cache that
# `inspect` reads, and bad input gets a message and a non-zero status without touching a file.
#   cache_file_check.sh I8GEMM   (the built CLI)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
i8gemm="$1"
cf="$root/scripts/cache_file.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "cache_file_check: FAIL: $*" >&2; exit 1; }

# A writer that commits 200 rows in WAL mode and exits without a checkpoint (as `timeout` leaves
# a tune): the rows live in w.sqlite-wal.
python3 - "$tmp/w.sqlite" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE t(v INTEGER)")
c.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(200)])
c.commit()
os._exit(0)  # no close, no checkpoint
PY
[[ -s "$tmp/w.sqlite-wal" ]] || fail "the writer left no WAL (the check would prove nothing)"
cp "$tmp/w.sqlite" "$tmp/copy.sqlite"
rows_of() { python3 -c 'import sqlite3,sys
try: print(sqlite3.connect(sys.argv[1]).execute("select count(*) from t").fetchone()[0])
except sqlite3.Error: print("none")' "$1"; }
[[ "$(rows_of "$tmp/copy.sqlite")" != 200 ]] || fail "a plain copy kept the WAL's rows (the check would prove nothing)"
python3 "$cf" pack "$tmp/w.sqlite" "$tmp/w.sqlite.xz"
python3 "$cf" unpack "$tmp/w.sqlite.xz" "$tmp/back.sqlite"
[[ "$(rows_of "$tmp/back.sqlite")" == 200 ]] || fail "pack/unpack lost the rows left in the WAL"

# A real cache: two compiled kernels, packed, unpacked, listed.
"$i8gemm" tune --compile-only --arch sm_90a --shape 256x512 --filter 'wgmma_tma.*_bm64_bn64_bk128_wg2_s8_sc2_sk1$|decode_mma.*bm8_bn16_bk128_wk4_s3_sk1_sc1$' \
  --cache "$tmp/c.sqlite" -j 2 > "$tmp/compile.log" 2>&1 || fail "compile-only failed: $(tail -3 "$tmp/compile.log")"
python3 "$cf" pack "$tmp/c.sqlite" "$tmp/c.xz"
python3 "$cf" unpack "$tmp/c.xz" "$tmp/c2.sqlite"
"$i8gemm" inspect list --cache "$tmp/c2.sqlite" > "$tmp/list.txt" 2>&1 || fail "inspect of the unpacked cache failed"
[[ $(grep -c 'i8g_sm90a_' "$tmp/list.txt") -eq 2 ]] || fail "expected the two kernels in the unpacked cache: $(cat "$tmp/list.txt")"

# Bad input: an existing target is kept, an unreadable source and a missing cache are refused.
echo keep > "$tmp/exists.sqlite"
if python3 "$cf" unpack "$tmp/c.xz" "$tmp/exists.sqlite" 2> "$tmp/err"; then fail "unpack overwrote a file"; fi
grep -q 'exists; not overwritten' "$tmp/err" || fail "no message for an existing target"
[[ "$(cat "$tmp/exists.sqlite")" == keep ]] || fail "the existing file changed"
echo 'not xz' > "$tmp/bad.xz"
if python3 "$cf" unpack "$tmp/bad.xz" "$tmp/n.sqlite" 2> "$tmp/err"; then fail "a corrupt .xz was accepted"; fi
grep -q 'cannot read' "$tmp/err" || fail "no message for a corrupt .xz"
[[ ! -e "$tmp/n.sqlite" && ! -e "$tmp/n.sqlite.part" ]] || fail "a corrupt .xz left a file behind"
if python3 "$cf" pack "$tmp/missing.sqlite" "$tmp/m.xz" 2> "$tmp/err"; then fail "a missing cache was packed"; fi
grep -q 'no such file' "$tmp/err" || fail "no message for a missing cache"
if python3 "$cf" frobnicate 2> /dev/null; then fail "an unknown verb was accepted"; fi
echo "cache_file_check: ok"
