#!/usr/bin/env bash
# Times every mdsam command against samtools (and sambamba when installed) on one simulated input,
# alternating the tools, and writes bench-out/compare.csv plus a bar chart of the ratios
# (bench-out/compare.svg; ratio = other tool's wall time / mdsam's, > 1: mdsam is faster).
# CPU time (user + sys) is recorded beside the wall time and its ratio printed too: on a shared,
# busy machine the CPU ratio is the steadier one.
#
#   benches/compare.sh [PAIRS] [REPEATS]      (defaults: 200000 pairs, 1 repeat; THREADS=2;
#                                             CASES: a regex of the cases to run, default all)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-200000}
repeats=${2:-1}
threads=${THREADS:-2}
samtools=${SAMTOOLS:-samtools}
mdsam=${MDSAM:-target/release/mdsam}
out=bench-out
mkdir -p "$out"
[ -x "$mdsam" ] || cargo build --release --quiet
sam="$out/cmp-$pairs.sam"
[ -s "$sam" ] || "$mdsam" simulate -n "$pairs" -o "$sam"
bam="$out/cmp-$pairs.bam"
[ -s "$bam" ] || "$samtools" view -b -@ "$threads" -o "$bam" "$sam"
named="$out/cmp-$pairs.named.bam"
[ -s "$named" ] || "$samtools" collate -o "$named" "$bam"
fixed="$out/cmp-$pairs.fixed.bam"
[ -s "$fixed" ] || "$samtools" fixmate -m "$named" "$fixed"
sorted="$out/cmp-$pairs.sorted.bam"
[ -s "$sorted" ] || "$samtools" sort -@ "$threads" -o "$sorted" "$fixed"
fasta="$out/cmp-$pairs.fa"
# The simulator's reference depends on its seed only: one pair writes the same FASTA.
[ -s "$fasta" ] || "$mdsam" simulate -n 1 --fasta "$fasta" -o /dev/null
[ -s "$fasta.fai" ] || "$samtools" faidx "$fasta"
# CRAM 3.0 on both sides: Debian's samtools 1.16 writes 3.0 by default, mdsam (as 1.24) 3.1.
cram="$out/cmp-$pairs.sorted.cram"
[ -s "$cram" ] || "$samtools" view -C -O cram,version=3.0 -T "$fasta" -o "$cram" "$sorted"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wall TOOL ARGS...: "wall,cpu" seconds of one run.
wall() {
  local t="$tmp/time"
  /usr/bin/time -o "$t" -f '%e %U %S' "$@" > /dev/null 2>/dev/null || true
  # A failing command's time still comes last, after time's "exited with" line.
  tail -n 1 "$t" | awk '{printf "%s,%.2f\n", $1, $2 + $3}'
}

csv="$out/compare.csv"
echo "command,tool,wall_s,cpu_s" > "$csv"
# case NAME ARGS... (ARGS after the tool name, with OUT standing for an output path)
case_() {
  local name=$1; shift
  [[ $name =~ ${CASES:-.} ]] || return 0
  for _ in $(seq "$repeats"); do
    for tool in "$samtools" "$mdsam"; do
      local args=("${@//OUT/$tmp/out.bam}")
      echo "$name,$(basename "$tool"),$(wall "$tool" "${args[@]}")" >> "$csv"
    done
  done
}
case_ "view -c -q 20" view -c -q 20 -@ "$threads" "$bam"
case_ "view BAM->SAM" view -h -@ "$threads" -o "$tmp/out.sam" "$bam"
case_ "view SAM->BAM" view -b -@ "$threads" -o OUT "$sam"
case_ "sort" sort -@ "$threads" -o OUT "$fixed"
case_ "sort -n" sort -n -@ "$threads" -o OUT "$bam"
case_ "collate" collate -@ "$threads" -o OUT "$bam"
case_ "fixmate -m" fixmate -m -@ "$threads" "$named" OUT
case_ "markdup" markdup -@ "$threads" "$sorted" OUT
case_ "flagstat" flagstat -@ "$threads" "$bam"
case_ "flagstat -O json" flagstat -O json -@ "$threads" "$bam"
[ -s "$sorted.bai" ] || "$samtools" index "$sorted"
case_ "idxstats" idxstats "$sorted"
# The coordinate-sorted input again under a name without an index: samtools' slow method.
unindexed="$tmp/unindexed.bam"
cp "$sorted" "$unindexed"
case_ "idxstats (no index)" idxstats -@ "$threads" "$unindexed"
case_ "cat" cat -o OUT "$bam" "$sorted" "$bam"
case_ "merge" merge -f -@ "$threads" -o OUT "$sorted" "$sorted"
case_ "checksum" checksum -@ "$threads" "$bam"
# stats on coordinate-sorted input: the coverage and GC-depth sections are filled in.
case_ "stats" stats -@ "$threads" "$sorted"
# Issue 19's commands: reference indexing and extraction, FASTQ out of a name-grouped BAM, depth
# and coverage of the coordinate-sorted one.
cp "$fasta" "$tmp/ref.fa"
case_ "faidx (index)" faidx "$tmp/ref.fa"
case_ "faidx regions" faidx "$fasta" chr1:1000-900000 chr2 chr3:5-50000
case_ "fastq" fastq -@ "$threads" -1 "$tmp/1.fq" -2 "$tmp/2.fq" -0 /dev/null -s /dev/null "$named"
case_ "depth" depth -@ "$threads" "$sorted"
case_ "coverage" coverage "$sorted"
case_ "view BAM->CRAM" view -O cram,version=3.0 -T "$fasta" -@ "$threads" -o "$tmp/out.cram" "$sorted"
case_ "view CRAM->BAM" view -b -T "$fasta" -@ "$threads" -o OUT "$cram"
case_ "view -c CRAM" view -c -T "$fasta" -@ "$threads" "$cram"
echo "case,tool,bytes" > "$out/compare-sizes.csv"
for tool in "$samtools" "$mdsam"; do
  "$tool" view -O cram,version=3.0 -T "$fasta" -@ "$threads" -o "$tmp/size.cram" "$sorted"
  echo "BAM->CRAM size,$(basename "$tool"),$(stat -c %s "$tmp/size.cram")" >> "$out/compare-sizes.csv"
