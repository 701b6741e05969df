#!/usr/bin/env bash
# Times `mdsam view` against samtools on the same input in one run, alternating the two tools,
# and prints the median wall and CPU (user+sys) time of each and the ratios samtools/mdsam
# (> 1: mdsam is faster). On a shared machine the CPU ratio is the steadier one.
#
#   benches/view.sh [PAIRS] [REPEATS]      (defaults: 750000 pairs ≈ 1.5 M reads, 3 repeats)
#
# SAMTOOLS picks the samtools binary (default: samtools on PATH, e.g. Debian's 1.16.1 built with
# libdeflate); THREADS the -@ value (default 2). Inputs are made by `mdsam simulate` in
# bench-out/ and reused on later runs. MDSAM_INFLATE=libdeflate or MDSAM_DEFLATE=isal in the
# environment reach mdsam only (samtools ignores them); the "deflate=isal" cases set the latter
# for mdsam alone and also print both outputs' sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-750000}
repeats=${2:-3}
threads=${THREADS:-2}
samtools=${SAMTOOLS:-samtools}
mdsam=${MDSAM:-target/release/mdsam}
# shellcheck source=benches/inputs.sh
. benches/inputs.sh
view_inputs
ubam="$out/view-$pairs.u.bam"
[ -s "$ubam" ] || "$samtools" view -u -o "$ubam" "$sam"

# seconds TOOL ARGS...: "wall cpu" seconds of one run (cpu = user + sys), output discarded.
seconds() {
  local t
  t=$(mktemp)
  /usr/bin/time -o "$t" -f '%e %U %S' "$@" > /dev/null 2>/dev/null
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$t"
  rm -f "$t"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-32s %9s %9s %7s %9s %9s %7s\n' case st_wall md_wall ratio st_cpu md_cpu ratio
run_case() {
  local name=$1; shift
  local sw=() mw=() sc=() mc=() t
  for _ in $(seq "$repeats"); do
    t=$(seconds "$samtools" view "$@"); sw+=("${t% *}"); sc+=("${t#* }")
    t=$(seconds env ${MDSAM_ENV:-} "$mdsam" view "$@"); mw+=("${t% *}"); mc+=("${t#* }")
  done
  local a b c d
  a=$(printf '%s\n' "${sw[@]}" | median); b=$(printf '%s\n' "${mw[@]}" | median)
  c=$(printf '%s\n' "${sc[@]}" | median); d=$(printf '%s\n' "${mc[@]}" | median)
  printf '%-32s %9.2f %9.2f %7.2f %9.2f %9.2f %7.2f\n' "$name" "$a" "$b" "$(echo "$a / $b" | bc -l)" \
    "$c" "$d" "$(echo "$c / $d" | bc -l)"
}
# sizes ARGS...: both tools' output sizes for `view ARGS` (mdsam with $MDSAM_ENV), and their ratio.
sizes() {
  local st md
  st=$("$samtools" view "$@" | wc -c); md=$(env ${MDSAM_ENV:-} "$mdsam" view "$@" | wc -c)
  printf '%-32s %9s %9s %7.3f  (output bytes samtools, mdsam; mdsam/samtools)\n' "  size" "$st" "$md" \
    "$(echo "$md / $st" | bc -l)"
}
run_case "count with filters (BAM)" -c -@ "$threads" -f 1 -F 0x904 -q 20 "$bam"
run_case "BAM -> SAM" -@ "$threads" -h "$bam"
run_case "SAM -> BAM uncompressed (-u)" -@ "$threads" -u "$sam"
run_case "SAM -> BAM level 1 (-1)" -@ "$threads" -1 "$sam"
run_case "BAM -> BAM default level" -@ "$threads" -b "$bam"
# Reading stored (level 0) blocks costs almost nothing, so this is the cost of deflate alone.
run_case "deflate alone (-u BAM -> BAM)" -@ "$threads" -b "$ubam"
run_case "SAM -> SAM with header" -@ "$threads" -h "$sam"
# ISA-L deflate (mdsam's opt-in `deflate=isal`) against samtools' usual deflate.
export MDSAM_ENV=MDSAM_DEFLATE=isal
run_case "BAM -> BAM default, deflate=isal" -@ "$threads" -b "$bam"
sizes -@ "$threads" -b "$bam"
run_case "SAM -> BAM -1, deflate=isal" -@ "$threads" -1 "$sam"
sizes -@ "$threads" -1 "$sam"
