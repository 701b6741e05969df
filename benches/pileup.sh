#!/usr/bin/env bash
# mpileup and consensus, mdsam against samtools 1.23.1 built natively with libdeflate, on the
# same simulated coordinate-sorted, indexed BAM, in alternating rounds: the median wall, CPU
# (user+sys) and peak RSS of each, and the ratios samtools/mdsam (> 1: mdsam faster or smaller).
# Issue 42 asks for >= 1.5x samtools at 2 threads and peak memory within 2x samtools'.
#
#   benches/pileup.sh [SIZES]      (default "0.5" million reads; "0.5 6" for both)
#
# Cases: mpileup without -f, with -f and -B, with -a; consensus -a in -m simple and in the
# default bayesian mode at -@ THREADS (samtools mpileup has no -@: both run it as they run it).
# Environment: THREADS (consensus -@, 2), REPEATS (3), MDSAM (target/release/mdsam),
# ST_NATIVE (samtools 1.23.1; built by ../shared/tools/build-native-samtools.sh when absent),
# CASES (a regex on the case names, all by default).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-"0.5"}
threads=${THREADS:-2}
repeats=${REPEATS:-3}
mdsam=${MDSAM:-target/release/mdsam}
st=${ST_NATIVE:-$HOME/.cache/samtools-native/bin/samtools}
cases_re=${CASES:-.}
[ -x "$mdsam" ] || cargo build --release --quiet
[ -x "$st" ] || st=$(../shared/tools/build-native-samtools.sh)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=benches/lib/timing.sh
. benches/lib/timing.sh
out=bench-out
mkdir -p "$out"

cases=(
  "mpileup|mpileup"
  "mpileup-f-B|mpileup -B -f REF"
  "mpileup-a|mpileup -a"
  "consensus-simple|consensus -@ $threads -a -m simple"
  "consensus-bayes|consensus -@ $threads -a"
)
printf '%-18s %5s %7s %7s %6s %7s %7s %6s %6s %6s\n' case Mread st_wall md_wall ratio st_cpu \
  md_cpu ratio st_MB md_MB
for mreads in $sizes; do
  pairs=$(echo "$mreads * 500000 / 1" | bc)
  bam="$out/pileup-$pairs.bam"
  ref="$out/pileup-$pairs.fa"
  if [ ! -s "$bam.bai" ]; then
    "$mdsam" simulate -n "$pairs" --order coordinate -@ "$threads" --fasta "$ref" -o "$bam"
    "$mdsam" index "$bam"
    "$mdsam" faidx "$ref"
  fi
  for c in "${cases[@]}"; do
    name=${c%%|*}
    [[ $name =~ $cases_re ]] || continue
    args=${c#*|}
    args=${args//REF/$ref}
    sw=() mw=() sc=() mc=() sr=() mr=()
    for _ in $(seq "$repeats"); do
      read -r w c r < <(run_timed "$T $st $args -o $tmp/st.out $bam 2>/dev/null")
      sw+=("$w") sc+=("$c") sr+=("$r")
      read -r w c r < <(run_timed "$T $mdsam $args -o $tmp/md.out $bam 2>/dev/null")
      mw+=("$w") mc+=("$c") mr+=("$r")
    done
    a=$(printf '%s\n' "${sw[@]}" | median) b=$(printf '%s\n' "${mw[@]}" | median)
    x=$(printf '%s\n' "${sc[@]}" | median) y=$(printf '%s\n' "${mc[@]}" | median)
    p=$(printf '%s\n' "${sr[@]}" | median) q=$(printf '%s\n' "${mr[@]}" | median)
    printf '%-18s %5s %7.2f %7.2f %6.2f %7.2f %7.2f %6.2f %6.0f %6.0f\n' "$name" "$mreads" "$a" \
      "$b" "$(echo "$a / $b" | bc -l)" "$x" "$y" "$(echo "$x / $y" | bc -l)" "$p" "$q"
    cmp -s "$tmp/st.out" "$tmp/md.out" || echo "pileup.sh: $name output differs at $mreads M" >&2
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
