//! Generated corpora with known ground truth (for tests, benches, evaluation and the
//! demo).
//!
//! Base documents are drawn from a Zipfian vocabulary of pronounceable synthetic words,
//! or taken from real documents ([`SynthConfig::seeds`]). Everything is drawn from
//! ChaCha8 with the caller's seed, so the output is the same on every machine. Some
//! base documents get near-duplicate variants of the kinds seeds 000/003 name as the
//! sources of near-duplicates on the web ([`Kind`]):
//!
//! | variant | change |
//! |---|---|
//! | `exact` | a byte-identical copy (another id) |
//! | `mirror` | the same page on another host (`mirrorN.example`) |
//! | `edit` | a few words replaced by random words |
//! | `timestamp` | a date line appended |
//! | `header` | a breadcrumb path, version line or title line prepended |
//! | `rebrand` | one frequent word replaced everywhere by another (consistent) |
//! | `format` | the other format: the HTML version of a text page or the text of an HTML page |
//! | `embed` | another page (`embedN.example`) that embeds this one between its own intro and outro |
//! | `dynamic` | small dynamic changes: a visitor counter and an ad line inserted |
//!
//! **Hard negatives:** with [`SynthConfig::template_sites`], the pages of the first
//! that many hosts all carry one large site template (a navigation header and a footer
//! of [`SynthConfig::template_words`] words); distinct pages of such a site are *not*
//! near-duplicates and are not in the truth.
//!
//! **Streaming:** [`Generator`] yields documents one at a time with memory bounded by
//! the variants waiting to be emitted (each variant appears within
//! [`SynthConfig::window`] documents after its base), so corpora of any size can be
//! written; [`generate`] collects a small corpus in memory.
//!
//! The truth lists exactly the planted pairs (base, variant, kind). Duplicates already
//! present among real seed documents are not in it: dedup the seeds first.

use crate::document::{Body, Document};
use crate::error::{Error, Result};
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// A kind of planted near-duplicate (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Kind {
    /// Byte-identical copy.
    Exact,
    /// Same page on another host.
    Mirror,
    /// A few words replaced.
    Edit,
    /// Date line appended.
    Timestamp,
    /// Breadcrumb line prepended.
    Header,
    /// One frequent word replaced everywhere.
    Rebrand,
    /// The other format (text ↔ HTML).
    Format,
    /// Embedded in another page.
    Embed,
    /// Visitor counter and ad line inserted.
    Dynamic,
}

impl Kind {
    /// Every kind, in table order.
    pub const ALL: [Kind; 9] = [
        Kind::Exact,
        Kind::Mirror,
        Kind::Edit,
        Kind::Timestamp,
        Kind::Header,
        Kind::Rebrand,
        Kind::Format,
        Kind::Embed,
        Kind::Dynamic,
    ];

    /// The kind's name as in the truth file.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Exact => "exact",
            Kind::Mirror => "mirror",
            Kind::Edit => "edit",
            Kind::Timestamp => "timestamp",
            Kind::Header => "header",
            Kind::Rebrand => "rebrand",
            Kind::Format => "format",
            Kind::Embed => "embed",
            Kind::Dynamic => "dynamic",
        }
    }

    /// The kind of a name.
    pub fn parse(name: &str) -> Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown variant kind {name:?} (kinds: {})",
                    Kind::ALL.map(Kind::name).join(", ")
                ))
            })
    }
}

/// Parses variant proportions such as `exact=1,edit=2,format=0.5` (weights, need not
/// sum to 1; kinds not named get weight 0).
pub fn parse_proportions(spec: &str) -> Result<Vec<(Kind, f64)>> {
    let mut v = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, w) = part.split_once('=').ok_or_else(|| {
            Error::Config(format!("variant proportion {part:?}: need KIND=WEIGHT"))
        })?;
        let w: f64 = w
            .trim()
            .parse()
            .map_err(|_| Error::Config(format!("variant proportion {part:?}: bad weight")))?;
        v.push((Kind::parse(name.trim())?, w));
    }
    Ok(v)
}

