#!/usr/bin/env bash
# Times `mdsam view` against samtools on the same input in one run, alternating the two tools,
# and prints the median wall time of each and the ratio samtools/mdsam (> 1: mdsam is faster).
#
#   benches/view.sh [PAIRS] [REPEATS]      (defaults: 750000 pairs ≈ 1.5 M reads, 3 repeats)
#
# SAMTOOLS picks the samtools binary (default: samtools on PATH, e.g. Debian's 1.16.1 built with
# libdeflate); THREADS the -@ value (default 2). Inputs are made by `mdsam simulate` in
# bench-out/ and reused on later runs.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-750000}
repeats=${2:-3}
threads=${THREADS:-2}
samtools=${SAMTOOLS:-samtools}
mdsam=${MDSAM:-target/release/mdsam}
out=bench-out
mkdir -p "$out"
[ -x "$mdsam" ] || cargo build --release --quiet
sam="$out/view-$pairs.sam"
bam="$out/view-$pairs.bam"
[ -s "$sam" ] || "$mdsam" simulate -n "$pairs" -@ "$threads" -o "$sam"
[ -s "$bam" ] || "$samtools" view -b -@ "$threads" -o "$bam" "$sam"

# seconds TOOL ARGS...: wall time of one run, output discarded.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-34s %10s %10s %8s\n' case samtools_s mdsam_s ratio
run_case() {
  local name=$1; shift
  local s_times=() m_times=()
  for _ in $(seq "$repeats"); do
    s_times+=("$(seconds "$samtools" view "$@")")
    m_times+=("$(seconds "$mdsam" view "$@")")
  done
  local s m
  s=$(printf '%s\n' "${s_times[@]}" | median)
  m=$(printf '%s\n' "${m_times[@]}" | median)
  printf '%-34s %10.3f %10.3f %8.2f\n' "$name" "$s" "$m" "$(echo "$s / $m" | bc -l)"
}
run_case "count with filters (BAM)" -c -@ "$threads" -f 1 -F 0x904 -q 20 "$bam"
run_case "BAM -> SAM" -@ "$threads" -h "$bam"
run_case "SAM -> BAM uncompressed (-u)" -@ "$threads" -u "$sam"
run_case "SAM -> BAM level 1 (-1)" -@ "$threads" -1 "$sam"
run_case "BAM -> BAM default level" -@ "$threads" -b "$bam"
run_case "SAM -> SAM with header" -@ "$threads" -h "$sam"
