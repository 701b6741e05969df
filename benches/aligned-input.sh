#!/usr/bin/env bash
# Aligner-made benchmark input: ART Illumina 150 bp pairs (HiSeq 2500 profile, 400 bp fragments)
# simulated from a bacterial genome and aligned with `bwa mem`, kept in the order bwa writes
# (query-grouped), as BAM at the default level. Simulated data from `mdsam simulate` ran the
# pipeline twice as fast as this and hid a gap (issue 44): benchmarks use both.
#
#   benches/aligned-input.sh MILLION_READS      prints the BAM's path
#
# The genome is E. coli K-12 MG1655 from Debian's ragout-examples (4.6 Mb), unpacked without
# installing; art_illumina and bwa come from Debian (art-nextgen-simulation-tools, bwa).
# Files are cached in bench-out/aligned/. ART's seed is fixed, so a size is always the same data.
# Environment: THREADS (bwa -t, default 2), SAMTOOLS (to convert bwa's SAM; default
# target/release/mdsam, whose level-6 BAM is byte-identical to samtools').
set -euo pipefail
cd "$(dirname "$0")/.."
millions=${1:?usage: benches/aligned-input.sh MILLION_READS}
threads=${THREADS:-2}
convert=${SAMTOOLS:-target/release/mdsam}
dir=bench-out/aligned
mkdir -p "$dir"
bam=$dir/ecoli-${millions}M.bam
if [ -s "$bam" ]; then echo "$bam"; exit 0; fi
for tool in art_illumina bwa; do
  command -v "$tool" >/dev/null || { echo "aligned-input.sh: $tool not found (apt-get install art-nextgen-simulation-tools bwa)" >&2; exit 1; }
done
ref=$dir/ecoli.fa
if [ ! -s "$ref" ]; then
  deb=$dir/ragout-examples.deb
  [ -s "$deb" ] || (cd "$dir" && apt-get download ragout-examples >/dev/null && mv ragout-examples_*.deb ragout-examples.deb)
  unpacked=$(mktemp -d "$dir/deb.XXXXXX")
  dpkg-deb -x "$deb" "$unpacked"
  zcat "$unpacked"/usr/share/doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz > "$ref.tmp"
  rm -rf "$unpacked"
  mv "$ref.tmp" "$ref"
fi
[ -s "$ref.bwt" ] || bwa index "$ref" 2>/dev/null
genome=$(grep -v '^>' "$ref" | tr -d '\n' | wc -c)
# Coverage for MILLION_READS reads of 150 bp (pairs: half as many fragments, two reads each).
cover=$(awk -v m="$millions" -v g="$genome" 'BEGIN { printf "%.3f", m * 1e6 * 150 / g }')
reads=$dir/art-${millions}M
art_illumina -ss HS25 -i "$ref" -p -l 150 -f "$cover" -m 400 -s 50 -rs 44 -na -q -o "$reads" >/dev/null
bwa mem -t "$threads" -R '@RG\tID:ecoli\tSM:ecoli\tLB:lib1\tPL:ILLUMINA' "$ref" "${reads}1.fq" "${reads}2.fq" 2>/dev/null |
  "$convert" view -b -o "$bam.tmp" -
rm -f "${reads}1.fq" "${reads}2.fq"
mv "$bam.tmp" "$bam"
echo "$bam"
