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

/// Where a page's site comes from, as settings spell it: a rule on its URL (`host`,
/// `host-no-www`, `domain`) or a field of its record (`field:NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SiteRule {
    /// From the URL, by this mode (`host` is the default).
    Url(SiteMode),
    /// The record's field of this name ([`Document::site`]).
    Field(String),
}

impl std::str::FromStr for SiteRule {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        Ok(match s {
            "host" => SiteRule::Url(SiteMode::Host),
            "host-no-www" => SiteRule::Url(SiteMode::HostNoWww),
            "domain" => SiteRule::Url(SiteMode::Domain),
            _ => match s.strip_prefix("field:").filter(|f| !f.is_empty()) {
                Some(f) => SiteRule::Field(f.to_string()),
                None => {
                    return Err(crate::error::Error::Config(format!(
                        "--site {s:?}: expected host, host-no-www, domain or field:NAME"
                    )))
                }
            },
        })
    }
}

impl SiteRule {
    /// The mode for pages whose site comes from their URL ([`SiteMode::Host`] when the
    /// site is a field: pages without the field fall back to their host).
    pub fn mode(&self) -> SiteMode {
        match self {
            SiteRule::Url(m) => *m,
            SiteRule::Field(_) => SiteMode::Host,
        }
    }

    /// The record field holding the site, when it is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            SiteRule::Field(f) => Some(f),
            SiteRule::Url(_) => None,
        }
    }
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
///
/// The numbers are found through an open-addressing table of 64-byte cells, one cache
/// line each, that hold a name's hash, its number and, for names of up to
/// [`INLINE_NAME`] bytes, the name itself: a lookup reads one line, which a caller
/// can ask for ahead ([`home_cell`](Self::home_cell)). (The online deduper interns a
/// page's site on every insert; with a map of `String` keys, the lookup's two or three
/// cache misses were 2 % of its time at 10 M stored documents.) The price is memory:
/// the cells are at most half full, so a site costs 128 to 256 bytes of cells besides
/// its string, where a map entry cost about 40 to 75. That is little for a crawl (a
/// site per hundred pages or so); a corpus where every page is a site of its own pays
/// it per page.
#[derive(Debug, Clone)]
pub(crate) struct SiteNames {
    names: Vec<String>,
    /// A power of two long (or empty), at most half full.
    cells: Vec<SiteCell>,
    /// The names' hash: XXH3-64 (tests give hashes that collide).
    hasher: fn(&[u8]) -> u64,
}

impl Default for SiteNames {
    fn default() -> Self {
        SiteNames {
            names: Vec::new(),
            cells: Vec::new(),
            hasher: xxhash_rust::xxh3::xxh3_64,
        }
    }
}

/// The longest name a cell holds itself; a longer one is compared with its string.
const INLINE_NAME: usize = 48;

/// A cell of [`SiteNames`]: empty when `number` is 0, else the site `number − 1`.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct SiteCell {
    hash: u64,
    number: u32,
    len: u32,
    name: [u8; INLINE_NAME],
}

impl SiteCell {
    const EMPTY: SiteCell = SiteCell {
        hash: 0,
        number: 0,
        len: 0,
        name: [0; INLINE_NAME],
    };
}

impl SiteNames {
    /// The hash a site name is looked up by ([`intern_hashed`](Self::intern_hashed),
    /// [`find`](Self::find), [`home_cell`](Self::home_cell)).
    pub(crate) fn hash(&self, site: &str) -> u64 {
        (self.hasher)(site.as_bytes())
    }

    /// The number of `site`, given it if new.
    pub(crate) fn intern(&mut self, site: &str) -> u32 {
        self.intern_hashed(site, self.hash(site))
    }

    /// [`intern`](Self::intern) with the name's [`hash`](Self::hash) given (it must be
    /// that hash).
    pub(crate) fn intern_hashed(&mut self, site: &str, hash: u64) -> u32 {
        if let Some(i) = self.find(site, hash) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(site.to_string());
        if 2 * self.names.len() > self.cells.len() {
            let cap = (2 * self.cells.len()).max(16);
            self.cells = vec![SiteCell::EMPTY; cap];
            for (j, name) in self.names.iter().enumerate() {
                Self::place(
                    &mut self.cells,
                    name,
                    (self.hasher)(name.as_bytes()),
                    j as u32,
                );
            }
        } else {
            Self::place(&mut self.cells, site, hash, i);
        }
        i
    }

