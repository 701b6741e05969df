#!/usr/bin/env bash
# Scale benchmark: every command of mdsam against samtools on the same input, alternating the two
# tools, at several input sizes and two data shapes, so that a cost that grows faster than the
# input, or memory that grows with it, shows as a falling ratio or a rising ns per read.
#
#   benches/scale.sh [SIZES] [SHAPES]      (defaults: "0.5 2 6 12" million reads, "default deep")
#
# Shapes: default (`mdsam simulate`'s defaults: 8 references, 2 Mb, 8 % duplicates) and deep
# (one 4.6 Mb reference, 15 % duplicates: 40-160x coverage, long duplicate chains).
# Cases: view BAM->SAM, view SAM->BAM -u, sort, sort -n, collate, fixmate -m, markdup, and
# markdup-pipeline at -u, level 1 and the default level against samtools' 4-process pipe
# (collate -O -u | fixmate -m -u | sort -u | markdup); view BAM->BAM and markdup-pipeline at the
# default level again with mdsam's ISA-L deflate (`-isal`: --output-fmt-option deflate=isal);
# fastq, depth and coverage.
#
# Per case it prints the wall and CPU ratio samtools/mdsam (> 1: mdsam is faster), mdsam's wall
# and CPU ns per read, both tools' peak RSS (summed over the processes of a pipe) and whether the
# outputs hold the same records as samtools 1.24's (a checksum of the SAM records, header left
# out; the 1.24 oracle is run untimed for it when SAMTOOLS is another version; CHECK=0 skips
# it). Results go to bench-out/scale.csv (appended) and a chart bench-out/scale.svg.
#
# Environment: SAMTOOLS (default /usr/bin/samtools), MDSAM (target/release/mdsam), THREADS (-@,
# default 2), REPEATS (alternating runs per case, samtools first in odd repeats and mdsam first
# in even ones, median taken; default 1), CASES (a regex of
# case names to run, default all). Inputs are simulated once into bench-out/scale/ and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-"0.5 2 6 12"}
shapes=${2:-"default deep"}
threads=${THREADS:-2}
repeats=${REPEATS:-1}
samtools=${SAMTOOLS:-/usr/bin/samtools}
mdsam=${MDSAM:-target/release/mdsam}
cases=${CASES:-.}
check=${CHECK:-1}
# The samtools 1.24 oracle (../shared/tools/setup-oracle.sh), when installed: the outputs are
# checked against its records. ORACLE= (empty) compares with SAMTOOLS' output instead.
oracle=${ORACLE-$HOME/.cache/samtools-oracle/bin/samtools}
[ -x "$oracle" ] || oracle=
out=bench-out
dir=$out/scale
mkdir -p "$dir"
[ -x "$mdsam" ] || cargo build --release --quiet
tmp=$(mktemp -d "$dir/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
csv=$out/scale.csv
[ -s "$csv" ] || echo "shape,reads,case,samtools_wall_s,mdsam_wall_s,samtools_cpu_s,mdsam_cpu_s,wall_ratio,cpu_ratio,mdsam_wall_ns_per_read,mdsam_cpu_ns_per_read,samtools_rss_mb,mdsam_rss_mb,same_records" > "$csv"

shape_args() {
  case $1 in
    default) ;;
    deep) echo "--refs 1 --ref-length 4600000 --dup-rate 0.15" ;;
    *) echo "unknown shape $1" >&2; exit 1 ;;
  esac
}

# inputs SHAPE PAIRS: $name (simulated, name-grouped BAM), $coord (samtools fixmate -m + sort of
# it, markdup's input) and, when a SAM case runs, $sam (the same records as SAM).
inputs() {
  local base=$dir/$1-$2
  name=$base.name.bam
  coord=$base.coord.bam
  sam=$base.sam
  # shellcheck disable=SC2046
  [ -s "$name" ] || "$mdsam" simulate -n "$2" -@ "$threads" $(shape_args "$1") -o "$name"
  if [ ! -s "$coord" ]; then
    "$samtools" fixmate -@ "$threads" -m -u "$name" - | "$samtools" sort -@ "$threads" -o "$coord.tmp" -
    mv "$coord.tmp" "$coord"
  fi
  if [[ view-sam2bam-u =~ $cases ]] && [ ! -s "$sam" ]; then
    "$samtools" view -@ "$threads" -h -o "$sam.tmp" "$name" && mv "$sam.tmp" "$sam"
  fi
}

# shellcheck source=benches/lib/timing.sh
. benches/lib/timing.sh

