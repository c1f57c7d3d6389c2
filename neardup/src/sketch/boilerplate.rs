//! Boilerplate removal (seed 003: near-duplicate detection is poor within a site, mostly
//! because of navigation, headers and footers shared by every page of the site).
//!
//! A first pass over the corpus counts, per site, on how many pages each shingle occurs
//! ([`BoilerplateCounter`]). A shingle is **boilerplate** of its site when
//!
//! * the site has at least [`BoilerplateConfig::min_pages`] pages (sites with fewer
//!   pages are never touched), and
//! * the shingle occurs on at least [`BoilerplateConfig::min_share`] of the site's pages.
//!
//! The second pass (the normal run, [`crate::Pipeline::with_boilerplate`]) then leaves
//! the boilerplate shingles of its site out of each page's sketch:
//!
//! 1. the terms covered *only* by boilerplate shingles (a term is covered by the `k`
//!    shingles whose windows contain it) are removed — as if the template had been cut
//!    out of the page — so the Charikar projections and the exact fingerprint see the
//!    boilerplate-free terms too;
//! 2. the shingles of what remains are computed, and any boilerplate shingle still among
//!    them (an isolated one, inside the page's own text) is not min-hashed.
//!
//! A page that is nothing but boilerplate is sketched unchanged (it then matches the
//! other template-only pages of its site, which is the right answer: they are the same
//! page). Pages without a site are never changed.
//!
//! # Memory
//!
//! Counting is bounded: each site keeps at most [`BoilerplateConfig::capacity`]
//! counters, maintained with the Misra–Gries frequent-items algorithm. While a site's
//! distinct shingles fit, its counts are exact. Beyond that, each count `ĉ` is an
//! underestimate by at most `d`, the number of decrement rounds of that site (reported
//! per site in [`SiteBoilerplate::error`]; `d ≤ occurrences / (capacity + 1)`). A shingle
//! is declared boilerplate when `ĉ + d ≥ min_share · pages`, so **every** shingle that
//! truly is on `min_share` of the pages is found, and no shingle on fewer than
//! `min_share · pages − d` pages is. Memory is at most about
//! `24 B × min(capacity × sites, distinct (site, shingle) pairs)`.

use crate::error::{check_range, Error, Result};
use ahash::{AHashMap, AHashSet};
use serde::Serialize;

/// Settings of boilerplate detection. Validated by [`BoilerplateConfig::validate`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoilerplateConfig {
    /// Share of a site's pages a shingle must occur on to be boilerplate, in (0, 1].
    /// Default 0.5.
    pub min_share: f64,
    /// Sites with fewer pages are left untouched. At least 2. Default 10.
    pub min_pages: u32,
    /// Counters per site (Misra–Gries capacity). At least 16. Default 16384.
    pub capacity: usize,
}

impl Default for BoilerplateConfig {
    fn default() -> Self {
        BoilerplateConfig {
            min_share: 0.5,
            min_pages: 10,
            capacity: 16384,
        }
    }
}

impl BoilerplateConfig {
    /// Checks every field's range.
    pub fn validate(&self) -> Result<()> {
        if !(self.min_share > 0.0 && self.min_share <= 1.0) {
            return Err(Error::Config(format!(
                "boilerplate min_share must be in (0, 1], got {}",
                self.min_share
            )));
        }
        check_range(
            "boilerplate min_pages",
            self.min_pages as u64,
            2,
            u32::MAX as u64,
        )?;
        check_range("boilerplate capacity", self.capacity as u64, 16, 1 << 32)?;
        Ok(())
    }
}

#[derive(Debug, Default, Clone)]
struct SiteCounts {
    pages: u32,
    occurrences: u64,
    decrements: u32,
    counts: AHashMap<u64, u32>,
}

/// The first pass: per-site page counts of shingles (Misra–Gries, bounded memory).
#[derive(Debug, Clone)]
pub struct BoilerplateCounter {
    config: BoilerplateConfig,
    sites: AHashMap<String, SiteCounts>,
}

impl BoilerplateCounter {
    /// An empty counter. Fails if `config` is invalid.
    pub fn new(config: BoilerplateConfig) -> Result<Self> {
        config.validate()?;
        Ok(BoilerplateCounter {
            config,
            sites: AHashMap::new(),
        })
    }

    /// Counts one page of `site` given its shingle fingerprints (repeats within the page
    /// count once).
    pub fn observe(&mut self, site: &str, shingles: &[u64]) {
        let mut distinct = shingles.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        self.observe_distinct(site, &distinct);
    }