done
if command -v sambamba > /dev/null && [[ sambamba =~ ${CASES:-.} ]]; then
  for _ in $(seq "$repeats"); do
    echo "sort,sambamba,$(wall sambamba sort -t "$((threads + 1))" -o "$tmp/s.bam" "$fixed")" >> "$csv"
    echo "markdup,sambamba,$(wall sambamba markdup -t "$((threads + 1))" "$sorted" "$tmp/m.bam")" >> "$csv"
  done
fi

python3 - "$csv" "$out/compare.svg" <<'PY'
import csv, statistics, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
times = defaultdict(list)
cpu = defaultdict(list)
for r in rows:
    times[(r["command"], r["tool"])].append(float(r["wall_s"]))
    cpu[(r["command"], r["tool"])].append(float(r["cpu_s"]))
commands = list(dict.fromkeys(r["command"] for r in rows))
tools = [t for t in dict.fromkeys(r["tool"] for r in rows) if t != "mdsam"]
print(f"{'command':18} {'tool':10} {'tool_s':>8} {'mdsam_s':>8} {'ratio':>6} {'cpu_ratio':>9}")
bars = []
for c in commands:
    m = statistics.median(times[(c, "mdsam")])
    for t in tools:
        if (c, t) in times:
            s = statistics.median(times[(c, t)])
            # GNU time's 0.00 (a run under 5 ms) counts as 0.01 s.
            ratio = max(s, 0.01) / max(m, 0.01)
            cr = max(statistics.median(cpu[(c, t)]), 0.01) / max(statistics.median(cpu[(c, "mdsam")]), 0.01)
            print(f"{c:18} {t:10} {s:8.2f} {m:8.2f} {ratio:6.2f} {cr:9.2f}")
            bars.append((f"{c} vs {t}", ratio))
W, bar_h = 640, 22
H = 40 + bar_h * len(bars)
top = max([r for _, r in bars] + [1.0]) * 1.1
x = lambda v: 200 + v / top * (W - 220)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 20}" font-family="sans-serif" font-size="12">',
       f'<text x="{W / 2}" y="16" text-anchor="middle">wall-time ratio other/mdsam (&gt; 1: mdsam faster)</text>',
       f'<line x1="{x(1):.1f}" y1="24" x2="{x(1):.1f}" y2="{H}" stroke="gray" stroke-dasharray="4"/>']
for i, (label, r) in enumerate(bars):
    y = 30 + i * bar_h
    color = "#1b9e77" if r >= 1 else "#d95f02"
    svg.append(f'<text x="195" y="{y + 14}" text-anchor="end">{label}</text>')
    svg.append(f'<rect x="200" y="{y + 3}" width="{x(r) - 200:.1f}" height="{bar_h - 6}" fill="{color}"/>')
    svg.append(f'<text x="{x(r) + 4:.1f}" y="{y + 14}">{r:.2f}</text>')
svg.append("</svg>")
open(sys.argv[2], "w").write("\n".join(svg))
print(f"csv: {sys.argv[1]}  plot: {sys.argv[2]}")
PY
