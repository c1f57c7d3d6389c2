//! Same-site / cross-site strategies and the mirror report (seed 003; seed 004 on
//! mirrors).
//!
//! Henzinger found near-duplicate detection precise across sites and poor within one
//! (boilerplate), so stage two can apply a different rule to each class of pair.
//!
//! * **Site of a page** ([`SiteMode`]): the host of its URL, normalized (lower case,
//!   trailing dot and port removed; with [`SiteMode::HostNoWww`] a leading `www.`
//!   dropped), or its registrable domain from the public suffix list (the `psl` crate),
//!   or a caller-given site ([`Document::site`]). A page without one has no site.
//! * **Pair class** ([`PairClass`]): same site, cross site, or unknown (either page has
//!   no site).
//! * **Strategy** ([`SiteStrategy`]), consulted for every candidate pair: [`Uniform`]
//!   (the pipeline's filter for every class), [`Henzinger`] (a stricter Charikar
//!   threshold within a site, the paper's across sites), [`ByClass`] (any filter per
//!   class, configurable from the command line and TOML).
//!
//! * **Boilerplate removal** ([`crate::boilerplate`]): shingles on most pages of a site
//!   are cut out of that site's pages before sketching.

use crate::charikar::agreement;
use crate::document::{url_host, Document};
use crate::filter::PairFilter;
use crate::sketch::SketchRef;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How the site of a page is determined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SiteMode {
    /// The URL's host, normalized. The default.
    #[default]
    Host,
    /// The URL's host without a leading `www.`.
    HostNoWww,
    /// The registrable domain (public suffix list), e.g. `example.co.uk`.
    Domain,
}

/// The site of `doc`: its caller-given [`Document::site`] if set, else from its URL.
pub fn site_of(doc: &Document, mode: SiteMode) -> Option<String> {
    if let Some(s) = &doc.site {
        return Some(s.clone());
    }
    let host = url_host(doc.url.as_deref()?)?
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    Some(match mode {
        SiteMode::Host => host,
        SiteMode::HostNoWww => host.strip_prefix("www.").unwrap_or(&host).to_string(),
        SiteMode::Domain => psl::domain_str(&host).unwrap_or(&host).to_string(),
    })
}

/// The class of a pair of pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "snake_case")]
pub enum PairClass {
    /// Both pages on one site.
    SameSite,
    /// Pages on two sites.
    CrossSite,
    /// At least one page has no site.
    Unknown,
}

impl PairClass {
    /// The class of two site ids (`None` = no site).
    pub fn of(a: Option<u32>, b: Option<u32>) -> PairClass {
        match (a, b) {
            (Some(x), Some(y)) if x == y => PairClass::SameSite,
            (Some(_), Some(_)) => PairClass::CrossSite,
            _ => PairClass::Unknown,
        }
    }

    /// `"same"`, `"cross"` or `"unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PairClass::SameSite => "same",
            PairClass::CrossSite => "cross",
            PairClass::Unknown => "unknown",
        }
    }
}

/// Stage two by class of pair.
pub trait SiteStrategy: Send + Sync + std::fmt::Debug {
    /// A short name for reports.
    fn name(&self) -> String;
    /// True iff the candidate pair of class `class` is kept.
    fn accept(&self, class: PairClass, a: SketchRef<'_>, b: SketchRef<'_>) -> bool;
}

/// The same filter for every class (the behaviour without a strategy).
#[derive(Debug, Clone)]
pub struct Uniform(pub Arc<dyn PairFilter>);

impl SiteStrategy for Uniform {
    fn name(&self) -> String {
        format!("uniform({})", self.0.name())
    }
    fn accept(&self, _: PairClass, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        self.0.accept(a, b)
    }
}

/// Henzinger's split: within a site a stricter Charikar threshold (boilerplate makes
/// distinct pages of one site look alike), across sites and for unknown pairs the
/// paper's. Thresholds are agreeing bits, inclusive.
#[derive(Debug, Clone, Copy)]
pub struct Henzinger {
    /// Minimum agreement for same-site pairs. Default for 384 bits: 380.
    pub same_site: u32,
    /// Minimum agreement for cross-site and unknown pairs. Default for 384 bits: 372.
    pub cross_site: u32,
}

impl Henzinger {
    /// The defaults scaled to `bits`: `round(380/384 · b)` and `round(372/384 · b)`.
    pub fn for_bits(bits: u32) -> Self {
        Henzinger {
            same_site: (380 * bits + 192) / 384,
            cross_site: (372 * bits + 192) / 384,
        }
    }
}

impl SiteStrategy for Henzinger {
    fn name(&self) -> String {
        format!(
            "henzinger(same-site agreement>={}, cross-site agreement>={})",
            self.same_site, self.cross_site
        )
    }
    fn accept(&self, class: PairClass, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        let t = if class == PairClass::SameSite {
            self.same_site
        } else {
            self.cross_site
        };
        agreement(a.charikar, b.charikar) >= t
    }
}

/// Any filter per class.
#[derive(Debug, Clone)]
pub struct ByClass {
    /// Same-site pairs.
    pub same_site: Arc<dyn PairFilter>,
    /// Cross-site pairs.
    pub cross_site: Arc<dyn PairFilter>,
    /// Pairs where a page has no site.
    pub unknown: Arc<dyn PairFilter>,
}

impl SiteStrategy for ByClass {
    fn name(&self) -> String {
        format!(
            "by-class(same: {}, cross: {}, unknown: {})",
            self.same_site.name(),
            self.cross_site.name(),
            self.unknown.name()
        )
    }
    fn accept(&self, class: PairClass, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        match class {
            PairClass::SameSite => self.same_site.accept(a, b),
            PairClass::CrossSite => self.cross_site.accept(a, b),
            PairClass::Unknown => self.unknown.accept(a, b),
        }
    }
}

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