    /// [`observe`](Self::observe) for shingles already free of repeats.
    pub fn observe_distinct(&mut self, site: &str, distinct: &[u64]) {
        let cap = self.config.capacity;
        let s = match self.sites.get_mut(site) {
            Some(s) => s,
            None => self.sites.entry(site.to_string()).or_default(),
        };
        s.pages = s.pages.saturating_add(1);
        s.occurrences += distinct.len() as u64;
        for &h in distinct {
            if let Some(c) = s.counts.get_mut(&h) {
                *c += 1;
            } else if s.counts.len() < cap {
                s.counts.insert(h, 1);
            } else {
                // Misra–Gries: the newcomer and every counter lose one.
                s.decrements += 1;
                s.counts.retain(|_, c| {
                    *c -= 1;
                    *c > 0
                });
            }
        }
    }

    /// Counter entries held now (for memory reports).
    pub fn entries(&self) -> usize {
        self.sites.values().map(|s| s.counts.len()).sum()
    }

    /// Decides the boilerplate shingles of every site.
    pub fn finish(self) -> Boilerplate {
        let cfg = self.config;
        let mut sites = AHashMap::new();
        let mut report = Vec::new();
        let mut pages = 0u64;
        for (name, s) in self.sites {
            pages += s.pages as u64;
            if s.pages < cfg.min_pages {
                continue;
            }
            let need = cfg.min_share * s.pages as f64;
            let set: AHashSet<u64> = s
                .counts
                .iter()
                .filter(|(_, &c)| (c as f64 + s.decrements as f64) >= need)
                .map(|(&h, _)| h)
                .collect();
            report.push(SiteBoilerplate {
                site: name.clone(),
                pages: s.pages,
                shingles: set.len(),
                error: s.decrements,
            });
            if !set.is_empty() {
                sites.insert(name, set);
            }
        }
        report.sort_by(|a, b| b.shingles.cmp(&a.shingles).then(a.site.cmp(&b.site)));
        Boilerplate {
            config: cfg,
            sites,
            report,
            pages,
        }
    }
}

/// What boilerplate detection found for one site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteBoilerplate {
    /// The site.
    pub site: String,
    /// Its pages.
    pub pages: u32,
    /// Its boilerplate shingles.
    pub shingles: usize,
    /// Largest possible undercount of a shingle's pages (Misra–Gries decrement rounds;
    /// 0 = counts were exact).
    pub error: u32,
}

/// The boilerplate shingles of each site, the result of the first pass.
#[derive(Debug, Clone)]
pub struct Boilerplate {
    config: BoilerplateConfig,
    sites: AHashMap<String, AHashSet<u64>>,
    report: Vec<SiteBoilerplate>,
    pages: u64,
}

impl Boilerplate {
    /// The settings it was found with.
    pub fn config(&self) -> &BoilerplateConfig {
        &self.config
    }

    /// The boilerplate shingles of `site` (`None`: nothing to remove there).
    pub(crate) fn for_site(&self, site: &str) -> Option<&AHashSet<u64>> {
        self.sites.get(site)
    }

    /// Every site with at least `min_pages` pages, most boilerplate shingles first.
    pub fn report(&self) -> &[SiteBoilerplate] {
        &self.report
    }

    /// Pages counted in the first pass (pages with a site).
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// Sites with boilerplate.
    pub fn sites_with_boilerplate(&self) -> usize {
        self.sites.len()
    }

    /// Boilerplate shingles over all sites.
    pub fn shingles(&self) -> usize {
        self.sites.values().map(|s| s.len()).sum()
    }
}