/// Settings of [`Generator`] and [`generate`]. Checked by [`SynthConfig::validate`].
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// Number of base documents (at most the number of seeds, when seeds are given).
    /// Default 1000.
    pub base_documents: usize,
    /// Words per base document (uniform in this range). Default 150..=600.
    pub words: (usize, usize),
    /// Vocabulary size. Default 20000.
    pub vocabulary: usize,
    /// Zipf exponent of word frequencies. Default 1.0.
    pub zipf: f64,
    /// Probability that a base document gets variants. Default 0.3.
    pub duplicate_rate: f64,
    /// Variants per duplicated base document (uniform in 1..=max). Default 3.
    pub max_variants: usize,
    /// Words replaced by an `edit` variant. Default 1..=3.
    pub edit_words: (usize, usize),
    /// Number of hosts (`site0.example` …). Default 10.
    pub hosts: usize,
    /// Relative weights of the variant kinds. Default: every kind weight 1.
    pub variants: Vec<(Kind, f64)>,
    /// Share of base documents written as HTML. Default 0.
    pub html_share: f64,
    /// The first this many hosts use a site template (hard negatives). Default 0.
    pub template_sites: usize,
    /// Words of a site template (header and footer together). Default 150.
    pub template_words: usize,
    /// A variant appears within this many documents after its base. Default 1000.
    pub window: usize,
    /// Real documents to use as base documents instead of generated text (text bodies;
    /// their own URLs are replaced by generated ones). Default none.
    pub seeds: Option<Arc<Vec<Document>>>,
    /// Seed. Default 1.
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            base_documents: 1000,
            words: (150, 600),
            vocabulary: 20000,
            zipf: 1.0,
            duplicate_rate: 0.3,
            max_variants: 3,
            edit_words: (1, 3),
            hosts: 10,
            variants: Kind::ALL.iter().map(|&k| (k, 1.0)).collect(),
            html_share: 0.0,
            template_sites: 0,
            template_words: 150,
            window: 1000,
            seeds: None,
            seed: 1,
        }
    }
}

impl SynthConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::Config(format!("synth: {m}")));
        if self.words.0 == 0 || self.words.0 > self.words.1 {
            return bad("need 1 <= min words <= max words");
        }
        if self.edit_words.0 > self.edit_words.1 {
            return bad("need min edit words <= max edit words");
        }
        if !(0.0..=1.0).contains(&self.duplicate_rate) || !(0.0..=1.0).contains(&self.html_share) {
            return bad("duplicate rate and HTML share must be in [0, 1]");
        }
        if self.vocabulary < 2 || self.hosts == 0 || self.max_variants == 0 {
            return bad("need vocabulary >= 2, hosts >= 1, max variants >= 1");
        }
        if self.template_sites > self.hosts {
            return bad("template sites cannot exceed hosts");
        }
        if self
            .variants
            .iter()
            .any(|(_, w)| !(*w >= 0.0 && w.is_finite()))
            || self.variants.iter().map(|(_, w)| w).sum::<f64>() <= 0.0
        {
            return bad("variant weights must be finite, >= 0, and not all 0");
        }
        if let Some(s) = &self.seeds {
            if let Some(d) = s.iter().find(|d| !matches!(d.body, Body::Text(_))) {
                return bad(&format!(
                    "seed document {:?} is HTML; seeds must be text records",
                    d.id
                ));
            }
        }
        Ok(())
    }
}

/// A planted near-duplicate: `variant` was made from `base`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TruthPair {
    /// Id of the base document.
    pub base: String,
    /// Id of the variant.
    pub variant: String,
    /// Kind of variant.
    pub kind: &'static str,
}

/// A generated corpus.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Documents in output order (each variant after its base).
    pub documents: Vec<Document>,
    /// The planted pairs, in the order the variants appear.
    pub truth: Vec<TruthPair>,
}

/// Collects a corpus in memory. Panics never; invalid settings give an empty corpus —
/// call [`SynthConfig::validate`] (or use [`Generator::new`]) to get the reason.
pub fn generate(cfg: &SynthConfig) -> Corpus {
    let mut documents = Vec::new();
    let mut truth = Vec::new();
    if let Ok(g) = Generator::new(cfg.clone()) {
        for (d, t) in g {
            documents.push(d);
            truth.extend(t);
        }
    }
    Corpus { documents, truth }
}

fn word(rank: usize) -> String {
    const C: &[u8] = b"bcdfghjklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut r = rank + 1;
    let mut s = String::new();
    while r > 0 {
        s.push(C[r % C.len()] as char);
        r /= C.len();
        s.push(V[r % V.len()] as char);
        r /= V.len();
    }
    s
}

