#!/usr/bin/env bash
# Times `mdsam fixmate` and `mdsam markdup` against samtools on the same inputs, alternating the
# two tools, and prints the median wall time and CPU time of each and the ratio samtools/mdsam
# (> 1: mdsam is faster).
#
#   benches/fixmate-markdup.sh [PAIRS] [REPEATS]     (defaults: 500000 pairs ≈ 1 M reads, 3)
#
# SAMTOOLS picks the samtools binary (default /usr/bin/samtools); THREADS the -@ value (default 2).
# Inputs (simulated, name-grouped BAM; samtools `fixmate -m` + `sort` of it for markdup) are made
# in bench-out/ and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-500000}
repeats=${2:-3}
threads=${THREADS:-2}
samtools=${SAMTOOLS:-/usr/bin/samtools}
mdsam=${MDSAM:-target/release/mdsam}
# shellcheck source=benches/inputs.sh
. benches/inputs.sh
fixmate_inputs

# times TOOL ARGS...: "wall cpu" seconds of one run, output discarded.
times() { /usr/bin/time -f '%e %U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1, $2 + $3}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-22s %11s %9s %11s %9s %8s\n' case samtools_s mdsam_s samtools_cpu mdsam_cpu ratio
run_case() {
  local label=$1; shift
  local sw=() mw=() sc=() mc=()
  for _ in $(seq "$repeats"); do
    read -r w c < <(times "$samtools" "$@"); sw+=("$w"); sc+=("$c")
    read -r w c < <(times "$mdsam" "$@"); mw+=("$w"); mc+=("$c")
  done
  local s m
  s=$(printf '%s\n' "${sw[@]}" | median); m=$(printf '%s\n' "${mw[@]}" | median)
  printf '%-22s %11s %9s %11s %9s %8.2f\n' "$label" "$s" "$m" \
    "$(printf '%s\n' "${sc[@]}" | median)" "$(printf '%s\n' "${mc[@]}" | median)" "$(echo "$s / $m" | bc -l)"
}
run_case "fixmate -m -u" fixmate -@ "$threads" -m -u "$name" -
run_case "fixmate -m" fixmate -@ "$threads" -m "$name" -
run_case "markdup -u" markdup -@ "$threads" -u "$coord" -
run_case "markdup" markdup -@ "$threads" "$coord" -
run_case "markdup -S -d 100 -t -u" markdup -@ "$threads" -S -d 100 -t -u "$coord" -
