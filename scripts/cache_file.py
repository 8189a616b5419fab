#!/usr/bin/env python3
"""Moves an i8gemm cache between machines as one file.

    cache_file.py pack CACHE.sqlite OUT[.xz]    checkpoint the WAL into the database, then copy
                                                 (xz-compressed when OUT ends in .xz)
    cache_file.py unpack IN[.xz] CACHE.sqlite    the reverse; refuses to overwrite CACHE

The checkpoint matters: SQLite keeps recent commits in CACHE-wal until a checkpoint, so a copy of
CACHE alone (say after `timeout` stopped a tune) loses the buckets tuned last. Uses only the
standard library (sqlite3, lzma), which every python3 here and on the GPU machines has.
"""
import lzma
import os
import shutil
import sqlite3
import sys


def pack(cache, out):
    if not os.path.isfile(cache):
        raise SystemExit(f"cache_file: {cache}: no such file")
    con = sqlite3.connect(cache)
    try:
        busy, _, _ = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        con.close()
    if busy:
        raise SystemExit(f"cache_file: {cache} is in use; its WAL could not be checkpointed")
    # xz preset 1: a 117 MB cache of compiled candidates packs in ~2 s to ~11.5 MB, where the
    # default preset 6 took ~24 s for ~8.4 MB (here, 2026-12-05) -- time a GPU call that packs its
    # cache at the end of a tune does not have (session 32's first call ran out while packing).
    opener = (lambda path, mode: lzma.open(path, mode, preset=1)) if out.endswith(".xz") else open
    with open(cache, "rb") as src, opener(out + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.replace(out + ".part", out)


def unpack(src, cache):
    if os.path.exists(cache):
        raise SystemExit(f"cache_file: {cache} exists; not overwritten")
    opener = lzma.open if src.endswith(".xz") else open
    try:
        with opener(src, "rb") as s, open(cache + ".part", "wb") as d:
            shutil.copyfileobj(s, d, 1 << 20)
    except (OSError, lzma.LZMAError) as e:
        if os.path.exists(cache + ".part"):
            os.remove(cache + ".part")
        raise SystemExit(f"cache_file: cannot read {src}: {e}")
    os.replace(cache + ".part", cache)


def main(argv):
    if len(argv) != 3 or argv[0] not in ("pack", "unpack"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    (pack if argv[0] == "pack" else unpack)(argv[1], argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