# records FILE: a checksum of the records of FILE (SAM or BAM), header left out; of the whole
# file for text outputs (.txt, .fq).
records() {
  case $1 in
    *.txt | *.fq) md5sum < "$1" | cut -c1-16 ;;
    *) "$mdsam" view -@ "$threads" "$1" | md5sum | cut -c1-16 ;;
  esac
}

printf '%-8s %6s %-20s %8s %8s %7s %7s %8s %8s %8s %8s %5s\n' shape Mreads case st_wall md_wall \
  wall_x cpu_x md_ns/rd md_cpu_ns st_rssMB md_rssMB same
# case NAME EXT SAMTOOLS_CMD MDSAM_CMD: both strings use {bin} for the tool and {out} for the output.
one_case() {
  local label=$1 ext=$2 st_cmd=$3 md_cmd=$4
  [[ $label =~ $cases ]] || return 0
  local sw=() mw=() sc=() mc=() sr=0 mr=0 w c r
  # ABBA: the tool that runs second pays for the memory and page cache the first one left
  # (on this VM, pages the host has taken back are slow to touch again), so the order swaps
  # every repeat.
  for rep in $(seq "$repeats"); do
    local order="samtools mdsam"
    [ $((rep % 2)) = 0 ] && order="mdsam samtools"
    for tool in $order; do
      local cmd=$st_cmd bin=$samtools
      [ $tool = mdsam ] && cmd=$md_cmd && bin=$mdsam
      cmd=${cmd//\{bin\}/$T $bin}
      cmd=${cmd//\{out\}/$tmp/$tool.$ext}
      read -r w c r < <(run_timed "$cmd")
      if [ $tool = samtools ]; then sw+=("$w"); sc+=("$c"); sr=$r; else mw+=("$w"); mc+=("$c"); mr=$r; fi
    done
  done
  local same=- want=$tmp/samtools.$ext
  if [ "$check" = 1 ]; then
    if [ -n "$oracle" ]; then
      # The reference output is samtools 1.24's (untimed): older versions differ on purpose.
      want=$tmp/oracle.$ext
      cmd=${st_cmd//\{bin\}/$oracle}
      bash -c "${cmd//\{out\}/$want}" 2>/dev/null
    fi
    if [ "$(records "$want")" = "$(records "$tmp/mdsam.$ext")" ]; then same=yes; else same=NO; fi
  fi
  rm -f "$tmp"/samtools.* "$tmp"/mdsam.* "$tmp"/oracle.*
  local s m scpu mcpu
  s=$(printf '%s\n' "${sw[@]}" | median); m=$(printf '%s\n' "${mw[@]}" | median)
  scpu=$(printf '%s\n' "${sc[@]}" | median); mcpu=$(printf '%s\n' "${mc[@]}" | median)
  local wr cr ns cns
  wr=$(echo "$s / $m" | bc -l); cr=$(echo "$scpu / $mcpu" | bc -l)
  ns=$(echo "$m * 1000 / $mreads" | bc -l); cns=$(echo "$mcpu * 1000 / $mreads" | bc -l)
  printf '%-8s %6s %-20s %8.2f %8.2f %7.2f %7.2f %8.0f %8.0f %8s %8s %5s\n' "$shape" "$mreads" \
    "$label" "$s" "$m" "$wr" "$cr" "$ns" "$cns" "$sr" "$mr" "$same"
  printf '%s,%s,%s,%s,%s,%s,%s,%.3f,%.3f,%.0f,%.0f,%s,%s,%s\n' "$shape" "$mreads" "$label" "$s" \
    "$m" "$scpu" "$mcpu" "$wr" "$cr" "$ns" "$cns" "$sr" "$mr" "$same" >> "$csv"
}

# The samtools pipe of markdup-pipeline at a markdup output level (-u is asked for as level=0:
# samtools 1.16's markdup -u still compresses a file output).
pipe() {
  local level=$1
  echo "{bin} collate -@ $threads -O -u $name | {bin} fixmate -@ $threads -m -u - - \
    | {bin} sort -@ $threads -u - | {bin} markdup -@ $threads $level - {out}"
}

for shape in $shapes; do
  for mreads in $sizes; do
    pairs=$(echo "$mreads * 500000 / 1" | bc)
    inputs "$shape" "$pairs"
    t=$threads
    one_case view-bam2sam sam "{bin} view -h -@ $t -o {out} $name" "{bin} view -h -@ $t -o {out} $name"
    one_case view-sam2bam-u bam "{bin} view -@ $t -u -o {out} $sam" "{bin} view -@ $t -u -o {out} $sam"
    one_case sort bam "{bin} sort -@ $t -T $tmp/st -o {out} $name" "{bin} sort -@ $t -T $tmp/md -o {out} $name"
    one_case sort-n bam "{bin} sort -n -@ $t -T $tmp/st -o {out} $coord" "{bin} sort -n -@ $t -T $tmp/md -o {out} $coord"
    one_case collate bam "{bin} collate -@ $t -o {out} $coord $tmp/st" "{bin} collate -@ $t -o {out} $coord $tmp/md"
    one_case fixmate-m bam "{bin} fixmate -@ $t -m $name {out}" "{bin} fixmate -@ $t -m $name {out}"
    one_case markdup bam "{bin} markdup -@ $t $coord {out}" "{bin} markdup -@ $t $coord {out}"
    one_case pipeline-u bam "$(pipe '--output-fmt-option level=0')" "{bin} markdup-pipeline -@ $t -u $name {out}"
    one_case pipeline-l1 bam "$(pipe '--output-fmt-option level=1')" "{bin} markdup-pipeline -@ $t -l 1 $name {out}"
    one_case pipeline bam "$(pipe '')" "{bin} markdup-pipeline -@ $t $name {out}"
    isal="--output-fmt-option deflate=isal"
    one_case view-bam2bam-isal bam "{bin} view -b -@ $t -o {out} $name" "{bin} view -b -@ $t $isal -o {out} $name"
    one_case pipeline-isal bam "$(pipe '')" "{bin} markdup-pipeline -@ $t $isal $name {out}"
    # Issue 19's reading commands: FASTQ out of the name-grouped BAM, depth and coverage of the
    # coordinate-sorted one (text outputs, compared byte for byte).
    fq="-1 {out} -2 {out}.2 -0 /dev/null -s /dev/null"
    one_case fastq fq "{bin} fastq -@ $t $fq $name" "{bin} fastq -@ $t $fq $name"
    one_case depth txt "{bin} depth -@ $t -o {out} $coord" "{bin} depth -@ $t -o {out} $coord"
    one_case coverage txt "{bin} coverage -o {out} $coord" "{bin} coverage -o {out} $coord"
  done
done

# The chart: wall ratio by input size, one line per case, one panel per shape (latest rows of
# each shape, size and case in the CSV).
python3 - "$csv" "$out/scale.svg" <<'EOF'
import csv, math, sys
rows = {}
for r in csv.DictReader(open(sys.argv[1])):
    rows[(r["shape"], float(r["reads"]), r["case"])] = float(r["wall_ratio"])
shapes = sorted({k[0] for k in rows})
cases = sorted({k[2] for k in rows})
sizes = sorted({k[1] for k in rows})
W, H, pad = 460, 300, 50
colours = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037",
           "#ad1457", "#455a64", "#9e9d24"]
top = max([v for v in rows.values()] + [1.5]) * 1.1
x = lambda s: pad + (math.log(s) - math.log(sizes[0])) / max(1e-9, math.log(sizes[-1]) - math.log(sizes[0])) * (W - 2 * pad) if len(sizes) > 1 else W / 2
y = lambda v: H - pad - v / top * (H - 2 * pad)
parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(shapes) + 180}" height="{H}" font-family="sans-serif" font-size="11">']
for i, shape in enumerate(shapes):
    ox = i * W
    parts.append(f'<g transform="translate({ox},0)"><text x="{W / 2}" y="18" text-anchor="middle" font-size="13">{shape}: samtools/mdsam wall time</text>')
    parts.append(f'<line x1="{pad}" y1="{y(1)}" x2="{W - pad}" y2="{y(1)}" stroke="#999" stroke-dasharray="4"/>')
    for t in range(0, int(top) + 1):
        parts.append(f'<text x="{pad - 6}" y="{y(t) + 4}" text-anchor="end">{t}</text>')
    for s in sizes:
        parts.append(f'<text x="{x(s)}" y="{H - pad + 16}" text-anchor="middle">{s:g} M</text>')
    for j, c in enumerate(cases):
        pts = [(x(s), y(rows[(shape, s, c)])) for s in sizes if (shape, s, c) in rows]
        if pts:
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colours[j % len(colours)]}" stroke-width="2"/>')
    parts.append('</g>')
for j, c in enumerate(cases):
    parts.append(f'<text x="{W * len(shapes) + 10}" y="{40 + 16 * j}" fill="{colours[j % len(colours)]}">{c}</text>')
parts.append('</svg>')
open(sys.argv[2], "w").write("\n".join(parts))
print(f"wrote {sys.argv[2]}")
EOF
