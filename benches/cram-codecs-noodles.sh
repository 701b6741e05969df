#!/usr/bin/env bash
# noodles-cram 0.102's block decoders on the blocks `cram_codecs::speed` times mdsam's and
# htscodecs' decoders on (the test leaves them, with mdsam's output, under its scratch
# directory). noodles keeps those decoders private to its crate, so this builds a copy of its
# registry source with them made public, offline, against mdsam's Cargo.lock, and prints MB/s and
# whether noodles' output equals mdsam's.
#
#   cargo test --release --test main cram_codecs::speed -- --ignored --nocapture
#   benches/cram-codecs-noodles.sh [BLOCK_DIR]   (default: target/tmp/cram_codecs_speed)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
blocks=$(realpath "${1:-target/tmp/cram_codecs_speed}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/noodles-cram-0.102.0 | head -1)
cp -r "$source" "$work/noodles-cram"
cd "$work/noodles-cram/src/codecs"
sed -i 's/^pub(crate) mod name_tokenizer;/pub mod name_tokenizer;/' ../codecs.rs
sed -i 's/^pub(crate) use self::{decode::decode, encode::encode};/pub use self::{decode::decode, encode::encode};/' rans_4x8.rs rans_nx16.rs
sed -i 's/^pub(crate) use self::{decode::decode, encode::encode, model::Model, range_coder::RangeCoder};/pub use self::decode::decode;\npub(crate) use self::{encode::encode, model::Model, range_coder::RangeCoder};/' aac.rs
mkdir -p "$work/bench/src"
cd "$work/bench"
cp "$repo/Cargo.lock" .  # the versions mdsam builds, all in the local registry
cat > Cargo.toml <<EOF
[package]
name = "noodles-codecs-bench"
version = "0.1.0"
edition = "2024"

[dependencies]
noodles-cram = "=0.102.0"

[patch.crates-io]
noodles-cram = { path = "$work/noodles-cram" }
EOF
cat > src/main.rs <<'EOF'
use noodles_cram::codecs::{aac, name_tokenizer, rans_4x8, rans_nx16};

fn main() {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let name = std::path::Path::new(&path).file_stem().unwrap().to_str().unwrap().to_string();
        let mut parts = name.rsplitn(3, '-');
        let raw: usize = parts.next().unwrap().parse().unwrap();
        let method: u8 = parts.next().unwrap()[1..].parse().unwrap();
        let decode = || match method {
            4 => rans_4x8::decode(&data).unwrap(),
            5 => rans_nx16::decode(&data, raw).unwrap(),
            6 => aac::decode(&data, raw).unwrap(),
            _ => name_tokenizer::decode(&data).unwrap(),
        };
        let same = std::fs::read(path.replace(".bin", ".out")).ok().map(|mine| mine == decode());
        let rounds = (200_000_000 / raw.max(1)).clamp(3, 500);
        let start = std::time::Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(decode());
        }
        let mbs = (raw * rounds) as f64 / start.elapsed().as_secs_f64() / 1e6;
        println!("{name}: noodles {mbs:.0} MB/s; same output as mdsam: {same:?}");
    }
}
EOF
RUSTFLAGS="--cap-lints=allow" cargo build --release --offline --quiet
./target/release/noodles-codecs-bench "$blocks"/*.bin
