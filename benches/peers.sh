#!/usr/bin/env bash
# The fused duplicate-marking job (query-grouped BAM in, coordinate-sorted BAM with duplicates
# marked out, default output level) by mdsam and every peer, on one input, in one alternating
# run (issue 44):
#   mdsam          markdup-pipeline
#   mdsam-l5       markdup-pipeline -l 5: htslib maps samtools' level 5 to libdeflate's 6, the
#                  level mako's `--compression-level 6` passes to libdeflate unmapped (samtools'
#                  default, -1, is libdeflate's 7: 1.7x the deflate CPU, 1.2 % smaller output);
#                  the same deflate effort as dupblaster | mako
#   st-1.23.1      samtools 1.23.1 with libdeflate (../shared/tools/build-native-samtools.sh):
#                  collate -O -u | fixmate -m -u | sort -u | markdup
#   st-1.16.1      the same pipe with Debian's samtools
#   dupblaster     Fulcrum's `dupblaster -m | mako --order coordinate` (cargo install dupblaster
#                  fg-mako)
#   bamsormadup    biobambam2 (Debian)
#   sambamba       sambamba sort then markdup (Debian)
#   samblaster     samtools view | samblaster | samtools sort (Debian's samblaster, 1.23.1)
#
#   benches/peers.sh [SIZES] [INPUTS]    (defaults: "0.5 6 12" million reads, "aligned simulated")
#
# INPUTS: aligned (ART + bwa mem, benches/aligned-input.sh) and simulated (`mdsam simulate`,
# name-grouped). Per tool: median wall, CPU (user+sys, summed over a pipe's processes), peak RSS
# (summed likewise), duplicates marked (flag 0x400), output size, and whether its records equal
# samtools 1.24's exactly (the oracle, ../shared/tools/setup-oracle.sh, run untimed; SAM text
# without header). Ratios are to mdsam (> 1: mdsam faster).
# Environment: THREADS (2), REPEATS (2; the tool order rotates every repeat), TOOLS (a regex of
# tool names, default all), CONTEND=1 (another process busy on every core during the runs:
# `stress-ng --cpu NPROC`, as on a shared node), MDSAM (target/release/mdsam).
# Results are appended to bench-out/peers.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-"0.5 6 12"}
inputs=${2:-"aligned simulated"}
threads=${THREADS:-2}
repeats=${REPEATS:-2}
tools_re=${TOOLS:-.}
contend=${CONTEND:-0}
mdsam=${MDSAM:-target/release/mdsam}
st_native=${ST_NATIVE:-$HOME/.cache/samtools-native/bin/samtools}
st_debian=/usr/bin/samtools
oracle=${ORACLE-$HOME/.cache/samtools-oracle/bin/samtools}
out=bench-out
mkdir -p "$out/peers"
[ -x "$mdsam" ] || cargo build --release --quiet
[ -x "$st_native" ] || st_native=$(../shared/tools/build-native-samtools.sh)
tmp=$(mktemp -d "$out/peers/tmp.XXXXXX")
stress_pid=
cleanup() { [ -n "$stress_pid" ] && kill "$stress_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# shellcheck source=benches/lib/timing.sh
. benches/lib/timing.sh
csv=$out/peers.csv
[ -s "$csv" ] || echo "input,mreads,contended,tool,wall_s,cpu_s,rss_mb,duplicates,output_mb,same_as_samtools,wall_vs_mdsam" > "$csv"

# command TOOL IN OUT: the job as TOOL runs it, each process under $T.
command_for() {
  local t=$threads in=$2 o=$3 s
  case $1 in
    mdsam) echo "$T $mdsam markdup-pipeline -@ $t $in $o" ;;
    mdsam-l5) echo "$T $mdsam markdup-pipeline -@ $t -l 5 $in $o" ;;
    st-1.23.1 | st-1.16.1)
      s=$st_native; [ "$1" = st-1.16.1 ] && s=$st_debian
      echo "$T $s collate -@ $t -O -u $in $tmp/coll | $T $s fixmate -@ $t -m -u - - \
        | $T $s sort -@ $t -u -T $tmp/sort - | $T $s markdup -@ $t -T $tmp/md - $o" ;;
    dupblaster)
      # dupblaster has no thread option (an input and an output IO thread around one worker).
      echo "$T dupblaster -q -m --sequencing-duplicate-detection off -i $in --metrics-prefix $tmp/dupblaster | $T mako -i - -o $o \
        --order coordinate --compression-level 6 -@ $t -T $tmp" ;;
    bamsormadup) echo "$T bamsormadup threads=$t inputformat=bam tmpfile=$tmp/bsmd < $in > $o" ;;
    sambamba)
      echo "$T sambamba sort -q -t $t --tmpdir $tmp -o $tmp/sb.bam $in && \
        $T sambamba markdup -q -t $t --tmpdir $tmp $tmp/sb.bam $o" ;;
    samblaster)
      echo "$T $st_native view -h -@ $t $in | $T samblaster -q | \
        $T $st_native sort -@ $t -T $tmp/sbl -o $o -" ;;
  esac
}

