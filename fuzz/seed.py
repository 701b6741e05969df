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


# ---- CRAM seeds for cram_file: CRAMs mdsam writes, and the shapes other writers produce ----


def itf8_read(d, i):
    b = d[i]
    if b < 0x80:
        return b, i + 1
    if b < 0xC0:
        return ((b & 0x3F) << 8) | d[i + 1], i + 2
    if b < 0xE0:
        return ((b & 0x1F) << 16) | (d[i + 1] << 8) | d[i + 2], i + 3
    if b < 0xF0:
        return ((b & 0x0F) << 24) | (d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3], i + 4
    v = ((b & 0x0F) << 28) | (d[i + 1] << 20) | (d[i + 2] << 12) | (d[i + 3] << 4) | (d[i + 4] & 0x0F)
    return (v - (1 << 32) if v >= 1 << 31 else v), i + 5


def ltf8_read(d, i):
    b, n = d[i], 0
    while n < 8 and b & (0x80 >> n):
        n += 1
    v = b & (0xFF >> (n + 1)) if n < 7 else 0
    for k in range(n):
        v = (v << 8) | d[i + 1 + k]
    return v, i + 1 + n


def itf8(v):
    v &= 0xFFFFFFFF
    if v < 0x80:
        return bytes([v])
    if v < 0x4000:
        return bytes([0x80 | v >> 8, v & 0xFF])
    if v < 0x200000:
        return bytes([0xC0 | v >> 16, (v >> 8) & 0xFF, v & 0xFF])
    if v < 0x10000000:
        return bytes([0xE0 | v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF])
    return bytes([0xF0 | v >> 28, (v >> 20) & 0xFF, (v >> 12) & 0xFF, (v >> 4) & 0xFF, v & 0x0F])


def ltf8(v):
    return bytes([v]) if 0 <= v < 0x80 else b"\xff" + v.to_bytes(8, "big")


def cram_block(d, i, major):
    """(method, content type, id, raw size, data), next offset."""
    method, ctype = d[i], d[i + 1]
    cid, i = itf8_read(d, i + 2)
    size, i = itf8_read(d, i)
    raw, i = itf8_read(d, i)
    data = d[i : i + size]
    return [method, ctype, cid, raw, data], i + size + (4 if major >= 3 else 0)


def cram_block_bytes(b, major):
    out = bytes([b[0], b[1]]) + itf8(b[2]) + itf8(len(b[4])) + itf8(b[3]) + b[4]
    return out + (struct.pack("<I", zlib.crc32(out)) if major >= 3 else b"")


def cram_containers(d):
    """The file's containers as dicts of their header fields and body."""
    major, i, out = d[4], 26, []
    while i + 4 <= len(d):
        c = {"len": struct.unpack_from("<i", d, i)[0]}
        j = i + 4
        for f in ("ref", "start", "span", "records"):
            c[f], j = itf8_read(d, j)
        c["counter"], j = ltf8_read(d, j) if major >= 3 else itf8_read(d, j)
        c["bases"], j = ltf8_read(d, j)
        c["blocks"], j = itf8_read(d, j)
        n, j = itf8_read(d, j)
        c["landmarks"] = []
        for _ in range(n):
            v, j = itf8_read(d, j)
            c["landmarks"].append(v)
        j += 4 if major >= 3 else 0
        c["body"] = d[j : j + c["len"]]
        out.append(c)
        i = j + c["len"]
    return major, out


def cram_container_bytes(c, major, length=None):
    h = itf8(c["ref"]) + itf8(c["start"]) + itf8(c["span"]) + itf8(c["records"])
    h += ltf8(c["counter"]) if major >= 3 else itf8(c["counter"])
    h += ltf8(c["bases"]) + itf8(c["blocks"]) + itf8(len(c["landmarks"]))
    h += b"".join(itf8(x) for x in c["landmarks"])
    out = struct.pack("<i", len(c["body"]) if length is None else length) + h
    return out + (struct.pack("<I", zlib.crc32(out)) if major >= 3 else b"") + c["body"]


def cram_edit(d, edit_blocks=None, edit_container=None, header_length_delta=0):
    """`d` with each data container's blocks passed through `edit_blocks(blocks, major)` and its
    header fields through `edit_container`, the header container's length changed by the delta."""
    major, cs = cram_containers(d)
    out = d[:26] + cram_container_bytes(cs[0], major, cs[0]["len"] + header_length_delta)
    for c in cs[1:]:
        if c["records"] > 0 and edit_blocks:
            blocks, i = [], 0
            while i < len(c["body"]):
                b, i = cram_block(c["body"], i, major)
                blocks.append(b)
            blocks = edit_blocks(blocks, major)
            body, marks = b"", []
            for b in blocks:
                if b[1] == 2:
                    marks.append(len(body))
                body += cram_block_bytes(b, major)
            c["body"], c["landmarks"] = body, marks
        if c["records"] > 0 and edit_container:
            edit_container(c)
        out += cram_container_bytes(c, major)
    return out


