#!/usr/bin/env bash
# collate → fixmate -m → sort → markdup, four ways, on the same simulated input and threads:
#   samtools-files  samtools as four commands with intermediate files
#   samtools-pipe   samtools as a 4-process pipe (collate -O -u | fixmate -m -u | sort -u | markdup)
#   mdsam-pipe      mdsam's four subcommands piped the same way
#   mdsam-pipeline  mdsam markdup-pipeline (one process, one record list)
#   mdsam-isal      the same with --output-fmt-option deflate=isal (ISA-L deflate; not at -u)
# each at the default output level, level 1 and uncompressed (-u). Prints wall time, CPU time
# (user+sys) and peak RSS, and draws an SVG bar chart into bench-out/markdup-pipeline-PAIRS.svg.
#
#   benches/markdup-pipeline.sh [PAIRS]          (default 500000 pairs ≈ 1 M reads)
#
# SAMTOOLS picks samtools (default /usr/bin/samtools), THREADS the -@ value (default 2),
# MDSAM the mdsam binary (default target/release/mdsam).
#
# Measurement: every process runs under GNU time (`-f '%e %U %S %M'`). Wall is the outer wall
# time of the whole recipe; CPU is the sum over its processes; peak RSS is the largest single
# process for sequential commands and the sum over the processes of a pipe (they run at the
# same time; the sum is an upper bound of the pipe's peak).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-500000}
threads=${THREADS:-2}
samtools=${SAMTOOLS:-/usr/bin/samtools}
mdsam=${MDSAM:-target/release/mdsam}
out=bench-out
mkdir -p "$out"
[ -x "$mdsam" ] || cargo build --release --quiet
input="$out/mp-$pairs.bam"
[ -s "$input" ] || "$mdsam" simulate -n "$pairs" -@ "$threads" -o "$input"
tmp=$(mktemp -d "$out/mp-tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
T=(/usr/bin/time -f '%e %U %S %M')

# stage NAME CMD...: runs CMD under GNU time, its numbers into $tmp/t.NAME.
stage() { local n=$1; shift; "${T[@]}" -o "$tmp/t.$n" "$@"; }
# summary MODE: "cpu rss" over $tmp/t.* (MODE max or sum for RSS), then clears them.
summary() {
  cat "$tmp"/t.* | awk -v mode="$1" '{cpu += $2 + $3; if (mode == "sum") rss += $4; else if ($4 > rss) rss = $4}
    END {printf "%.2f %.0f\n", cpu, rss / 1024}'
  rm -f "$tmp"/t.*
}
now() { date +%s.%N; }

# level_args TOOL LEVEL: markdup's output-level options (samtools markdup's -l is a read length).
# Uncompressed is asked for as level=0: samtools 1.16's markdup -u still compresses a file output
# at the default level (1.24's does not), which would make the samtools pipe look slower.
md_level() {
  case $1 in
    default) ;;
    1) echo "--output-fmt-option level=1" ;;
    u) echo "--output-fmt-option level=0" ;;
  esac
}
pl_level() {
  case $1 in
    default) ;;
    1) echo "-l 1" ;;
    u) echo "-u" ;;
  esac
}

results="$tmp/results.tsv"
: > "$results"
record() { # recipe level wall cpu rss
  echo "$*" | tr ' ' '\t' >> "$results"
  printf '%-16s %-8s %9.2f %9.2f %9s\n' "$@"
}

