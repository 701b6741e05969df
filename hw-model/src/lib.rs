//! Projects measured mdsam runs onto other hardware.
//!
//! # Brief overview
//!
//! A command run with `--profile FILE` writes per-phase counters ([`profile`]). [`work`] turns
//! them into machine-independent work; a target machine ([`params`]: the profiling host, seed
//! 000's blade, the HPE Superdome Flex, a fabric-attached memory, computational storage) turns
//! that work into phase times ([`host`], [`numa`], [`fam`], [`csd`]), composed per command and
//! per pipeline ([`pipeline`]), with energy ([`energy`]) and intervals from sampling every
//! parameter's range ([`mc`]). [`sched`] places chunks of work on host / ISP / PuD / IFP as
//! Conduit (seed 002) does; [`s2`] is seed 002's simulated SSD and its six workloads. [`s0`]
//! builds the seed-000 program variants (samtools 1.9 streaming versus memory-driven) from our
//! profiles. [`report`] prints tables and draws SVG; [`cli`] is
//! `mdsam hw-model calibrate | predict | report | validate | record`.
//!
//! What the model may and may not claim is in `README.md` beside this crate.

// Unsafe code is denied but in `calibrate::thread_cpu_s` (clock_gettime: std has no thread CPU
// clock), whose block says why it is sound.
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod calibrate;
pub mod cli;
pub mod csd;
pub mod energy;
pub mod error;
pub mod fam;
pub mod host;
pub mod mc;
pub mod numa;
pub mod params;
pub mod pipeline;
pub mod predict;
pub mod profile;
pub mod record;
pub mod report;
pub mod s0;
pub mod s2;
pub mod sched;
pub mod size;
pub mod validate;
pub mod work;

pub use error::Error;
