#!/usr/bin/env python3
"""Copies a tuning database for transport: the binaries table (compiled CUBINs) emptied, VACUUM, gzip.
Usage: python3 bench/pack_db.py SRC.db DEST.db.gz"""
import gzip
import shutil
import sqlite3
import sys
import tempfile

src, dest = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    copy = tmp + "/copy.db"
    with sqlite3.connect(src) as s, sqlite3.connect(copy) as d:
        s.backup(d)
    con = sqlite3.connect(copy)
    if con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='binaries'").fetchone():
        con.execute("DELETE FROM binaries")
        con.commit()
    con.execute("VACUUM")
    con.close()
    with open(copy, "rb") as f, gzip.open(dest, "wb") as g:
        shutil.copyfileobj(f, g)
