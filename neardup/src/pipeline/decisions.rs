//! How close stage two's decisions were: for each class of pair (same site, cross
//! site, unknown), how many candidates it accepted and rejected at each Charikar
//! agreement and at each count of shared supershingles. A report draws them with the
//! threshold marked: decisions piled against it are fragile, a gap around it is not.

use crate::verify::PairClass;
use serde::{Deserialize, Serialize};

/// Stage two's decisions on one class of candidate pairs, as histograms (index = the
/// measure's value).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClassDecisions {
    /// Accepted candidates by Charikar agreement (`0..=charikar_bits`).
    pub accepted_by_agreement: Vec<u64>,
    /// Rejected candidates by Charikar agreement.
    pub rejected_by_agreement: Vec<u64>,
    /// Accepted candidates by shared supershingles (`0..=supershingles`).
    pub accepted_by_shared: Vec<u64>,
    /// Rejected candidates by shared supershingles.
    pub rejected_by_shared: Vec<u64>,
}

impl ClassDecisions {
    fn new(bits: usize, supershingles: usize) -> Self {
        ClassDecisions {
            accepted_by_agreement: vec![0; bits + 1],
            rejected_by_agreement: vec![0; bits + 1],
            accepted_by_shared: vec![0; supershingles + 1],
            rejected_by_shared: vec![0; supershingles + 1],
        }
    }

    /// Candidates decided (accepted and rejected).
    pub fn total(&self) -> u64 {
        self.accepted_by_agreement.iter().sum::<u64>()
            + self.rejected_by_agreement.iter().sum::<u64>()
    }

    /// Accepted candidates.
    pub fn accepted(&self) -> u64 {
        self.accepted_by_agreement.iter().sum()
    }

    fn merge(&mut self, o: &ClassDecisions) {
        for (a, b) in [
            (&mut self.accepted_by_agreement, &o.accepted_by_agreement),
            (&mut self.rejected_by_agreement, &o.rejected_by_agreement),
            (&mut self.accepted_by_shared, &o.accepted_by_shared),
            (&mut self.rejected_by_shared, &o.rejected_by_shared),
        ] {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }
}

/// Stage two's decisions on the candidate pairs of a run, by class of pair (see the
/// module docs). Exact duplicates are not candidates and are not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Decisions {
    /// Bits of the Charikar projection (the agreement's range).
    pub charikar_bits: u32,
    /// Supershingles per record (the shared count's range).
    pub supershingles: u32,
    /// Pairs of pages of one site.
    pub same_site: ClassDecisions,
    /// Pairs of pages of two sites.
    pub cross_site: ClassDecisions,
    /// Pairs with a page without a site.
    pub unknown_site: ClassDecisions,
}

impl Decisions {
    /// Empty histograms for projections of `charikar_bits` bits and `supershingles`
    /// supershingles.
    pub fn new(charikar_bits: usize, supershingles: usize) -> Self {
        let c = ClassDecisions::new(charikar_bits, supershingles);
        Decisions {
            charikar_bits: charikar_bits as u32,
            supershingles: supershingles as u32,
            same_site: c.clone(),
            cross_site: c.clone(),
            unknown_site: c,
        }
    }

    /// The histograms of one class.
    pub fn class(&self, class: PairClass) -> &ClassDecisions {
        match class {
            PairClass::SameSite => &self.same_site,
            PairClass::CrossSite => &self.cross_site,
            PairClass::Unknown => &self.unknown_site,
        }
    }

    /// Counts one decision: a candidate of `class` whose projections agree in
    /// `agreement` bits and which shares `shared` supershingles, `accepted` or not.
    pub fn record(&mut self, class: PairClass, agreement: u32, shared: usize, accepted: bool) {
        let c = match class {
            PairClass::SameSite => &mut self.same_site,
            PairClass::CrossSite => &mut self.cross_site,
            PairClass::Unknown => &mut self.unknown_site,
        };
        let (by_agreement, by_shared) = if accepted {
            (&mut c.accepted_by_agreement, &mut c.accepted_by_shared)
        } else {
            (&mut c.rejected_by_agreement, &mut c.rejected_by_shared)
        };
        let a = (agreement as usize).min(by_agreement.len() - 1);
        by_agreement[a] += 1;
        let s = shared.min(by_shared.len() - 1);
        by_shared[s] += 1;
    }

    /// Adds `other`'s counts (of the same ranges) to these.
    pub fn merge(mut self, other: Decisions) -> Decisions {
        self.same_site.merge(&other.same_site);
        self.cross_site.merge(&other.cross_site);
        self.unknown_site.merge(&other.unknown_site);
        self
    }

    /// Candidates decided, in every class.
    pub fn total(&self) -> u64 {
        self.same_site.total() + self.cross_site.total() + self.unknown_site.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_land_in_their_class_verdict_and_value() {
        let mut d = Decisions::new(64, 6);
        d.record(PairClass::SameSite, 60, 2, true);
        d.record(PairClass::SameSite, 10, 0, false);
        d.record(PairClass::CrossSite, 64, 6, true);
        let mut e = Decisions::new(64, 6);
        e.record(PairClass::SameSite, 60, 3, true);
        let d = d.merge(e);
        assert_eq!(d.same_site.accepted_by_agreement[60], 2);
        assert_eq!(d.same_site.rejected_by_agreement[10], 1);
        assert_eq!(d.same_site.accepted_by_shared[2], 1);
        assert_eq!(d.same_site.accepted_by_shared[3], 1);
        assert_eq!(d.cross_site.accepted_by_agreement[64], 1);
        assert_eq!(d.unknown_site.total(), 0);
        assert_eq!((d.total(), d.same_site.accepted()), (4, 2));
    }
}
