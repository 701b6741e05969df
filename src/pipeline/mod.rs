//! Wires io → ops → io and owns the threads: one rayon pool per command, passed down by
//! running the command inside it.

pub mod fixmate;
pub mod markdup;
pub mod region;
pub mod sink;
pub mod threads;
pub mod view;
