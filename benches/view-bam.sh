#!/usr/bin/env bash
# `view -b` BAM -> BAM at the default level on aligner-made data (ART + bwa mem,
# benches/aligned-input.sh), mdsam against samtools 1.23.1 with libdeflate, alternating, with the
# median wall and CPU (user+sys) of each, the cores each kept busy (CPU / wall) and the ratios
# samtools/mdsam (> 1: mdsam faster). Issue 44 asks for both cores busy and >= 1.3x samtools.
#
#   benches/view-bam.sh [SIZES]      (default "0.5 6" million reads)
#
# Environment: THREADS (-@, 2), REPEATS (3), CONTEND=1 (stress-ng busy on every core meanwhile),
# MDSAM (target/release/mdsam), ST_NATIVE (samtools 1.23.1; built by
# ../shared/tools/build-native-samtools.sh when absent).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-"0.5 6"}
threads=${THREADS:-2}
repeats=${REPEATS:-3}
mdsam=${MDSAM:-target/release/mdsam}
st=${ST_NATIVE:-$HOME/.cache/samtools-native/bin/samtools}
[ -x "$mdsam" ] || cargo build --release --quiet
[ -x "$st" ] || st=$(../shared/tools/build-native-samtools.sh)
tmp=$(mktemp -d)
stress_pid=
cleanup() { [ -n "$stress_pid" ] && kill "$stress_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
if [ "${CONTEND:-0}" = 1 ]; then
  stress-ng --cpu "$(nproc)" --quiet &
  stress_pid=$!
fi
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# seconds CMD...: "wall cpu" of one run.
seconds() {
  /usr/bin/time -o "$tmp/t" -f '%e %U %S' "$@" > /dev/null 2>&1
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$tmp/t"
}
printf '%-8s %8s %8s %6s %8s %8s %6s %7s %7s\n' Mreads st_wall md_wall ratio st_cpu md_cpu ratio \
  st_cores md_cores
for mreads in $sizes; do
  bam=$(benches/aligned-input.sh "$mreads")
  sw=() mw=() sc=() mc=()
  for _ in $(seq "$repeats"); do
    t=$(seconds "$st" view -@ "$threads" -b -o "$tmp/st.bam" "$bam"); sw+=("${t% *}"); sc+=("${t#* }")
    t=$(seconds "$mdsam" view -@ "$threads" -b -o "$tmp/md.bam" "$bam"); mw+=("${t% *}"); mc+=("${t#* }")
  done
  a=$(printf '%s\n' "${sw[@]}" | median); b=$(printf '%s\n' "${mw[@]}" | median)
  c=$(printf '%s\n' "${sc[@]}" | median); d=$(printf '%s\n' "${mc[@]}" | median)
  printf '%-8s %8.2f %8.2f %6.2f %8.2f %8.2f %6.2f %7.2f %7.2f\n' "$mreads" "$a" "$b" \
    "$(echo "$a / $b" | bc -l)" "$c" "$d" "$(echo "$c / $d" | bc -l)" "$(echo "$c / $a" | bc -l)" \
    "$(echo "$d / $b" | bc -l)"
  # Same records (the @PG lines differ).
  cmp -s <("$mdsam" view "$tmp/st.bam" | md5sum) <("$mdsam" view "$tmp/md.bam" | md5sum) \
    || echo "view-bam.sh: records differ at $mreads M" >&2
done