printf '%-16s %-8s %9s %9s %9s\n' recipe level wall_s cpu_s rss_MiB
for level in default 1 u; do
  # shellcheck disable=SC2046
  for tool in samtools mdsam; do
    bin=$samtools; [ $tool = mdsam ] && bin=$mdsam
    # Four commands with intermediate files (samtools only, as in the paper).
    if [ $tool = samtools ]; then
      s=$(now)
      stage 1 "$bin" collate -@ "$threads" -u -o "$tmp/c.bam" "$input"
      stage 2 "$bin" fixmate -@ "$threads" -m -u "$tmp/c.bam" "$tmp/f.bam"
      stage 3 "$bin" sort -@ "$threads" -u -o "$tmp/s.bam" "$tmp/f.bam"
      stage 4 "$bin" markdup -@ "$threads" $(md_level $level) "$tmp/s.bam" "$tmp/out.bam"
      e=$(now)
      read -r cpu rss < <(summary max)
      record samtools-files $level "$(echo "$e - $s" | bc)" "$cpu" "$rss"
      rm -f "$tmp"/*.bam
    fi
    s=$(now)
    stage 1 "$bin" collate -@ "$threads" -O -u "$input" \
      | stage 2 "$bin" fixmate -@ "$threads" -m -u - - \
      | stage 3 "$bin" sort -@ "$threads" -u - \
      | stage 4 "$bin" markdup -@ "$threads" $(md_level $level) - "$tmp/out.bam"
    e=$(now)
    read -r cpu rss < <(summary sum)
    record $tool-pipe $level "$(echo "$e - $s" | bc)" "$cpu" "$rss"
    rm -f "$tmp"/*.bam
  done
  s=$(now)
  stage 1 "$mdsam" markdup-pipeline -@ "$threads" $(pl_level $level) "$input" "$tmp/out.bam"
  e=$(now)
  read -r cpu rss < <(summary max)
  record mdsam-pipeline $level "$(echo "$e - $s" | bc)" "$cpu" "$rss"
  rm -f "$tmp"/*.bam
  [ $level = u ] && continue
  s=$(now)
  # shellcheck disable=SC2046
  stage 1 "$mdsam" markdup-pipeline -@ "$threads" $(pl_level $level) \
    --output-fmt-option deflate=isal "$input" "$tmp/out.bam"
  e=$(now)
  read -r cpu rss < <(summary max)
  record mdsam-isal $level "$(echo "$e - $s" | bc)" "$cpu" "$rss"
  rm -f "$tmp"/*.bam
done

svg="$out/markdup-pipeline-$pairs.svg"
python3 - "$results" "$svg" "$pairs" "$threads" <<'EOF'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
svg_path, pairs, threads = sys.argv[2], sys.argv[3], sys.argv[4]
recipes = ["samtools-files", "samtools-pipe", "mdsam-pipe", "mdsam-pipeline", "mdsam-isal"]
colours = ["#9e9e9e", "#616161", "#64b5f6", "#1565c0", "#2e7d32"]
levels = ["default", "1", "u"]
metrics = [("wall time (s)", 2), ("CPU time (s)", 3), ("peak RSS (MiB)", 4)]
data = {(r[0], r[1]): r for r in rows}
W, H, pad, top = 300, 260, 50, 60
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * 3 + 40}" height="{H + top + 60}" font-family="sans-serif" font-size="11">',
       f'<text x="10" y="20" font-size="14">collate + fixmate -m + sort + markdup, {pairs} pairs, -@ {threads}</text>']
for i, (title, col) in enumerate(metrics):
    x0 = 20 + i * W
    vals = [float(r[col]) for r in rows]
    vmax = max(vals) if vals else 1
    out.append(f'<text x="{x0 + W / 2}" y="{top - 15}" text-anchor="middle" font-size="12">{title}</text>')
    out.append(f'<line x1="{x0 + pad - 10}" y1="{top + H}" x2="{x0 + W - 10}" y2="{top + H}" stroke="black"/>')
    gw = (W - pad) / len(levels)
    bw = gw / (len(recipes) + 1)
    for j, lv in enumerate(levels):
        gx = x0 + pad - 5 + j * gw
        out.append(f'<text x="{gx + gw / 2 - bw / 2}" y="{top + H + 15}" text-anchor="middle">{"level " + lv if lv != "u" else "-u"}</text>')
        for k, rc in enumerate(recipes):
            r = data.get((rc, lv))
            if not r:
                continue
            v = float(r[col])
            h = H * v / vmax if vmax else 0
            x = gx + k * bw
            out.append(f'<rect x="{x:.1f}" y="{top + H - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" fill="{colours[k]}"><title>{rc} {lv}: {v}</title></rect>')
            out.append(f'<text x="{x + bw / 2:.1f}" y="{top + H - h - 2:.1f}" text-anchor="middle" font-size="8">{v:g}</text>')
for k, rc in enumerate(recipes):
    x = 20 + k * 170
    out.append(f'<rect x="{x}" y="{top + H + 30}" width="12" height="12" fill="{colours[k]}"/><text x="{x + 16}" y="{top + H + 40}">{rc}</text>')
out.append("</svg>")
open(svg_path, "w").write("\n".join(out) + "\n")
print(f"chart: {svg_path}")
EOF