/// One page before rendering: words are vocabulary ranks, or (≥ vocabulary size)
/// indexes into the page's own words (real seeds).
#[derive(Clone)]
struct Page {
    words: Vec<u32>,
    local: Arc<Vec<String>>,
    sentences: bool,
    prefix: String,
    suffix: String,
    host: String,
    path: String,
    html: bool,
    template: Option<usize>,
    title: String,
}

/// A streaming corpus generator: an iterator of documents, each variant with the truth
/// pair that planted it.
pub struct Generator {
    cfg: SynthConfig,
    rng: ChaCha8Rng,
    vocab: Vec<String>,
    cdf: Vec<f64>,
    kinds: Vec<(Kind, f64)>,
    templates: Vec<(Vec<u32>, Vec<u32>)>,
    next_base: usize,
    position: u64,
    sequence: u64,
    pending: BinaryHeap<Reverse<(u64, u64)>>,
    waiting: ahash::AHashMap<u64, (Document, TruthPair)>,
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("next_base", &self.next_base)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl Generator {
    /// A generator for validated settings.
    pub fn new(cfg: SynthConfig) -> Result<Self> {
        cfg.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let vocab: Vec<String> = (0..cfg.vocabulary).map(word).collect();
        let mut cdf = Vec::with_capacity(vocab.len());
        let mut acc = 0.0;
        for r in 0..vocab.len() {
            acc += 1.0 / ((r + 1) as f64).powf(cfg.zipf);
            cdf.push(acc);
        }
        let mut g = Generator {
            kinds: cfg
                .variants
                .iter()
                .copied()
                .filter(|(_, w)| *w > 0.0)
                .collect(),
            templates: Vec::new(),
            vocab,
            cdf,
            rng: ChaCha8Rng::seed_from_u64(0),
            next_base: 0,
            position: 0,
            sequence: 0,
            pending: BinaryHeap::new(),
            waiting: ahash::AHashMap::new(),
            cfg,
        };
        for _ in 0..g.cfg.template_sites {
            let n = g.cfg.template_words;
            let head: Vec<u32> = (0..n * 3 / 5).map(|_| g.draw(&mut rng)).collect();
            let foot: Vec<u32> = (0..n - n * 3 / 5).map(|_| g.draw(&mut rng)).collect();
            g.templates.push((head, foot));
        }
        g.rng = rng;
        Ok(g)
    }

    /// Variants generated but not yet emitted (bounded by about twice
    /// `window × max_variants`).
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }

    fn draw(&self, rng: &mut ChaCha8Rng) -> u32 {
        let acc = self.cdf.last().copied().unwrap_or(1.0);
        let x = rng.random::<f64>() * acc;
        self.cdf
            .partition_point(|&c| c < x)
            .min(self.vocab.len() - 1) as u32
    }

    fn bases(&self) -> usize {
        match &self.cfg.seeds {
            Some(s) => self.cfg.base_documents.min(s.len()),
            None => self.cfg.base_documents,
        }
    }

    fn word<'a>(&'a self, page: &'a Page, w: u32) -> &'a str {
        let v = self.vocab.len();
        if (w as usize) < v {
            &self.vocab[w as usize]
        } else {
            page.local.get(w as usize - v).map_or("", String::as_str)
        }
    }

    fn join(&self, page: &Page, words: &[u32], out: &mut String) {
        let sentences = page.sentences;
        for (k, &w) in words.iter().enumerate() {
            if k > 0 {
                out.push_str(if sentences && k % 17 == 0 { ". " } else { " " });
            }
            out.push_str(self.word(page, w));
        }
    }

