//! NUMA and fabric terms of a multi-socket machine (blade, Superdome Flex): where a thread's
//! data lives, the mean latency it sees and the bandwidth the sockets in use deliver (design §2.5).
//!
//! Placement: threads fill cores socket by socket (`compact`); records are first-touched by the
//! parallel loader, so they are spread evenly over the sockets in use and a thread's access is
//! local with probability 1/S, one UPI hop inside the chassis, or across the Flex fabric.

use crate::params::Machine;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Numa {
    pub sockets_used: f64,
    pub chassis_used: f64,
    /// Access shares: local, other socket in the chassis, other chassis.
    pub local: f64,
    pub upi: f64,
    pub flex: f64,
    pub latency_ns: f64,
    pub bandwidth_gbs: f64,
}

pub fn numa(m: &Machine, workers: f64) -> Numa {
    let sockets = m.get("sockets").max(1.0);
    let cores = m.get("cores").max(1.0);
    let per_socket = (cores / sockets).max(1.0);
    let spc = m.get("sockets_per_chassis").max(1.0);
    let s = (workers.min(cores) / per_socket).ceil().clamp(1.0, sockets);
    let in_chassis = s.min(spc);
    let chassis = (s / spc).ceil();
    let local = 1.0 / s;
    let upi = (in_chassis - 1.0) / s;
    let flex = (s - in_chassis) / s;
    let latency_ns =
        local * m.get("l_local_ns") + upi * m.get("l_upi_ns") + flex * m.get("l_flex_ns");
    // Time per byte adds up over the paths the bytes take; each path's capacity grows with the
    // sockets (or chassis) that drive it.
    let per_byte = local / (s * m.get("b_local_gbs"))
        + upi / (s * m.get("b_upi_gbs"))
        + flex / (chassis * m.get("b_flex_gbs"));
    Numa {
        sockets_used: s,
        chassis_used: chassis,
        local,
        upi,
        flex,
        latency_ns,
        bandwidth_gbs: 1.0 / per_byte,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{blade, sdflex};

    #[test]
    fn test_one_socket_is_local() {
        let n = numa(&blade(), 8.0);
        assert_eq!((n.sockets_used, n.local), (1.0, 1.0));
        assert_eq!(n.latency_ns, 90.0);
        assert!((n.bandwidth_gbs - 104.0).abs() < 1e-9);
    }

    #[test]
    fn test_latency_grows_and_bandwidth_saturates_across_chassis() {
        for literal in [false, true] {
            let m = sdflex(literal);
            let a = numa(&m, 16.0);
            let b = numa(&m, 144.0);
            assert!(b.latency_ns > a.latency_ns, "{a:?} {b:?}");
            assert!(b.flex > 0.0 && a.flex == 0.0 || literal);
            assert!(b.bandwidth_gbs >= a.bandwidth_gbs);
            assert!(b.bandwidth_gbs < b.sockets_used * m.get("b_local_gbs"));
        }
    }
}
