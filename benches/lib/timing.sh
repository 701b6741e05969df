# Shared by the benchmark scripts (sourced): timing a shell pipeline with every process under GNU
# time, and the median of a column of numbers. Needs $tmp (a scratch folder) set by the caller.

# T: the prefix that puts one process of a pipeline under GNU time (appending to $tmp/t).
T="/usr/bin/time -f '%e %U %S %M' -a -o $tmp/t"

# run_timed CMD [max]: runs CMD (a shell pipeline in a string whose processes carry $T); prints
# "wall cpu rss_mb" (CPU and peak RSS summed over the processes: a pipe's stages run at once;
# with "max", the largest process's peak RSS, for commands run one after another in a loop).
run_timed() {
  rm -f "$tmp/t"
  local s e
  s=$(date +%s.%N)
  bash -c "$1"
  e=$(date +%s.%N)
  awk -v wall="$(echo "$e - $s" | bc)" -v max="${2:-}" '{cpu += $2 + $3; rss += $4}
    $4 > top {top = $4}
    END {printf "%.2f %.2f %.0f\n", wall, cpu, (max == "max" ? top : rss) / 1024}' "$tmp/t"
}

median() { sort -g | awk '{a[NR]=$1} END {printf "%.10g\n", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