    fn render(&self, id: String, page: &Page) -> Document {
        let (head, foot) = match page.template {
            Some(t) => (&self.templates[t].0[..], &self.templates[t].1[..]),
            None => (&[][..], &[][..]),
        };
        let mut s = String::new();
        if page.html {
            s.push_str("<!DOCTYPE html>\n<html><head><title>");
            s.push_str(&html_escape::encode_text(&page.title));
            s.push_str("</title></head>\n<body>\n");
            if !page.prefix.is_empty() {
                s.push_str("<p>");
                s.push_str(&html_escape::encode_text(&page.prefix));
                s.push_str("</p>\n");
            }
            if !head.is_empty() {
                s.push_str("<nav>");
                self.join(page, head, &mut s);
                s.push_str("</nav>\n");
            }
            for (i, para) in page.words.chunks(51).enumerate() {
                let mut t = String::new();
                self.join(page, para, &mut t);
                s.push_str("<p>");
                let t = html_escape::encode_text(&t);
                // One inline tag per paragraph: ignored by the tokenizer, so the HTML
                // and the text version have the same terms.
                match (i % 3 == 1).then(|| t.split_once(' ')).flatten() {
                    Some((first, rest)) => {
                        s.push_str("<b>");
                        s.push_str(first);
                        s.push_str("</b> ");
                        s.push_str(rest);
                    }
                    None => s.push_str(&t),
                }
                s.push_str("</p>\n");
            }
            if !foot.is_empty() {
                s.push_str("<footer>");
                self.join(page, foot, &mut s);
                s.push_str("</footer>\n");
            }
            if !page.suffix.is_empty() {
                s.push_str("<p>");
                s.push_str(&html_escape::encode_text(&page.suffix));
                s.push_str("</p>\n");
            }
            s.push_str("</body></html>\n");
        } else {
            if !page.prefix.is_empty() {
                s.push_str(&page.prefix);
                s.push('\n');
            }
            if !head.is_empty() {
                self.join(page, head, &mut s);
                s.push('\n');
            }
            self.join(page, &page.words, &mut s);
            if !foot.is_empty() {
                s.push('\n');
                self.join(page, foot, &mut s);
            }
            if !page.suffix.is_empty() {
                s.push('\n');
                s.push_str(&page.suffix);
            }
        }
        let doc = if page.html {
            Document::html(id, s)
        } else {
            Document::text(id, s)
        };
        doc.with_url(format!("http://{}{}", page.host, page.path))
    }

    fn pick_kind(&mut self) -> Kind {
        let total: f64 = self.kinds.iter().map(|(_, w)| w).sum();
        let mut x = self.rng.random::<f64>() * total;
        for &(k, w) in &self.kinds {
            if x < w {
                return k;
            }
            x -= w;
        }
        self.kinds.last().map_or(Kind::Exact, |k| k.0)
    }

    fn base_page(&mut self, i: usize) -> Page {
        let mut rng = std::mem::replace(&mut self.rng, ChaCha8Rng::seed_from_u64(0));
        let host_n = rng.random_range(0..self.cfg.hosts);
        let html = rng.random::<f64>() < self.cfg.html_share;
        let sentences = self.cfg.seeds.is_none();
        let (words, local) = match &self.cfg.seeds {
            Some(seeds) => {
                let text = seeds[i].body.as_str();
                let local: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
                let v = self.vocab.len() as u32;
                (
                    (0..local.len() as u32).map(|k| v + k).collect(),
                    Arc::new(local),
                )
            }
            None => {
                let n = rng.random_range(self.cfg.words.0..=self.cfg.words.1);
                let w = (0..n).map(|_| self.draw(&mut rng)).collect();
                (w, Arc::new(Vec::new()))
            }
        };
        self.rng = rng;
        let mut page = Page {
            title: String::new(),
            words,
            local,
            sentences,
            prefix: String::new(),
            suffix: String::new(),
            host: format!("site{host_n}.example"),
            path: format!("/page/{i}.html"),
            html,
            template: (host_n < self.cfg.template_sites).then_some(host_n),
        };
        let mut title = String::new();
        let head: Vec<u32> = page.words.iter().take(5).copied().collect();
        self.join(&page, &head, &mut title);
        page.title = title;
        page
    }

