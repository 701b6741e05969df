//! Wires io → ops → io; owns the threads.
