#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) on its corpus, seeded from fixtures/ by
# seed.py when the corpus is absent. Exits 1 if any target found a crash; the input that made it
# is under fuzz/artifacts/<target>/. See fuzz/README.md.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# With FUZZ_RUNS=N each target instead runs exactly N inputs from a fixed seed, on the corpus
# seed.py makes: the same result every time, which is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")"

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(sam_line sam_header bam_header bam_record bam_stream bgzf_block cram_file bam_size_claims)
fi

# cargo-fuzz passes nightly-only flags (-Zsanitizer, -Cpasses=sancov-module) to rustc; on a
# stable toolchain RUSTC_BOOTSTRAP=1 lets them through.
export RUSTC_BOOTSTRAP=1
# One rayon thread: the readers' parallel paths run inline and libFuzzer measures one thread.
export RAYON_NUM_THREADS=1

# The stream targets (BAM, BGZF, CRAM) read through io::input, which takes 1 MiB at a time
# from a reader: under ASan every such buffer is a fresh mmap, which held them to ~100 runs/s.
# Without a sanitizer (the Rust code is memory-safe; libdeflate's C code is not instrumented
# either way) they run ~10x faster. Their own target directory keeps the two builds from
# replacing each other.
sanitizer_args() {
  case $1 in
    bam_stream | bgzf_block | cram_file | bam_size_claims) echo "--sanitizer none --target-dir target/no-sanitizer" ;;
    *) echo "" ;;
  esac
}

for target in "${targets[@]}"; do
  # shellcheck disable=SC2046
  cargo fuzz build $(sanitizer_args "$target") "$target"
done

if [ ! -d corpus ]; then
  python3 seed.py
fi

failed=()
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  if [ -n "${FUZZ_RUNS:-}" ]; then
    budget=(-runs="$FUZZ_RUNS" -seed=1)
    echo "== $target: $FUZZ_RUNS runs"
  else
    budget=(-max_total_time="$seconds")
    echo "== $target: ${seconds}s"
  fi
  # -rss_limit_mb: a decoder that trusts a length field and allocates gigabytes is a finding.
  # shellcheck disable=SC2046
  if ! cargo fuzz run $(sanitizer_args "$target") "$target" "corpus/$target" -- \
      "${budget[@]}" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
      -print_final_stats=1 2>"artifacts/$target/log.txt"; then
    failed+=("$target")
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" \
    "artifacts/$target/log.txt" || true
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "crashes in: ${failed[*]} (inputs under fuzz/artifacts/, logs in artifacts/*/log.txt)" >&2
  exit 1
fi
echo "no crashes"
