//! Sites of pages and classes of pairs (seed 003).
//!
//! * **Site of a page** ([`SiteMode`]): the host of its URL, normalized (lower case,
//!   trailing dot and port removed; with [`SiteMode::HostNoWww`] a leading `www.`
//!   dropped), or its registrable domain from the public suffix list (the `psl` crate),
//!   or a caller-given site ([`Document::site`]). A page without one has no site.
//! * **Pair class** ([`PairClass`]): same site, cross site, or unknown (either page has
//!   no site). The [`Rule`](super::Rule) may judge each class differently.

use crate::document::{url_host, Document};
use serde::{Deserialize, Serialize};

/// How the site of a page is determined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
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
#[non_exhaustive]
pub enum PairClass {
    /// Both pages on one site.
    SameSite,
    /// Pages on two sites.
    CrossSite,
    /// At least one page has no site.
    Unknown,
}

impl PairClass {
    /// The class of two sites (ids or names; `None` = no site).
    pub fn of<T: PartialEq>(a: Option<T>, b: Option<T>) -> PairClass {
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

/// Site names interned as they arrive: one string per site, a `u32` per page.
#[derive(Debug, Default, Clone)]
pub(crate) struct SiteNames {
    names: Vec<String>,
    index: ahash::AHashMap<String, u32>,
}

impl SiteNames {
    /// The number of `site`, given it if new.
    pub(crate) fn intern(&mut self, site: &str) -> u32 {
        if let Some(&i) = self.index.get(site) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(site.to_string());
        self.index.insert(site.to_string(), i);
        i
    }

    /// The name of site number `i`.
    pub(crate) fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    /// The names, by number.
    pub(crate) fn into_names(self) -> Vec<String> {
        self.names
    }
}