/// Removes from `terms` (and their `weights`, when not empty) every term covered only
/// by shingles in `boilerplate`, given the `k`-term shingles of `terms` without
/// wrap-around in `shingles` (`shingles[j]` covers `terms[j..j + k]`). Returns the number
/// of terms removed; removes nothing (and returns 0) when every term would go.
pub fn strip_terms(
    terms: &mut Vec<u64>,
    weights: &mut Vec<u32>,
    shingles: &[u64],
    k: usize,
    boilerplate: &AHashSet<u64>,
) -> usize {
    let n = terms.len();
    if n == 0 || shingles.is_empty() {
        return 0;
    }
    let k = k.max(1);
    if n < k {
        // One shingle of all the terms: all or nothing, and "all" keeps the page.
        return 0;
    }
    let windows = n - k + 1;
    // prefix[j] = number of non-boilerplate shingles among the first j.
    let mut prefix = Vec::with_capacity(windows + 1);
    prefix.push(0u32);
    let mut any = false;
    for &s in &shingles[..windows.min(shingles.len())] {
        let bp = boilerplate.contains(&s);
        any |= bp;
        prefix.push(prefix.last().copied().unwrap_or(0) + u32::from(!bp));
    }
    if !any {
        return 0;
    }
    let w = prefix.len() - 1;
    let keep: Vec<bool> = (0..n)
        .map(|i| {
            let lo = (i + 1).saturating_sub(k);
            let hi = i.min(w - 1);
            lo > hi || prefix[hi + 1] > prefix[lo]
        })
        .collect();
    let kept = keep.iter().filter(|&&b| b).count();
    if kept == 0 {
        return 0;
    }
    let mut it = keep.iter();
    terms.retain(|_| *it.next().unwrap_or(&true));
    if !weights.is_empty() {
        let mut it = keep.iter();
        weights.retain(|_| *it.next().unwrap_or(&true));
    }
    n - kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::shingle::shingles;

    fn shingle_vec(t: &[u64], k: usize) -> Vec<u64> {
        let mut v = Vec::new();
        shingles(t, k, false, &mut v);
        v
    }

    #[test]
    fn strips_exactly_the_covered_terms() {
        let k = 3;
        let template: Vec<u64> = (100..110).collect();
        let page: Vec<u64> = template.iter().copied().chain(1..6).collect();
        let bp: AHashSet<u64> = shingle_vec(&template, k).into_iter().collect();
        let mut t = page.clone();
        let mut w = Vec::new();
        let removed = strip_terms(&mut t, &mut w, &shingle_vec(&page, k), k, &bp);
        // Terms 100..=107 are covered only by template shingles; 108 and 109 are also in
        // windows reaching into the page's own terms.
        assert_eq!(removed, 8);
        assert_eq!(t, vec![108, 109, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn all_boilerplate_page_is_kept() {
        let t0: Vec<u64> = (1..20).collect();
        let bp: AHashSet<u64> = shingle_vec(&t0, 4).into_iter().collect();
        let mut t = t0.clone();
        let mut w = vec![1; t.len()];
        assert_eq!(strip_terms(&mut t, &mut w, &shingle_vec(&t0, 4), 4, &bp), 0);
        assert_eq!(t, t0);
    }

    #[test]
    fn misra_gries_finds_every_frequent_shingle() {
        // 200 pages of one site: shingles 0..20 on every page, 20..40 on every other
        // page, and 50 unique shingles per page; capacity far below the distinct count.
        let cfg = BoilerplateConfig {
            min_share: 0.5,
            min_pages: 10,
            capacity: 256,
        };
        let mut c = BoilerplateCounter::new(cfg).unwrap();
        let mut exact: AHashMap<u64, u32> = AHashMap::new();
        for p in 0..200u64 {
            let mut sh: Vec<u64> = (0..20).collect();
            if p % 2 == 0 {
                sh.extend(20..40);
            }
            if p % 5 == 0 {
                sh.extend(40..45);
            }
            sh.extend((0..50).map(|i| 1_000_000 + p * 100 + i));
            for &h in &sh {
                *exact.entry(h).or_default() += 1;
            }
            c.observe("a.example", &sh);
        }
        let b = c.finish();
        let set = b.for_site("a.example").unwrap();
        let d = b.report()[0].error as f64;
        assert!(
            d > 0.0 && d < 100.0,
            "capacity must be exceeded, within bounds: {d}"
        );
        for (h, &f) in &exact {
            if f as f64 >= 100.0 {
                assert!(set.contains(h), "missed {h} on {f} pages");
            }
            if set.contains(h) {
                assert!(f as f64 >= 100.0 - d, "{h} on only {f} pages");
            }
        }
        // Rare shingles never pass.
        assert!(!set.contains(&1_000_000));
    }

    #[test]
    fn small_sites_are_untouched_and_config_is_checked() {
        let mut c = BoilerplateCounter::new(BoilerplateConfig::default()).unwrap();
        for _ in 0..5 {
            c.observe("small.example", &[1, 2, 3]);
        }
        let b = c.finish();
        assert!(b.for_site("small.example").is_none());
        assert_eq!(b.pages(), 5);
        for bad in [
            BoilerplateConfig {
                min_share: 0.0,
                ..Default::default()
            },
            BoilerplateConfig {
                min_pages: 1,
                ..Default::default()
            },
            BoilerplateConfig {
                capacity: 3,
                ..Default::default()
            },
        ] {
            assert!(BoilerplateCounter::new(bad).is_err());
        }
    }
}