    /// Puts site `number` in the first empty cell from its home (there is one).
    fn place(cells: &mut [SiteCell], site: &str, hash: u64, number: u32) {
        let mask = cells.len() - 1;
        let mut i = hash as usize & mask;
        while cells[i].number != 0 {
            i = (i + 1) & mask;
        }
        let c = &mut cells[i];
        c.hash = hash;
        c.number = number + 1;
        c.len = site.len() as u32;
        if site.len() <= INLINE_NAME {
            c.name[..site.len()].copy_from_slice(site.as_bytes());
        }
    }

    /// The number of `site`, whose [`hash`](Self::hash) is `hash` (it must be that
    /// hash), if interned.
    pub(crate) fn find(&self, site: &str, hash: u64) -> Option<u32> {
        if self.cells.is_empty() {
            return None;
        }
        let mask = self.cells.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let c = &self.cells[i];
            if c.number == 0 {
                return None;
            }
            if c.hash == hash && c.len as usize == site.len() {
                let n = c.number - 1;
                let same = if site.len() <= INLINE_NAME {
                    &c.name[..site.len()] == site.as_bytes()
                } else {
                    self.names[n as usize] == site
                };
                if same {
                    return Some(n);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Bytes of the cell a lookup of `hash` reads first (empty when there are no
    /// cells), for a prefetch: the cell is one cache line.
    pub(crate) fn home_cell(&self, hash: u64) -> &[u8] {
        if self.cells.is_empty() {
            return &[];
        }
        &self.cells[hash as usize & (self.cells.len() - 1)].name
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

#[cfg(test)]
mod tests {
    /// The spellings of `--site`: the three URL rules, a field, and the refusals.
    #[test]
    fn site_rules_parse_as_documented() {
        use super::{SiteMode, SiteRule};
        let rule = |s: &str| s.parse::<SiteRule>().unwrap();
        assert_eq!(rule("host"), SiteRule::Url(SiteMode::Host));
        assert_eq!(rule("host-no-www"), SiteRule::Url(SiteMode::HostNoWww));
        assert_eq!(rule("domain").mode(), SiteMode::Domain);
        assert_eq!(rule("field:site").field(), Some("site"));
        assert_eq!(rule("field:site").mode(), SiteMode::Host);
        assert_eq!(rule("domain").field(), None);
        for bad in ["field:", "Host", "url", ""] {
            let e = bad.parse::<SiteRule>().unwrap_err().to_string();
            assert!(
                e.contains("host, host-no-www, domain or field:NAME"),
                "{bad}: {e}"
            );
        }
    }

    use super::{SiteNames, INLINE_NAME};
    use std::collections::HashMap;

    /// Names short and long (past what a cell holds), many enough to grow the cells
    /// several times: each gets the next number once, keeps it, and is found by it;
    /// a name not interned is not found.
    #[test]
    fn interning_equals_a_map() {
        let mut names = SiteNames::default();
        let mut model: HashMap<String, u32> = HashMap::new();
        for k in 0..5_000u32 {
            for name in [
                format!("host{}.example", k % 1_700),
                format!("{}{}", "x".repeat(INLINE_NAME - 2), k % 300),
                "y".repeat(k as usize % 90),
            ] {
                let next = model.len() as u32;
                let want = *model.entry(name.clone()).or_insert(next);
                assert_eq!(names.intern(&name), want, "{name}");
            }
        }
        for (name, &i) in &model {
            assert_eq!(names.find(name, names.hash(name)), Some(i));
            assert_eq!(names.name(i), name);
        }
        for absent in ["host1700.example", "", "z", &"x".repeat(200)] {
            if !model.contains_key(absent) {
                assert_eq!(names.find(absent, names.hash(absent)), None);
            }
        }
        assert_eq!(names.into_names().len(), model.len());
    }

    /// Names whose hashes collide (a hash of the length alone, mod 3), short and long,
    /// of one length and of others, past several growths of the cells: each is told
    /// apart from the others by its bytes.
    #[test]
    fn names_with_one_hash_are_told_apart() {
        let mut names = SiteNames {
            hasher: |b| b.len() as u64 % 3,
            ..SiteNames::default()
        };
        let all: Vec<String> = (0..60)
            .map(|k| {
                let stem = if k % 2 == 0 { "s" } else { "l" };
                format!(
                    "{}{k:02}",
                    stem.repeat(if k % 2 == 0 { 3 } else { INLINE_NAME })
                )
            })
            .collect();
        for (i, name) in all.iter().enumerate() {
            assert_eq!(names.intern(name), i as u32);
        }
        for (i, name) in all.iter().enumerate() {
            assert_eq!(names.intern(name), i as u32);
            assert_eq!(names.find(name, names.hash(name)), Some(i as u32));
        }
        for absent in ["sss99", &format!("{}99", "l".repeat(INLINE_NAME)), "x"] {
            assert_eq!(names.find(absent, names.hash(absent)), None, "{absent}");
        }
    }
}
