#!/usr/bin/env bash
# The seed paper's allocator figure: time to read a whole SAM and a whole BAM input into the
# record store, for each thread count and allocator, repeated. Prints a table (median, min, max
# seconds and allocations per record) and draws bench-out/load.svg.
#
#   benches/load.sh [PAIRS] [REPEATS] [THREADS...]     (defaults: 500000 pairs, 3 repeats, 1 2)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-500000}
repeats=${2:-3}
shift $(( $# > 2 ? 2 : $# )) || true
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
mdsam=${MDSAM:-target/release/mdsam}
out=bench-out
mkdir -p "$out"
[ -x "$mdsam" ] || cargo build --release --quiet
sam="$out/load-$pairs.sam"
bam="$out/load-$pairs.bam"
[ -s "$sam" ] || "$mdsam" simulate -n "$pairs" -o "$sam"
[ -s "$bam" ] || "$mdsam" view -b -@ 1 -o "$bam" "$sam"

raw="$out/load-raw.tsv"
: > "$raw"
for r in $(seq "$repeats"); do
  for t in "${threads[@]}"; do
    for a in system mimalloc jemalloc bump; do
      for input in "$sam" "$bam"; do
        fmt=${input##*.}
        # -@ counts extra threads, as in samtools.
        line=$(MDSAM_COUNT_ALLOCS=1 "$mdsam" --allocator "$a" load -@ $((t - 1)) "$input" 2>/dev/null)
        printf '%s\t%s\t%s\n' "$fmt" "$t" "$line" >> "$raw"
      done
    done
  done
done

python3 - "$raw" "$out/load.svg" <<'PY'
import statistics, sys
from collections import defaultdict
raw, svg_path = sys.argv[1], sys.argv[2]
runs = defaultdict(list)
allocs = {}
for line in open(raw):
    fmt, threads, secs, records, _bytes, n_alloc, alloc, _t = line.rstrip("\n").split("\t")
    key = (fmt, alloc, int(threads))
    runs[key].append(float(secs))
    allocs[key] = int(n_alloc) / max(int(records), 1)
print(f"{'input':6} {'allocator':9} {'threads':>7} {'median_s':>9} {'min_s':>7} {'max_s':>7} {'allocs/record':>14}")
for key in sorted(runs):
    t = runs[key]
    print(f"{key[0]:6} {key[1]:9} {key[2]:7d} {statistics.median(t):9.3f} {min(t):7.3f} {max(t):7.3f} {allocs[key]:14.5f}")

# One panel per input format: median seconds by thread count, one line per allocator.
colors = {"system": "#1b9e77", "mimalloc": "#d95f02", "jemalloc": "#7570b3", "bump": "#e7298a"}
fmts = sorted({k[0] for k in runs})
threads = sorted({k[2] for k in runs})
W, H, pad = 360, 260, 50
ymax = max(statistics.median(v) for v in runs.values()) * 1.1
parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(fmts)}" height="{H + 40}" font-family="sans-serif" font-size="12">']
for i, fmt in enumerate(fmts):
    x0 = i * W
    parts.append(f'<text x="{x0 + W / 2}" y="16" text-anchor="middle">load {fmt.upper()} into the record store</text>')
    parts.append(f'<line x1="{x0 + pad}" y1="{H}" x2="{x0 + W - 20}" y2="{H}" stroke="black"/>')
    parts.append(f'<line x1="{x0 + pad}" y1="30" x2="{x0 + pad}" y2="{H}" stroke="black"/>')
    parts.append(f'<text x="{x0 + 12}" y="{(H + 30) / 2}" transform="rotate(-90 {x0 + 12} {(H + 30) / 2})" text-anchor="middle">seconds (median)</text>')
    xs = lambda t: x0 + pad + (threads.index(t) + 0.5) * (W - pad - 20) / len(threads)
    ys = lambda s: H - (s / ymax) * (H - 30)
    for t in threads:
        parts.append(f'<text x="{xs(t)}" y="{H + 16}" text-anchor="middle">{t} thread{"s" if t > 1 else ""}</text>')
    for j, (alloc, color) in enumerate(colors.items()):
        pts = [(xs(t), ys(statistics.median(runs[(fmt, alloc, t)]))) for t in threads if (fmt, alloc, t) in runs]
        if pts:
            parts.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (color, " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)))
            for x, y in pts:
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>')
        parts.append(f'<text x="{x0 + W - 100}" y="{40 + 14 * j}" fill="{color}">{alloc}</text>')
parts.append("</svg>")
open(svg_path, "w").write("\n".join(parts))
print(f"plot: {svg_path}")
PY
