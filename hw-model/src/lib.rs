//! Projects a measured mdsam run onto other hardware.
//!
//! This crate is a placeholder until the hw-model issue lands: it only names the phases that mdsam's
//! profiles will report, so that both sides agree on them from the start.

/// Phases every mdsam command reports in its profile, in pipeline order.
pub const PHASES: &[&str] = &["read", "parse", "process", "format", "write"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        assert!(PHASES.iter().all(|p| seen.insert(*p)));
    }
}
