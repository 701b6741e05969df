#!/usr/bin/env bash
# A realistic samtools script: filters, name sort, fixmate, coordinate sort with --write-index,
# markdup with stats, index, region counts, and pipes between commands. tests/dropin.rs runs it
# once with samtools 1.24 and once with mdsam installed as `samtools`, and compares every output.
#   script.sh IN.sam OUTDIR
set -euo pipefail
in=$1
out=$2
samtools --version | head -1 | awk '{ if ($1 != "samtools" || $2 !~ /^1\./) exit 1 }'
samtools view -b -q 10 -F 0x900 -o "$out/filtered.bam" "$in"
samtools view -c -f 2 "$out/filtered.bam" > "$out/proper.count"
samtools sort -n -@ 2 -o "$out/byname.bam" "$out/filtered.bam"
samtools fixmate -m "$out/byname.bam" "$out/fixed.bam"
samtools sort -@ 2 --write-index -o "$out/sorted.bam##idx##$out/sorted.bam.bai" "$out/fixed.bam"
samtools markdup -s "$out/sorted.bam" "$out/markdup.bam" 2> "$out/markdup.stats"
samtools index "$out/markdup.bam"
samtools view -c "$out/markdup.bam" chr1 > "$out/chr1.count"
samtools view -c -F 0x400 "$out/markdup.bam" chr2:100000-400000 > "$out/chr2.count"
samtools view -h "$in" | samtools sort -u - | samtools view -c - > "$out/piped.count"
samtools collate -O -u "$in" | samtools fixmate -m -u - - | samtools sort -u - \
  | samtools markdup -r - "$out/pipe_md.bam"
samtools view -h -o "$out/final.sam" "$out/pipe_md.bam"
