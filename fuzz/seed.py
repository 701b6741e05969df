#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/ from fixtures/ and a small simulated data set.

Usage: python3 fuzz/seed.py [MDSAM_BINARY]
The binary (default target/release/mdsam) writes the simulated SAM and BAM; without it only the
fixtures are used. Deterministic; the corpus directory is not committed (libFuzzer adds to it).
"""

import glob
import gzip
import os
import struct
import subprocess
import sys
import tempfile
import zlib

FUZZ = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FUZZ)
CORPUS = os.path.join(FUZZ, "corpus")
# Seeds stay small so libFuzzer's default -max_len (the largest seed) keeps runs fast.
MAX_SEED = 16 << 10


def inflate_bgzf(data):
    """Every complete gzip member's inflated bytes (BGZF is multi-member gzip)."""
    out = b""
    while data:
        d = zlib.decompressobj(31)
        try:
            out += d.decompress(data)
        except zlib.error:
            break
        if not d.eof:
            break
        data = d.unused_data
    return out


def bam_header_len(raw):
    """Length of the BAM header at the front of inflated `raw`, or None."""
    if len(raw) < 12 or raw[:4] != b"BAM\x01":
        return None
    (l_text,) = struct.unpack_from("<i", raw, 4)
    at = 8 + l_text
    if at + 4 > len(raw):
        return None
    (n_ref,) = struct.unpack_from("<i", raw, at)
    at += 4
    for _ in range(max(n_ref, 0)):
        if at + 4 > len(raw):
            return None
        (l_name,) = struct.unpack_from("<i", raw, at)
        at += 8 + l_name
    return at if at <= len(raw) else None


def bam_records(raw, start):
    """The records (without block_size) from `start` of inflated BAM `raw`."""
    at = start
    while at + 4 <= len(raw):
        (size,) = struct.unpack_from("<i", raw, at)
        if size < 0 or at + 4 + size > len(raw):
            return
        yield raw[at + 4 : at + 4 + size]
        at += 4 + size


def cut_at_records(raw, start, limit):
    """`raw` up to the last record boundary before `limit` bytes."""
    end = start
    for rec in bam_records(raw, start):
        if end + 4 + len(rec) > limit:
            break
        end += 4 + len(rec)
    return raw[:end]


class Corpus:
    def __init__(self):
        self.count = {}

    def add(self, target, name, data):
        if not data or len(data) > MAX_SEED:
            return
        directory = os.path.join(CORPUS, target)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
        self.count[target] = self.count.get(target, 0) + 1


def split_sam(text):
    lines = text.split(b"\n")
    header = b"".join(l + b"\n" for l in lines if l.startswith(b"@"))
    records = [l for l in lines if l and not l.startswith(b"@")]
    return header, records


def add_sam(corpus, name, text):
    header, records = split_sam(text)
    corpus.add("sam_header", name, header)
    for i in range(0, min(len(records), 40), 2):
        corpus.add("sam_line", f"{name}.{i}", b"\n".join(records[i : i + 2]))


def add_bam(corpus, name, data):
    corpus.add("bgzf_block", name, data[:MAX_SEED])
    raw = inflate_bgzf(data)
    header_len = bam_header_len(raw)
    if header_len is None:
        return
    corpus.add("bam_header", name, raw[:header_len])
    corpus.add("bam_stream", name, cut_at_records(raw, header_len, 8 << 10))
    for i, rec in enumerate(bam_records(raw, header_len)):
        if i == 20:
            break
        corpus.add("bam_record", f"{name}.{i}", rec)
    text = raw[8 : 8 + struct.unpack_from("<i", raw, 4)[0]].rstrip(b"\0")
    corpus.add("sam_header", name, text)


def add_size_claims(corpus):
    """bam_size_claims seeds: records (kind, claim, extra bytes; see fuzz/shared/size_claims.rs)
    that tell the truth, and ones lying in each size field, small and huge."""
    honest = bytes([4]) + struct.pack("<I", 0) + bytes([0])
    lies = [(0, 8), (0, 0xFFFFFFFF), (1, 0), (1, 255), (2, 0), (2, 0xFFFF), (3, 1 << 30), (3, 5)]
    for kind, claim in lies:
        lie = bytes([kind]) + struct.pack("<I", claim) + bytes([3]) + b"xyz"
        corpus.add("bam_size_claims", f"lie-{kind}-{claim}", honest + lie + honest)
    corpus.add("bam_size_claims", "honest", honest * 4)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/mdsam")
    corpus = Corpus()
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures/**/*"), recursive=True)):
        name = os.path.basename(path)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith(".sam"):
            add_sam(corpus, name, data)
        elif name.endswith(".bam"):
            add_bam(corpus, name, data)
        elif name.endswith((".bin", ".cram", ".bai", ".csi")):
            corpus.add("bgzf_block", name, data[:MAX_SEED])
    if os.access(binary, os.X_OK):
        with tempfile.TemporaryDirectory() as tmp:
            for order in ("name", "coordinate"):
                sam = os.path.join(tmp, f"sim-{order}.sam")
                bam = os.path.join(tmp, f"sim-{order}.bam")
                common = ["simulate", "-n", "30", "--read-length", "75", "--order", order]
                subprocess.run([binary, *common, "-o", sam], check=True)
                subprocess.run([binary, *common, "-o", bam], check=True)
                with open(sam, "rb") as f:
                    add_sam(corpus, f"sim-{order}.sam", f.read())
                with open(bam, "rb") as f:
                    add_bam(corpus, f"sim-{order}.bam", f.read())
    else:
        print(f"seed.py: {binary} not found; seeds from fixtures only", file=sys.stderr)
    add_size_claims(corpus)
    print("seeds: " + ", ".join(f"{t} {n}" for t, n in sorted(corpus.count.items())))


if __name__ == "__main__":
    main()