    fn variant(&mut self, base: &Page, kind: Kind, i: usize) -> Page {
        let mut rng = std::mem::replace(&mut self.rng, ChaCha8Rng::seed_from_u64(0));
        let mut p = base.clone();
        match kind {
            Kind::Exact => {}
            Kind::Mirror => p.host = format!("mirror{}.example", rng.random_range(0..3)),
            Kind::Edit => {
                let e = rng.random_range(self.cfg.edit_words.0..=self.cfg.edit_words.1);
                for _ in 0..e {
                    if !p.words.is_empty() {
                        let at = rng.random_range(0..p.words.len());
                        p.words[at] = self.draw(&mut rng);
                    }
                }
            }
            Kind::Timestamp => {
                p.suffix = format!(
                    "Updated 2024-{:02}-{:02}",
                    rng.random_range(1..13),
                    rng.random_range(1..29)
                )
            }
            Kind::Header => {
                // A breadcrumb path, a version line or a title line in front.
                let w = &self.vocab[rng.random_range(0..50.min(self.vocab.len()))];
                p.prefix = match rng.random_range(0..3) {
                    0 => format!("Home > {w} > Page {i}."),
                    1 => format!(
                        "Version {}.{}.{}",
                        rng.random_range(0..10),
                        rng.random_range(0..30),
                        rng.random_range(0..100)
                    ),
                    _ => format!("{w} {} - {}", i % 97, p.host),
                };
            }
            Kind::Rebrand => {
                let mut counts = std::collections::BTreeMap::new();
                for &w in &p.words {
                    *counts.entry(w).or_insert(0usize) += 1;
                }
                let top = counts
                    .iter()
                    .max_by_key(|(w, c)| (**c, Reverse(**w)))
                    .map_or(0, |(w, _)| *w);
                let to = (self.vocab.len() - 1) as u32;
                for w in &mut p.words {
                    if *w == top {
                        *w = to;
                    }
                }
            }
            Kind::Format => p.html = !p.html,
            Kind::Embed => {
                // A page of its own, on another host, with the base page inside: an
                // intro of about a tenth and an outro of about a twentieth of its length.
                p.host = format!("embed{}.example", rng.random_range(0..3));
                p.path = format!("/embed/{i}-{}.html", rng.random::<u32>());
                let intro: Vec<u32> = (0..p.words.len() / 10 + 1)
                    .map(|_| self.draw(&mut rng))
                    .collect();
                let outro: Vec<u32> = (0..p.words.len() / 20 + 1)
                    .map(|_| self.draw(&mut rng))
                    .collect();
                let mut s = String::new();
                self.join(&p, &intro, &mut s);
                p.prefix = s;
                let mut s = String::new();
                self.join(&p, &intro[..intro.len().min(5)], &mut s);
                p.title = s;
                let mut s = String::new();
                self.join(&p, &outro, &mut s);
                p.suffix = s;
            }
            Kind::Dynamic => {
                let counter = format!("visitors {}", rng.random_range(1000..1_000_000));
                let ad = format!(
                    "sponsored {} {} {}",
                    self.vocab[rng.random_range(0..self.vocab.len())],
                    self.vocab[rng.random_range(0..self.vocab.len())],
                    rng.random_range(10..100)
                );
                // Inserted as local words of the page.
                let mut local = (*p.local).clone();
                let v = self.vocab.len() as u32;
                for text in [counter, ad] {
                    let at = rng.random_range(0..=p.words.len());
                    let ws: Vec<u32> = text
                        .split(' ')
                        .map(|w| {
                            local.push(w.to_string());
                            v + local.len() as u32 - 1
                        })
                        .collect();
                    p.words.splice(at..at, ws);
                }
                p.local = Arc::new(local);
            }
        }
        self.rng = rng;
        p
    }
}

impl Iterator for Generator {
    type Item = (Document, Option<TruthPair>);

    fn next(&mut self) -> Option<Self::Item> {
        // A waiting variant whose turn has come goes first.
        if let Some(&Reverse((at, seq))) = self.pending.peek() {
            if at <= self.position || self.next_base >= self.bases() {
                self.pending.pop();
                let (d, t) = self.waiting.remove(&seq)?;
                self.position += 1;
                return Some((d, Some(t)));
            }
        }
        if self.next_base >= self.bases() {
            return None;
        }
        let i = self.next_base;
        self.next_base += 1;
        let page = self.base_page(i);
        let id = match &self.cfg.seeds {
            Some(s) if !s[i].id.is_empty() => s[i].id.clone(),
            _ => format!("doc{i:06}"),
        };
        if self.rng.random::<f64>() < self.cfg.duplicate_rate && !self.kinds.is_empty() {
            let k = self.rng.random_range(1..=self.cfg.max_variants);
            for v in 0..k {
                let kind = self.pick_kind();
                let vp = self.variant(&page, kind, i);
                let vid = format!("{id}-v{v}");
                let doc = self.render(vid.clone(), &vp);
                let at =
                    self.position + 1 + self.rng.random_range(0..self.cfg.window.max(1)) as u64;
                let seq = self.sequence;
                self.sequence += 1;
                self.pending.push(Reverse((at, seq)));
                self.waiting.insert(
                    seq,
                    (
                        doc,
                        TruthPair {
                            base: id.clone(),
                            variant: vid,
                            kind: kind.name(),
                        },
                    ),
                );
            }
        }
        self.position += 1;
        Some((self.render(id, &page), None))
    }
}
