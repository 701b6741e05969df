#!/usr/bin/env bash
# How fast can mdsam be against samtools on C cores? Counts instructions (callgrind, repeatable on
# a noisy machine) per thread for samtools and mdsam on the same small inputs, and prints the
# best wall-time ratio samtools/mdsam that C cores allow:
#
#   bound(C) = max(samtools_total / C, samtools_main) / (mdsam_total / C)
#
# samtools_main is samtools' first (main) thread: htslib hands inflate, deflate and SAM
# parsing/formatting to its pool, but the rest of the main thread's work runs on one core
# whatever -@ says, so samtools needs at least that long. mdsam is taken as perfectly parallel,
# so the bound is an upper limit on the ratio (equal instructions per second for both tools).
#
#   benches/serial-share.sh [PAIRS] [CORES...]     (defaults: 50000 pairs, cores 2 4 8 16)
#
# SAMTOOLS picks samtools (default /usr/bin/samtools), MDSAM the mdsam binary. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-50000}
shift || true
cores=("$@")
[ ${#cores[@]} -gt 0 ] || cores=(2 4 8 16)
samtools=${SAMTOOLS:-/usr/bin/samtools}
mdsam=${MDSAM:-target/release/mdsam}
command -v valgrind >/dev/null || { echo "serial-share.sh: needs valgrind" >&2; exit 1; }
threads=2
# shellcheck source=benches/inputs.sh
. benches/inputs.sh
view_inputs
fixmate_inputs

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# threads TAG TOOL ARGS...: one instruction count per thread, main thread first.
threads() {
  local tag=$1
  shift
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/$tag.%p" \
    "$@" >/dev/null 2>&1
  for f in "$work/$tag".*; do
    awk '/^thread:/ {t = $2} /^(summary|totals):/ {print t, $2; exit}' "$f"
  done | sort -n | awk '{print $2}'
  rm -f "$work/$tag".*
}

printf '%-24s %12s %12s %12s' case samtools_all samtools_main mdsam_all
for c in "${cores[@]}"; do printf ' %8s' "bound@$c"; done
printf '\n'
run_case() {
  local label=$1
  shift
  local st md st_all st_main md_all
  st=$(threads st "$samtools" "$@")
  md=$(threads md "$mdsam" "$@")
  st_all=$(echo "$st" | awk '{s += $1} END {print s}')
  st_main=$(echo "$st" | head -1)
  md_all=$(echo "$md" | awk '{s += $1} END {print s}')
  printf '%-24s %12d %12d %12d' "$label" "$st_all" "$st_main" "$md_all"
  for c in "${cores[@]}"; do
    awk -v a="$st_all" -v m="$st_main" -v d="$md_all" -v c="$c" \
      'BEGIN {s = a / c; if (m > s) s = m; printf " %8.2f", s / (d / c)}'
  done
  printf '\n'
}
run_case "view -c with filters" view -@ 2 -c -f 1 -F 0x904 -q 20 "$bam"
run_case "view BAM -> SAM" view -@ 2 -h "$bam"
run_case "view SAM -> BAM -u" view -@ 2 -u "$sam"
run_case "fixmate -m -u" fixmate -@ 2 -m -u "$name" -
run_case "markdup -u" markdup -@ 2 -u "$coord" -
