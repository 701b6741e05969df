#!/usr/bin/env bash
# CRAM decode and encode, mdsam against samtools on the same files in one alternating run:
# CRAM -> BAM, CRAM -> SAM, view -c, view -c -F 0x904, flagstat, idxstats and BAM -> CRAM, on a
# CRAM 3.0 (samtools' rANS 4x8) and a CRAM 3.1 (rANS Nx16 + name tokeniser) of the same reads.
# Prints, per case, wall seconds and peak RSS of both tools and the ratio samtools/mdsam
# (> 1: mdsam is faster), and appends them to bench-out/cram.csv.
#
#   benches/cram.sh BAM FASTA [REPEATS]     (coordinate-sorted BAM; THREADS=2; SAMTOOLS31 writes
#                                          the 3.1 file, default the pysam oracle's samtools 1.24)
set -euo pipefail
cd "$(dirname "$0")/.."
bam=${1:?coordinate-sorted BAM}
fasta=${2:?its reference FASTA}
repeats=${3:-1}
threads=${THREADS:-2}
samtools=${SAMTOOLS:-samtools}
samtools31=${SAMTOOLS31:-$HOME/.cache/samtools-oracle/bin/samtools}
mdsam=${MDSAM:-target/release/mdsam}
out=bench-out
mkdir -p "$out/cram"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stem="$out/cram/$(basename "$bam" .bam)"
[ -s "$stem.30.cram" ] || "$samtools" view -C -O cram,version=3.0 -T "$fasta" -@ "$threads" -o "$stem.30.cram" "$bam"
[ -s "$stem.31.cram" ] || "$samtools31" view -C -O cram,version=3.1 -T "$fasta" -@ "$threads" -o "$stem.31.cram" "$bam"
reads=$("$samtools" view -c -@ "$threads" "$bam")
csv="$out/cram.csv"
[ -s "$csv" ] || echo "case,reads,tool,wall_s,peak_rss_kb" > "$csv"

# One timed run: wall seconds and peak RSS (KB) of TOOL ARGS…, output to /dev/null.
measure() {
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err" || {
    cat "$tmp/err" >&2
    return 1
  }
  cat "$tmp/time"
}

case_() {
  local name=$1
  shift
  local m_wall=0 s_wall=0 m_rss=0 s_rss=0
  for _ in $(seq "$repeats"); do
    read -r w r < <(measure "$mdsam" "$@")
    m_wall=$(echo "$m_wall + $w" | bc); m_rss=$(( r > m_rss ? r : m_rss ))
    read -r w r < <(measure "$samtools" "$@")
    s_wall=$(echo "$s_wall + $w" | bc); s_rss=$(( r > s_rss ? r : s_rss ))
  done
  echo "$name,$reads,mdsam,$m_wall,$m_rss" >> "$csv"
  echo "$name,$reads,samtools,$s_wall,$s_rss" >> "$csv"
  printf '%-28s mdsam %6.2f s %7d KB   samtools %6.2f s %7d KB   ratio %.2f\n' \
    "$name" "$m_wall" "$m_rss" "$s_wall" "$s_rss" "$(echo "$s_wall / $m_wall" | bc -l)"
}

for v in 30 31; do
  cram="$stem.$v.cram"
  case_ "CRAM$v->BAM" view -b -T "$fasta" -@ "$threads" -o "$tmp/out.bam" "$cram"
  case_ "CRAM$v->SAM" view -T "$fasta" -@ "$threads" -o "$tmp/out.sam" "$cram"
  case_ "view -c CRAM$v" view -c -@ "$threads" "$cram"
  case_ "view -c -F 0x904 CRAM$v" view -c -F 0x904 -@ "$threads" "$cram"
  case_ "flagstat CRAM$v" flagstat -@ "$threads" "$cram"
  case_ "idxstats CRAM$v" idxstats "$cram"
done
case_ "BAM->CRAM3.0" view -O cram,version=3.0 -T "$fasta" -@ "$threads" -o "$tmp/out.cram" "$bam"