available() {
  case $1 in
    dupblaster) command -v dupblaster >/dev/null && command -v mako >/dev/null ;;
    bamsormadup | sambamba | samblaster) command -v "$1" >/dev/null ;;
    *) true ;;
  esac
}

# records FILE: a checksum of FILE's records as SAM text (header left out).
records() { "$mdsam" view -@ "$threads" "$1" | md5sum | cut -c1-16; }
duplicates() { "$mdsam" view -c -f 0x400 -@ "$threads" "$1"; }

all_tools="mdsam mdsam-l5 st-1.23.1 st-1.16.1 dupblaster bamsormadup sambamba samblaster"
tools=()
for tool in $all_tools; do
  if [[ $tool =~ $tools_re ]]; then
    if available "$tool"; then tools+=("$tool"); else echo "peers.sh: $tool not installed, skipped" >&2; fi
  fi
done

if [ "$contend" = 1 ]; then
  command -v stress-ng >/dev/null || { echo "peers.sh: CONTEND=1 needs stress-ng" >&2; exit 1; }
  stress-ng --cpu "$(nproc)" --quiet &
  stress_pid=$!
fi

printf '%-10s %6s %-12s %8s %8s %8s %10s %9s %5s %8s\n' input Mreads tool wall_s cpu_s rss_MB \
  duplicates out_MB same md_x
for input in $inputs; do
  for mreads in $sizes; do
    case $input in
      aligned) bam=$(benches/aligned-input.sh "$mreads") ;;
      simulated)
        bam=$out/peers/simulated-${mreads}M.bam
        pairs=$(echo "$mreads * 500000 / 1" | bc)
        [ -s "$bam" ] || "$mdsam" simulate -n "$pairs" -@ "$threads" -o "$bam" ;;
      *) echo "unknown input $input" >&2; exit 1 ;;
    esac
    declare -A wall=() cpu=() rss=()
    for rep in $(seq "$repeats"); do
      # Rotate the order every repeat: the tool that runs after another pays for its page cache.
      n=${#tools[@]}
      for k in $(seq 0 $((n - 1))); do
        tool=${tools[$(((k + rep - 1) % n))]}
        read -r w c r < <(run_timed "$(command_for "$tool" "$bam" "$tmp/$tool.bam")" 2>/dev/null)
        wall[$tool]+="$w "; cpu[$tool]+="$c "; rss[$tool]=$r
        [ "$rep" = "$repeats" ] || rm -f "$tmp/$tool.bam"
      done
    done
    # The reference records are samtools 1.24's (the oracle, untimed): 1.23.1 differs from it
    # on purpose on some inputs (simulated data: same duplicates, other records).
    reference=
    if [ -x "$oracle" ]; then
      bash -c "$(command_for st-1.23.1 "$bam" "$tmp/oracle.bam" | sed "s#$T ##g; s#$st_native#$oracle#g")" 2>/dev/null
      reference=$(records "$tmp/oracle.bam")
    fi
    md_wall=$(echo "${wall[mdsam]:-0}" | tr ' ' '\n' | grep . | median || echo 0)
    for tool in "${tools[@]}"; do
      f=$tmp/$tool.bam
      w=$(echo "${wall[$tool]}" | tr ' ' '\n' | grep . | median)
      c=$(echo "${cpu[$tool]}" | tr ' ' '\n' | grep . | median)
      d=$(duplicates "$f")
      size=$(echo "$(stat -c %s "$f") / 1048576" | bc -l)
      same=-
      [ -n "$reference" ] && { [ "$(records "$f")" = "$reference" ] && same=yes || same=no; }
      x=$(echo "$w / $md_wall" | bc -l 2>/dev/null || echo 0)
      printf '%-10s %6s %-12s %8.2f %8.2f %8s %10s %9.1f %5s %8.2f\n' "$input" "$mreads" "$tool" \
        "$w" "$c" "${rss[$tool]}" "$d" "$size" "$same" "$x"
      printf '%s,%s,%s,%s,%s,%s,%s,%s,%.1f,%s,%.3f\n' "$input" "$mreads" "$contend" "$tool" "$w" \
        "$c" "${rss[$tool]}" "$d" "$size" "$same" "$x" >> "$csv"
    done
    rm -f "$tmp"/*.bam
    unset wall cpu rss
  done
done
