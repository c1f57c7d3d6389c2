//! The mirror report (seed 004: "identify mirrors or replicated web sites").

use super::Dedup;
use crate::verify::PairClass;
use serde::Serialize;

/// One line of the mirror report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MirrorPair {
    /// First site (lexicographically smaller).
    pub site_a: String,
    /// Second site.
    pub site_b: String,
    /// Duplicate pairs (exact or near) between them.
    pub pairs: u64,
    /// Pages of `site_a` in such a pair.
    pub pages_a: u64,
    /// Pages of `site_b` in such a pair.
    pub pages_b: u64,
    /// `pages_a` over the pages of `site_a` read.
    pub share_a: f64,
    /// `pages_b` over the pages of `site_b` read.
    pub share_b: f64,
}

type MirrorAcc = (
    u64,
    std::collections::BTreeSet<u32>,
    std::collections::BTreeSet<u32>,
);

impl Dedup {
    /// The mirror report (seed 004: "identify mirrors or replicated web sites"): site
    /// pairs ranked by the number of duplicate pairs (exact or near) between them, with
    /// the share of each site's pages involved. Ties go to the site names' order.
    pub fn mirrors(&self) -> Vec<MirrorPair> {
        let mut pages_per_site = vec![0u64; self.sites.len()];
        for s in self.site_of.iter().flatten() {
            pages_per_site[*s as usize] += 1;
        }
        let mut by_pair: std::collections::BTreeMap<(u32, u32), MirrorAcc> = Default::default();
        for p in self
            .pairs
            .iter()
            .filter(|p| p.class == PairClass::CrossSite)
        {
            let (Some(sa), Some(sb)) = (self.site_of[p.a as usize], self.site_of[p.b as usize])
            else {
                continue;
            };
            let ((x, dx), (y, dy)) = if self.sites[sa as usize] <= self.sites[sb as usize] {
                ((sa, p.a), (sb, p.b))
            } else {
                ((sb, p.b), (sa, p.a))
            };
            let e = by_pair.entry((x, y)).or_default();
            e.0 += 1;
            e.1.insert(dx);
            e.2.insert(dy);
        }
        let mut out: Vec<MirrorPair> = by_pair
            .into_iter()
            .map(|((x, y), (n, pa, pb))| MirrorPair {
                site_a: self.sites[x as usize].clone(),
                site_b: self.sites[y as usize].clone(),
                pairs: n,
                pages_a: pa.len() as u64,
                pages_b: pb.len() as u64,
                share_a: pa.len() as f64 / pages_per_site[x as usize].max(1) as f64,
                share_b: pb.len() as f64 / pages_per_site[y as usize].max(1) as f64,
            })
            .collect();
        out.sort_by(|a, b| {
            b.pairs
                .cmp(&a.pairs)
                .then_with(|| (&a.site_a, &a.site_b).cmp(&(&b.site_a, &b.site_b)))
        });
        out
    }
}
