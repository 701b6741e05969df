#!/usr/bin/env bash
# The cost of `--profile`: times each command with and without it on the same input, alternating,
# and prints the median wall and CPU time of each and the overhead in percent (goal: < 3 %).
#
#   benches/profile-overhead.sh [PAIRS] [REPEATS]     (defaults: 300000 pairs ≈ 0.6 M reads, 5)
#
# THREADS picks the -@ value (default 1). Inputs are simulated into bench-out/ and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-300000}
repeats=${2:-5}
threads=${THREADS:-1}
mdsam=${MDSAM:-target/release/mdsam}
out=bench-out
mkdir -p "$out"
[ -x "$mdsam" ] || cargo build --release --quiet
bam="$out/profile-$pairs.bam"
sorted="$out/profile-$pairs.sorted.bam"
if [ ! -s "$bam" ]; then
  "$mdsam" simulate -n "$pairs" -o "$out/profile-$pairs.sam"
  "$mdsam" view -b -@ "$threads" -o "$bam" "$out/profile-$pairs.sam"
  rm -f "$out/profile-$pairs.sam"
fi
[ -s "$sorted" ] || "$mdsam" markdup-pipeline -@ "$threads" -u "$bam" "$sorted" 2>/dev/null

# times ARGS...: "wall cpu" seconds of one run of mdsam, output discarded.
times() { /usr/bin/time -f '%e %U %S' "$mdsam" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1, $2 + $3}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-18s %9s %11s %9s %11s %10s %10s\n' case plain_s profiled_s plain_cpu profiled_cpu wall_%% cpu_%%
run_case() {
  local label=$1 cmd=$2; shift 2
  local pw=() qw=() pc=() qc=()
  for _ in $(seq "$repeats"); do
    read -r w c < <(times "$cmd" "$@"); pw+=("$w"); pc+=("$c")
    read -r w c < <(times "$cmd" --profile "$out/overhead.json" "$@"); qw+=("$w"); qc+=("$c")
  done
  local a b c d
  a=$(printf '%s\n' "${pw[@]}" | median); b=$(printf '%s\n' "${qw[@]}" | median)
  c=$(printf '%s\n' "${pc[@]}" | median); d=$(printf '%s\n' "${qc[@]}" | median)
  printf '%-18s %9s %11s %9s %11s %10.1f %10.1f\n' "$label" "$a" "$b" "$c" "$d" \
    "$(echo "($b / $a - 1) * 100" | bc -l)" "$(echo "($d / $c - 1) * 100" | bc -l)"
}
run_case "view -c" view -@ "$threads" -c -q 20 "$bam"
run_case "view -u" view -@ "$threads" -u "$bam"
run_case "sort -u" sort -@ "$threads" -u "$bam"
run_case "collate -u" collate -@ "$threads" -u -O "$bam"
run_case "fixmate -m -u" fixmate -@ "$threads" -m -u "$bam" -
run_case "markdup -u" markdup -@ "$threads" -u "$sorted" -
run_case "pipeline -u" markdup-pipeline -@ "$threads" -u "$bam" -
