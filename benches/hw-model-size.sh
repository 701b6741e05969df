#!/usr/bin/env bash
# hw-model's size projection against measurement: each command is profiled on a small input and
# on a large one of the same shape, and `hw-model predict --reads N` projects the small profile
# to the large input's read count. Prints, per command, the measured and projected wall time and
# peak RSS of the large run, and the errors.
#
#   benches/hw-model-size.sh [SMALL_PAIRS] [LARGE_PAIRS]   (defaults 250000 6000000: 0.5 M and
#                                                           12 M reads)
#
# Inputs are the default simulation, shared with benches/scale.sh (bench-out/scale/, made with
# mdsam when absent). Environment: MDSAM (target/release/mdsam), THREADS (-@, default 2), CASES
# (a regex of case names, default all), REUSE=1 (keep profiles already there). Profiles go to
# bench-out/hw-model-size/.
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-250000}
large=${2:-6000000}
threads=${THREADS:-2}
mdsam=${MDSAM:-target/release/mdsam}
cases=${CASES:-.}
reuse=${REUSE:-0}
dir=bench-out/scale
out=bench-out/hw-model-size
mkdir -p "$dir" "$out"
[ -x "$mdsam" ] || cargo build --release --quiet
tmp=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# input PAIRS: $name (name-grouped BAM) and $coord (fixmate -m + coordinate sort of it).
inputs() {
  name=$dir/default-$1.name.bam
  coord=$dir/default-$1.coord.bam
  [ -s "$name" ] || "$mdsam" simulate -n "$1" -@ "$threads" -o "$name"
  if [ ! -s "$coord" ]; then
    "$mdsam" fixmate -@ "$threads" -m -u "$name" - | "$mdsam" sort -@ "$threads" -o "$coord.tmp" -
    mv "$coord.tmp" "$coord"
  fi
}

# run_case TAG PAIRS INPUT_KIND COMMAND ARGS...: profiles one case; INPUT_KIND is name or coord,
# IN and OUT in ARGS stand for the input and output paths.
run_case() {
  local tag=$1 pairs=$2 kind=$3 command=$4
  shift 4
  [ "$reuse" = 1 ] && [ -s "$out/$tag-$pairs.json" ] && return
  inputs "$pairs"
  local input=$name args=("$@")
  [ "$kind" = coord ] && input=$coord
  args=("${args[@]/#IN/$input}")
  args=("${args[@]/#OUT/$tmp/out.bam}")
  "$mdsam" "$command" -@ "$threads" --profile "$out/$tag-$pairs.json" "${args[@]}" 2>/dev/null
  rm -f "$tmp/out.bam"
}

field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

printf '%-22s %10s %10s %7s %10s %10s %7s\n' case measured_s project_s error rss_MB proj_MB error
while read -r tag kind args; do
  [[ $tag =~ $cases ]] || continue
  # shellcheck disable=SC2086
  run_case "$tag" "$small" "$kind" $args
  # shellcheck disable=SC2086
  run_case "$tag" "$large" "$kind" $args
  # The large run's reads: the small run's times the ratio of pairs (a run that spills counts
  # its records again as it reads them back).
  reads=$(field "$out/$tag-$small.json" "['phases'][0]['records'] * $large / $small")
  "$mdsam" hw-model predict --reads "$reads" --mc 1 --json "$out/$tag-projected.json" \
    "$out/$tag-$small.json" > "$out/$tag-projected.txt"
  python3 - "$tag" "$out/$tag-$large.json" "$out/$tag-projected.json" <<'EOF'
import json, sys
tag, measured, projected = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))[0]
wall, rss = measured["run"]["wall_s"], measured["run"]["peak_rss_bytes"] / 1e6
pwall, prss = projected["time_s"]["nominal"], projected["peak_rss_bytes"] / 1e6
print(f"{tag:<22} {wall:10.2f} {pwall:10.2f} {100 * (pwall / wall - 1):+6.1f}% "
      f"{rss:10.0f} {prss:10.0f} {100 * (prss / rss - 1):+6.1f}%")
EOF
done <<'CASES'
sort name sort -o OUT IN
sort-n name sort -n -o OUT IN
collate name collate -o OUT IN
fixmate name fixmate -m IN OUT
markdup coord markdup IN OUT
pipeline-u name markdup-pipeline -u IN OUT
pipeline name markdup-pipeline IN OUT
pipeline-u-1G name markdup-pipeline -u --max-memory 1G IN OUT
CASES