def slice_header_edit(blocks, major, start=None, extra=None):
    """Slice headers with their start set, and `extra` blocks appended to each slice."""
    out = []
    for b in blocks:
        out.append(b)
        if b[1] != 2:
            continue
        d, j, fields = b[4], 0, []
        for _ in range(4):
            v, j = itf8_read(d, j)
            fields.append(v)
        counter, j = ltf8_read(d, j) if major >= 3 else itf8_read(d, j)
        nblocks, j = itf8_read(d, j)
        nids, j = itf8_read(d, j)
        ids = []
        for _ in range(nids):
            v, j = itf8_read(d, j)
            ids.append(v)
        if start is not None:
            fields[1] = start
        extra_blocks = extra or []
        ids += [e[2] for e in extra_blocks]
        h = b"".join(itf8(f) for f in fields) + (ltf8(counter) if major >= 3 else itf8(counter))
        h += itf8(nblocks + len(extra_blocks)) + itf8(len(ids)) + b"".join(itf8(x) for x in ids)
        b[4], b[3] = h + d[j:], len(h + d[j:])
        b.append(extra_blocks)
    # The extra blocks go after each slice's own blocks: before the next slice header.
    result, pending = [], []
    for b in out:
        if b[1] == 2:
            result += pending
            pending = b.pop()
        result.append(b)
    return result + pending


def empty_huffman(blocks, major):
    """The compression header with an `HC` series coded by a Huffman code without symbols."""
    d = blocks[0][4]
    size, i = itf8_read(d, 0)
    at = i + size
    size, i = itf8_read(d, at)
    count, j = itf8_read(d, i)
    entries = d[j : i + size] + b"HC" + itf8(3) + itf8(2) + b"\0\0"
    series = itf8(count + 1) + entries
    blocks[0][4] = d[:at] + itf8(len(series)) + series + d[i + size :]
    blocks[0][3] = len(blocks[0][4])
    return blocks


def cram_shapes(name, d):
    """`d` and the shapes of issue 45 / 43 made from it."""
    yield name, d
    shapes = {
        "empty-rans": lambda: cram_edit(d, lambda b, m: slice_header_edit(b, m, extra=[[4, 4, 90, 0, b""]])),
        "empty-nx16": lambda: cram_edit(d, lambda b, m: slice_header_edit(b, m, extra=[[5, 4, 91, 0, b""]])),
        "negative-start": lambda: cram_edit(d, lambda b, m: slice_header_edit(b, m, start=-5)),
        "empty-huffman": lambda: cram_edit(d, empty_huffman),
        "huge-count": lambda: cram_edit(d, edit_container=lambda c: c.update(records=(1 << 31) - 1)),
        "landmarks-off": lambda: cram_edit(
            d, edit_container=lambda c: c.update(landmarks=[x + len(c["body"]) for x in c["landmarks"]])
        ),
        "short-header": lambda: cram_edit(d, header_length_delta=-2),
    }
    for shape, make in shapes.items():
        try:
            yield f"{name}.{shape}", make()
        except (IndexError, struct.error):
            pass


def add_crams(corpus, binary, tmp):
    """CRAMs of a small simulated data set and of reads past a short contig's end, written by
    mdsam in each version, with the foreign shapes made from each."""
    fasta, sam = os.path.join(tmp, "ref.fa"), os.path.join(tmp, "sim.sam")
    subprocess.run([binary, "simulate", "-n", "20", "--read-length", "75", "--fasta", fasta, "-o", sam], check=True)
    short_fa, short_sam = os.path.join(tmp, "short.fa"), os.path.join(tmp, "short.sam")
    with open(short_fa, "w") as f:
        f.write(">c\nACGTACGTAC\n")
    with open(short_sam, "w") as f:
        f.write("@SQ\tSN:c\tLN:10\nr1\t0\tc\t2\t60\t10M\t*\t0\t0\tCGTACGTACG\t*\n")
        f.write("r2\t0\tc\t3\t60\t4M2D6M\t*\t0\t0\tGTACGTACGA\t*\n")
    # mdsam writes 3.0 and 3.1; the samtools oracle, where installed (CI), 2.1 too: CRAM 2.1 has
    # no CRC32s, so its mutations reach the decoder instead of stopping at a checksum.
    oracle = os.path.expanduser("~/.cache/samtools-oracle/bin/samtools")
    writers = [("mdsam", binary, ("3.0", "3.1"))]
    if os.access(oracle, os.X_OK):
        writers.append(("samtools", oracle, ("2.1", "3.0")))
    for label, (fa, src) in {"sim": (fasta, sam), "past-end": (short_fa, short_sam)}.items():
        for writer, program, versions in writers:
            for version in versions:
                out = os.path.join(tmp, f"{label}-{writer}-{version}.cram")
                option = f"version={version}"
                args = [program, "view", "-C", "--output-fmt-option", option, "-T", fa, "-o", out, src]
                if subprocess.run(args, stderr=subprocess.DEVNULL).returncode != 0:
                    continue
                with open(out, "rb") as f:
                    for name, data in cram_shapes(os.path.basename(out), f.read()):
                        corpus.add("cram_file", name, data)



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
            if name.endswith(".cram"):
                corpus.add("cram_file", name, data)
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
            add_crams(corpus, binary, tmp)
    else:
        print(f"seed.py: {binary} not found; seeds from fixtures only", file=sys.stderr)
    add_size_claims(corpus)
    print("seeds: " + ", ".join(f"{t} {n}" for t, n in sorted(corpus.count.items())))


if __name__ == "__main__":
    main()
