# Simulated inputs shared by the bench scripts: made in bench-out/ on first use and reused.
# Source it after setting pairs, threads, samtools and mdsam.

out=bench-out
mkdir -p "$out"
[ -x "$mdsam" ] || cargo build --release --quiet

# view_inputs: $sam (simulated SAM) and $bam (samtools' BAM of it).
view_inputs() {
  sam="$out/view-$pairs.sam"
  bam="$out/view-$pairs.bam"
  [ -s "$sam" ] || "$mdsam" simulate -n "$pairs" -@ "$threads" -o "$sam"
  [ -s "$bam" ] || "$samtools" view -b -@ "$threads" -o "$bam" "$sam"
}

# fixmate_inputs: $name (name-grouped BAM) and $coord (its fixmate -m and coordinate sort).
fixmate_inputs() {
  [ -x target/release/examples/simulate ] || cargo build --release --quiet --example simulate
  name="$out/fm-$pairs.name.bam"
  coord="$out/fm-$pairs.coord.bam"
  if [ ! -s "$name" ]; then
    target/release/examples/simulate "$pairs" name "$threads" 11 2>/dev/null \
      | "$samtools" view -b -@ "$threads" -o "$name" -
  fi
  if [ ! -s "$coord" ]; then
    "$samtools" fixmate -m -@ "$threads" "$name" - | "$samtools" sort -@ "$threads" -o "$coord" -
  fi
}
