//! The per-document sketch, its configuration and the [`Sketcher`] that computes it.

pub mod boilerplate;
pub mod broder;
pub mod charikar;
pub mod hash;
pub mod pugh;
pub mod shingle;
pub(crate) mod simd;
pub use simd::{
    detect as simd_detect, force as force_simd, level as simd_level, Level as SimdLevel, SIMD_ENV,
};
pub mod tokenize;

use crate::document::Document;
use crate::error::{check_range, Error, Result};
use crate::sketch::broder::{supershingles, MinHasher};
use crate::sketch::charikar::{ProjectScratch, Projector};
use crate::sketch::hash::{combine128, term_fingerprint};
use crate::sketch::shingle::shingles;
use crate::sketch::tokenize::{Tokenizer, TokenizerVersion, Tokens};
use serde::{Deserialize, Serialize};

/// Seed of the exact-duplicate fingerprint ([`combine128`] of the term sequence).
pub const EXACT_SEED: u64 = 0x4558_4143_5431_3238; // "EXACT128"

/// Which features a Charikar projection sums over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Features {
    /// Single terms (seed 003's default).
    #[default]
    Terms,
    /// The k-term shingles used for min-hashing.
    Shingles,
}

/// Validated settings of the sketch. Build one with [`SketchConfig::builder`].
///
/// Two sketches can be compared only when computed with equal settings;
/// [`SketchConfig::fingerprint`] identifies them in saved files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SketchConfig {
    /// Terms per shingle, `k`.
    pub shingle_size: usize,
    /// Whether shingle windows wrap around the end of the document.
    pub wrap_around: bool,
    /// Number of min-hash values, `m`.
    pub minhashes: usize,
    /// Number of supershingles, `m'` (divides `m`).
    pub supershingles: usize,
    /// Bits of the Charikar projection, `b`.
    pub charikar_bits: usize,
    /// Features of the Charikar projection.
    pub charikar_features: Features,
    /// Case folding of terms.
    pub case_fold: bool,
    /// Stop words, dropped from the term sequence.
    pub stop_words: Vec<String>,
    /// Integer weights of particular terms (Charikar and simhash only).
    pub term_weights: Vec<(String, u32)>,
    /// Weight multiplier of terms inside an HTML `<title>`.
    pub title_weight: u32,
    /// Seed mixed into every random parameter; sketches with different seeds are
    /// incomparable.
    pub seed: u64,
    /// Pugh bucket checksums ([`crate::sketch::pugh`]), computed only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pugh: Option<crate::sketch::pugh::PughConfig>,
    /// Whether the 64-bit simhash is computed (the default); when not, every sketch
    /// carries 0 in its place. Written into saved settings only when off, so the
    /// settings (and [`fingerprint`](Self::fingerprint)s) of sketches with simhashes
    /// are those of the builds before this setting.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub simhash: bool,
    /// The version of the term rules ([`crate::sketch::tokenize`]); by default the
    /// current one. Written into saved settings only when it is not 1, so settings
    /// saved before the tokenizer had versions read as version 1, and version-1
    /// settings (and their [`fingerprint`](Self::fingerprint)s) are those of the
    /// builds before it.
    #[serde(default = "tokenizer_v1", skip_serializing_if = "is_v1")]
    pub tokenizer: TokenizerVersion,
}

fn tokenizer_v1() -> TokenizerVersion {
    TokenizerVersion::V1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_v1(v: &TokenizerVersion) -> bool {
    *v == TokenizerVersion::V1
}

fn yes() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_yes(b: &bool) -> bool {
    *b
}

impl Default for SketchConfig {
    fn default() -> Self {
        SketchConfig {
            shingle_size: 8,
            wrap_around: false,
            minhashes: 84,
            supershingles: 6,
            charikar_bits: 384,
            charikar_features: Features::Terms,
            case_fold: true,
            stop_words: Vec::new(),
            term_weights: Vec::new(),
            title_weight: 1,
            seed: 0,
            pugh: None,
            simhash: true,
            tokenizer: TokenizerVersion::V2,
        }
    }
}

/// Builder of [`SketchConfig`]; every setter documents its default.
#[derive(Debug, Clone, Default)]
pub struct SketchConfigBuilder {
    config: SketchConfig,
}

impl SketchConfig {
    /// A builder starting from the paper defaults (seed 003).
    pub fn builder() -> SketchConfigBuilder {
        SketchConfigBuilder::default()
    }

    /// Checks every setting; the builder calls this.
    pub fn validate(&self) -> Result<()> {
        check_range("shingle_size", self.shingle_size as u64, 1, 64)?;
        check_range("minhashes", self.minhashes as u64, 1, 4096)?;
        check_range("supershingles", self.supershingles as u64, 1, 256)?;
        if !self.minhashes.is_multiple_of(self.supershingles) {
            return Err(Error::SupershinglesDoNotDivide {
                minhashes: self.minhashes,
                supershingles: self.supershingles,
            });
        }
        if !self.charikar_bits.is_multiple_of(64) || !(64..=1024).contains(&self.charikar_bits) {
            return Err(Error::CharikarBits(self.charikar_bits));
        }
        check_range("title_weight", self.title_weight as u64, 1, 1_000_000)?;
        if let Some(p) = &self.pugh {
            p.validate()?;
        }
        Ok(())
    }

    /// Min-hash values per supershingle (`m / m'`, 14 by default).
    pub fn supershingle_width(&self) -> usize {
        self.minhashes / self.supershingles
    }

    /// Refuses to compare sketches made with `saved` (which `what` names: "saved
    /// sketches", "the state in DIR") with sketches of these settings when their
    /// tokenizers differ, naming both versions: their terms are not comparable.
    pub fn check_tokenizer(&self, saved: &SketchConfig, what: &str) -> Result<()> {
        if saved.tokenizer == self.tokenizer {
            return Ok(());
        }
        Err(Error::Incompatible(format!(
            "{what} were made by tokenizer version {}, these settings use tokenizer version \
             {}: make them again, or set tokenizer = {} to keep comparing with them",
            saved.tokenizer, self.tokenizer, saved.tokenizer
        )))
    }

    /// A stable 64-bit identity of every setting that changes a sketch.
    pub fn fingerprint(&self) -> u64 {
        let text = serde_json::to_string(self).unwrap_or_default();
        term_fingerprint(text.as_bytes())
    }
}

impl SketchConfigBuilder {
    /// Terms per shingle, `k`: 1..=64. By default 8 (seed 003 allows 5–10).
    pub fn shingle_size(&mut self, k: usize) -> &mut Self {
        self.config.shingle_size = k;
        self
    }

    /// Let shingle windows wrap around the end of the document, giving `n` shingles for
    /// `n` terms instead of `n − k + 1` (seed 003). By default off.
    pub fn wrap_around(&mut self, yes: bool) -> &mut Self {
        self.config.wrap_around = yes;
        self
    }

    /// Min-hash values, `m`: 1..=4096. By default 84 (seed 003).
    pub fn minhashes(&mut self, m: usize) -> &mut Self {
        self.config.minhashes = m;
        self
    }

    /// Supershingles, `m'`: 1..=256 and dividing `m`. By default 6, of 14 min-values each
    /// (seed 003).
    pub fn supershingles(&mut self, count: usize) -> &mut Self {
        self.config.supershingles = count;
        self
    }

    /// Bits of the Charikar projection: a multiple of 64 in 64..=1024. By default 384
    /// (seed 003).
    pub fn charikar_bits(&mut self, bits: usize) -> &mut Self {
        self.config.charikar_bits = bits;
        self
    }

    /// Features of the Charikar projection. By default [`Features::Terms`] (seed 003).
    pub fn charikar_features(&mut self, f: Features) -> &mut Self {
        self.config.charikar_features = f;
        self
    }

    /// Case folding. By default on.
    pub fn case_fold(&mut self, yes: bool) -> &mut Self {
        self.config.case_fold = yes;
        self
    }

    /// Stop words removed from the term sequence (seed 002 §2). By default none.
    pub fn stop_words<I: IntoIterator<Item = S>, S: Into<String>>(
        &mut self,
        words: I,
    ) -> &mut Self {
        self.config.stop_words = words.into_iter().map(Into::into).collect();
        self
    }

    /// Integer weights (≥ 1) of particular terms in the Charikar and simhash
    /// projections. By default every term weighs 1.
    pub fn term_weights<I: IntoIterator<Item = (S, u32)>, S: Into<String>>(
        &mut self,
        weights: I,
    ) -> &mut Self {
        self.config.term_weights = weights.into_iter().map(|(s, w)| (s.into(), w)).collect();
        self
    }

    /// Weight multiplier for terms inside an HTML `<title>`: 1..=1000000. By default 1
    /// (off).
    pub fn title_weight(&mut self, w: u32) -> &mut Self {
        self.config.title_weight = w;
        self
    }

    /// Also compute Pugh bucket checksums with these settings (seed 004). By default
    /// off.
    pub fn pugh(&mut self, p: Option<crate::sketch::pugh::PughConfig>) -> &mut Self {
        self.config.pugh = p;
        self
    }

    /// Compute the 64-bit simhash (Charikar over terms, `b = 64`). By default on. Off,
    /// each sketch carries 0 in its place and a store of sketches ([`Sketches`]) holds 8
    /// bytes less per document; the projection is one word of 64 bits shorter (7 words
    /// to 6 with the defaults), which the AVX-512 path does in the same time (8 words a
    /// vector). A pipeline whose rule reads the simhash (the simhash candidates or
    /// filter) refuses such settings. The online deduper turns it off by itself when its
    /// rule does not read the simhash.
    pub fn simhash(&mut self, yes: bool) -> &mut Self {
        self.config.simhash = yes;
        self
    }

    /// Seed mixed into every random parameter. By default 0.
    pub fn seed(&mut self, seed: u64) -> &mut Self {
        self.config.seed = seed;
        self
    }

    /// The version of the term rules ([`crate::sketch::tokenize`]). By default the
    /// current one, [`TokenizerVersion::V2`]; [`TokenizerVersion::V1`] makes sketches
    /// comparable with those of files saved before it.
    pub fn tokenizer(&mut self, v: TokenizerVersion) -> &mut Self {
        self.config.tokenizer = v;
        self
    }

    /// Validates and returns the configuration.
    pub fn build(&self) -> Result<SketchConfig> {
        self.config.validate()?;
        Ok(self.config.clone())
    }
}

/// The sketch of one document: about 124 bytes with the default settings
/// (6 supershingles, 384 Charikar bits, simhash, exact fingerprint, term count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sketch {
    /// The `m'` supershingles (slot `j` at index `j`).
    pub supershingles: Vec<u64>,
    /// The `b`-bit Charikar projection, `b / 64` words.
    pub charikar: Vec<u64>,
    /// The 64-bit simhash (Charikar over weighted terms with `b = 64`, seeds 000/002).
    pub simhash: u64,
    /// 128-bit fingerprint of the normalized term sequence (exact duplicates).
    pub exact: u128,
    /// Number of terms after stop-word removal.
    pub terms: u32,
    /// Pugh bucket checksums, `R · L` (0 = empty list); empty when not configured.
    #[serde(default)]
    pub pugh: Vec<u64>,
}

impl Sketch {
    /// A borrowed view.
    pub fn as_ref(&self) -> SketchRef<'_> {
        SketchRef {
            supershingles: &self.supershingles,
            charikar: &self.charikar,
            simhash: self.simhash,
            exact: self.exact,
            terms: self.terms,
            pugh: &self.pugh,
        }
    }
}

/// A borrowed sketch, as stored in [`Sketches`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SketchRef<'a> {
    /// Supershingles.
    pub supershingles: &'a [u64],
    /// Charikar projection.
    pub charikar: &'a [u64],
    /// 64-bit simhash.
    pub simhash: u64,
    /// Exact fingerprint.
    pub exact: u128,
    /// Term count.
    pub terms: u32,
    /// Pugh checksums (empty when not configured).
    pub pugh: &'a [u64],
}

impl SketchRef<'_> {
    /// An owned copy.
    pub fn to_owned(&self) -> Sketch {
        Sketch {
            supershingles: self.supershingles.to_vec(),
            charikar: self.charikar.to_vec(),
            simhash: self.simhash,
            exact: self.exact,
            terms: self.terms,
            pugh: self.pugh.to_vec(),
        }
    }
}

/// Sketches of many documents, stored column-wise (no per-document allocation).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Sketches {
    ss: usize,
    words: usize,
    supershingles: Vec<u64>,
    charikar: Vec<u64>,
    simhash: Vec<u64>,
    exact: Vec<u128>,
    terms: Vec<u32>,
    #[serde(default)]
    pw: usize,
    #[serde(default)]
    pugh: Vec<u64>,
    /// The settings leave the simhash out: its column stays empty, every sketch's is 0.
    #[serde(default)]
    no_simhash: bool,
}

impl Sketches {
    /// An empty store for sketches made with `config`.
    pub fn new(config: &SketchConfig) -> Self {
        Sketches {
            ss: config.supershingles,
            words: config.charikar_bits / 64,
            pw: config.pugh.map_or(0, |p| p.width()),
            no_simhash: !config.simhash,
            ..Default::default()
        }
    }

    /// Number of sketches.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Bytes held by the columns, at their allocated capacity.
    pub fn heap_bytes(&self) -> usize {
        8 * (self.supershingles.capacity()
            + self.charikar.capacity()
            + self.simhash.capacity()
            + self.pugh.capacity())
            + 16 * self.exact.capacity()
            + 4 * self.terms.capacity()
    }

    /// Appends a sketch; it must come from the same settings.
    pub fn push(&mut self, s: &Sketch) {
        debug_assert_eq!(s.supershingles.len(), self.ss);
        debug_assert_eq!(s.charikar.len(), self.words);
        self.supershingles.extend_from_slice(&s.supershingles);
        self.charikar.extend_from_slice(&s.charikar);
        if !self.no_simhash {
            self.simhash.push(s.simhash);
        }
        self.exact.push(s.exact);
        self.terms.push(s.terms);
        let mut p = s
            .pugh
            .iter()
            .copied()
            .chain(std::iter::repeat(0))
            .take(self.pw);
        self.pugh.extend(&mut p);
    }

    /// The sketch at ordinal `i`.
    #[inline]
    pub fn get(&self, i: usize) -> SketchRef<'_> {
        SketchRef {
            supershingles: &self.supershingles[i * self.ss..(i + 1) * self.ss],
            charikar: &self.charikar[i * self.words..(i + 1) * self.words],
            simhash: if self.no_simhash { 0 } else { self.simhash[i] },
            exact: self.exact[i],
            terms: self.terms[i],
            pugh: &self.pugh[i * self.pw..(i + 1) * self.pw],
        }
    }

    /// The exact fingerprints of every sketch, by ordinal (the column [`get`](Self::get)
    /// reads `exact` from: for loops over many documents).
    #[inline]
    pub fn exact_fingerprints(&self) -> &[u128] {
        &self.exact
    }

    /// The term counts of every sketch, by ordinal (the column [`get`](Self::get) reads
    /// `terms` from).
    #[inline]
    pub fn term_counts(&self) -> &[u32] {
        &self.terms
    }

    /// The supershingles of the sketch at ordinal `i` (what [`get`](Self::get) gives,
    /// without touching the other columns: for loops over many documents).
    #[inline]
    pub fn supershingles(&self, i: usize) -> &[u64] {
        &self.supershingles[i * self.ss..(i + 1) * self.ss]
    }

    /// The Charikar projection of the sketch at ordinal `i`, alone.
    #[inline]
    pub fn charikar(&self, i: usize) -> &[u64] {
        &self.charikar[i * self.words..(i + 1) * self.words]
    }

    /// Bytes of sketch data per document.
    pub fn bytes_per_document(&self) -> usize {
        let simhash = if self.no_simhash { 0 } else { 8 };
        self.ss * 8 + self.words * 8 + simhash + 16 + 4 + self.pw * 8
    }
}

thread_local! {
    /// The buffers of [`Sketcher::sketch`] and [`Sketcher::sketch_as`], one per thread.
    static SCRATCH: std::cell::RefCell<Scratch> = Default::default();
}

/// What the caller of [`Sketcher::sketch_doc`] is told as a sketch is made, each
/// part as soon as it is known. The online deduper asks for the cells its lookups will
/// read (so the cache misses overlap the rest of the sketching), and stops at an exact
/// duplicate: its verdict reads nothing else.
pub(crate) trait SketchHook {
    /// The exact fingerprint ([`Sketch::exact`]), once the terms are known.
    fn exact(&mut self, exact: u128) {
        let _ = exact;
    }
    /// Asked once the shingles are made: true stops the sketch there, with only the
    /// exact fingerprint and the number of terms ([`Sketched::Exact`]).
    fn stop(&mut self) -> bool {
        false
    }
    /// The supershingles ([`Sketch::supershingles`]), before the projections are made.
    fn supershingles(&mut self, ss: &[u64]) {
        let _ = ss;
    }
}

/// No hook: told nothing, never stops.
impl SketchHook for () {}

/// The sketch [`Sketcher::sketch_doc`] made, or the exact fingerprint alone.
#[derive(Debug, Clone)]
pub(crate) enum Sketched {
    /// The whole sketch.
    Sketch(Sketch),
    /// Only the exact fingerprint and the number of terms: the caller said it needs
    /// nothing else.
    Exact {
        /// The fingerprint ([`Sketch::exact`]).
        exact: u128,
        /// The number of terms ([`Sketch::terms`]).
        terms: u32,
    },
}

impl Sketched {
    /// The whole sketch: a caller that did not let the hook stop it has one.
    pub(crate) fn whole(self) -> Sketch {
        match self {
            Sketched::Sketch(s) => s,
            Sketched::Exact { .. } => unreachable!("a sketch that may not stop is whole"),
        }
    }

    /// The number of terms ([`Sketch::terms`]), whichever was made.
    pub(crate) fn terms(&self) -> u32 {
        match self {
            Sketched::Sketch(s) => s.terms,
            Sketched::Exact { terms, .. } => *terms,
        }
    }
}

/// How [`Sketcher::sketch_doc`] makes a sketch: which shingles it leaves out, whom it
/// tells the parts, and whether that one may stop it after the shingles.
pub(crate) struct How<'a, H: SketchHook> {
    /// The site's boilerplate shingles, left out (see [`crate::sketch::boilerplate`]).
    pub without: Option<&'a ahash::AHashSet<u64>>,
    /// Told the parts as they are made.
    pub hook: &'a mut H,
    /// Whether the hook is asked to stop the sketch after the shingles.
    pub may_stop: bool,
}

impl<'a, H: SketchHook> How<'a, H> {
    /// The whole sketch, nothing left out, the hook told the parts.
    pub(crate) fn plain(hook: &'a mut H) -> Self {
        How {
            without: None,
            hook,
            may_stop: false,
        }
    }
}

/// What [`Sketcher::sketch_doc`] made: the sketch (or the exact fingerprint alone, when
/// the hook stopped it) and the number of terms and shingles the boilerplate removed.
#[derive(Debug, Clone)]
pub(crate) struct Made {
    /// The sketch, or the exact fingerprint alone.
    pub sketched: Sketched,
    /// Terms and shingles removed as boilerplate (0 when nothing changed).
    pub removed: usize,
}

impl Made {
    /// The whole sketch: a caller that did not let the hook stop it has one.
    pub(crate) fn whole(self) -> Sketch {
        self.sketched.whole()
    }
}

/// Reusable buffers of a [`Sketcher`]; one per thread.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scratch {
    tokens: Tokens,
    shingles: Vec<u64>,
    mins: Vec<u64>,
    project: ProjectScratch,
}

/// Everything computed for one document, for inspection (`neardup pair`, evaluation).
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Term fingerprints in order.
    pub terms: Vec<u64>,
    /// Shingle fingerprints in order.
    pub shingles: Vec<u64>,
    /// The `m` min-values.
    pub min_values: Vec<u64>,
    /// The sketch.
    pub sketch: Sketch,
}

/// Computes sketches. Cheap to share between threads (`&Sketcher` is `Sync`).
#[derive(Debug, Clone)]
pub struct Sketcher {
    config: SketchConfig,
    tokenizer: Tokenizer,
    minhasher: MinHasher,
    charikar: Projector,
    simhash: Projector,
    /// `charikar` then `simhash` in one pass, when both project terms.
    both: Projector,
    pugh: Option<crate::sketch::pugh::Pugh>,
}

impl Sketcher {
    /// A sketcher for a validated configuration.
    pub fn new(config: SketchConfig) -> Result<Self> {
        config.validate()?;
        // A vector path asked for by `NEARDUP_SIMD` that this CPU lacks is an error.
        simd::requested()?;
        Ok(Sketcher {
            tokenizer: Tokenizer::with_version(
                config.tokenizer,
                config.case_fold,
                &config.stop_words,
                &config.term_weights,
                config.title_weight,
            ),
            minhasher: MinHasher::new(config.minhashes, config.seed),
            charikar: Projector::new(config.charikar_bits, 2, config.seed),
            simhash: Projector::new(64, 3, config.seed),
            both: Projector::new(config.charikar_bits, 2, config.seed).concat(&Projector::new(
                64,
                3,
                config.seed,
            )),
            pugh: config
                .pugh
                .map(|p| crate::sketch::pugh::Pugh::new(p, config.seed)),
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &SketchConfig {
        &self.config
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The min-hash functions.
    pub fn minhasher(&self) -> &MinHasher {
        &self.minhasher
    }

    /// Sketches one document (with buffers kept per thread, so repeated calls do not
    /// allocate them again).
    pub fn sketch(&self, doc: &Document) -> Sketch {
        SCRATCH.with(|s| {
            self.sketch_doc(doc, &mut s.borrow_mut(), How::plain(&mut ()))
                .whole()
        })
    }

    /// Sketches one document as `how` says, with the thread's buffers.
    pub(crate) fn sketch_as<H: SketchHook>(&self, doc: &Document, how: How<'_, H>) -> Made {
        SCRATCH.with(|s| self.sketch_doc(doc, &mut s.borrow_mut(), how))
    }

    /// Sketches one document in `s`'s buffers as `how` says: the terms (less those
    /// covered only by the site's boilerplate shingles, when `how.without` gives them),
    /// the exact fingerprint (told to the hook), the shingles (boilerplate ones left
    /// out unless that leaves none), then, unless the hook may stop it there and does,
    /// the min-values, supershingles (told) and projections. Every way gives the same
    /// sketch for the same terms and shingles.
    pub(crate) fn sketch_doc<H: SketchHook>(
        &self,
        doc: &Document,
        s: &mut Scratch,
        how: How<'_, H>,
    ) -> Made {
        s.tokens.clear();
        self.tokenizer
            .tokenize(&doc.body, doc.url.as_deref(), &mut s.tokens);
        let mut removed = 0;
        if let Some(bp) = how.without {
            let k = self.config.shingle_size;
            s.shingles.clear();
            shingles(&s.tokens.fps, k, false, &mut s.shingles);
            removed = crate::sketch::boilerplate::strip_terms(
                &mut s.tokens.fps,
                &mut s.tokens.weights,
                &s.shingles,
                k,
                bp,
            );
        }
        let exact = combine128(&s.tokens.fps, EXACT_SEED);
        how.hook.exact(exact);
        let mut dropped = 0;
        self.shingle(s, how.without.map(|bp| (bp, &mut dropped)));
        removed += dropped;
        if how.may_stop && how.hook.stop() {
            let terms = s.tokens.fps.len().min(u32::MAX as usize) as u32;
            return Made {
                sketched: Sketched::Exact { exact, terms },
                removed,
            };
        }
        Made {
            sketched: Sketched::Sketch(self.sketch_shingles(s, exact, how.hook)),
            removed,
        }
    }

    /// The distinct `k`-term shingles of a document (no wrap-around), sorted: what the
    /// boilerplate pass counts.
    pub(crate) fn distinct_shingles(&self, doc: &Document, scratch: &mut Scratch) -> Vec<u64> {
        scratch.tokens.clear();
        self.tokenizer
            .tokenize(&doc.body, doc.url.as_deref(), &mut scratch.tokens);
        let mut v = Vec::new();
        shingles(&scratch.tokens.fps, self.config.shingle_size, false, &mut v);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Sketches a sequence of term fingerprints (weights 1) instead of a document's text.
    pub fn sketch_terms(&self, terms: &[u64]) -> Sketch {
        let mut s = Scratch::default();
        s.tokens.fps.extend_from_slice(terms);
        self.shingle(&mut s, None);
        let exact = combine128(&s.tokens.fps, EXACT_SEED);
        self.sketch_shingles(&mut s, exact, &mut ())
    }

    /// The shingles of `s`'s terms into `s.shingles`; with `drop`, those in the set are
    /// left out (unless that leaves none) and their number is added to the counter.
    fn shingle(&self, s: &mut Scratch, drop: Option<(&ahash::AHashSet<u64>, &mut usize)>) {
        let c = &self.config;
        s.shingles.clear();
        shingles(
            &s.tokens.fps,
            c.shingle_size,
            c.wrap_around,
            &mut s.shingles,
        );
        if let Some((bp, dropped)) = drop {
            let n = s.shingles.len();
            let left = s.shingles.iter().filter(|h| !bp.contains(h)).count();
            if left > 0 && left < n {
                s.shingles.retain(|h| !bp.contains(h));
                *dropped += n - left;
            }
        }
    }

    /// The sketch of `s`'s terms and shingles, whose exact fingerprint is `exact`; the
    /// supershingles told to `hook` before the projections are made.
    fn sketch_shingles(&self, s: &mut Scratch, exact: u128, hook: &mut impl SketchHook) -> Sketch {
        let c = &self.config;
        s.mins.resize(c.minhashes, 0);
        self.minhasher.min_values(&s.shingles, &mut s.mins);
        let mut ss = vec![0u64; c.supershingles];
        supershingles(&s.mins, &mut ss);
        hook.supershingles(&ss);
        let words = c.charikar_bits / 64;
        let mut charikar = vec![0u64; words + 1];
        match c.charikar_features {
            // Without the simhash: the Charikar bits alone (the first `words` of `both`'s).
            Features::Terms if !c.simhash => self.charikar.project_with(
                &s.tokens.fps,
                &s.tokens.weights,
                &mut s.project,
                &mut charikar[..words],
            ),
            Features::Terms => self.both.project_with(
                &s.tokens.fps,
                &s.tokens.weights,
                &mut s.project,
                &mut charikar,
            ),
            Features::Shingles => {
                self.charikar
                    .project_with(&s.shingles, &[], &mut s.project, &mut charikar);
                if c.simhash {
                    self.simhash.project_with(
                        &s.tokens.fps,
                        &s.tokens.weights,
                        &mut s.project,
                        &mut charikar[words..],
                    );
                }
            }
        }
        let simhash = charikar.pop().unwrap_or_default();
        let mut pugh = Vec::new();
        if let Some(p) = &self.pugh {
            pugh.resize(p.config().width(), 0);
            let features = if p.config().shingles {
                &s.shingles
            } else {
                &s.tokens.fps
            };
            p.checksums(features, &mut pugh);
        }
        Sketch {
            supershingles: ss,
            charikar,
            simhash,
            exact,
            terms: s.tokens.fps.len().min(u32::MAX as usize) as u32,
            pugh,
        }
    }

    /// Everything about one document: terms, shingles, min-values and sketch.
    pub fn analyze(&self, doc: &Document) -> Analysis {
        let mut s = Scratch::default();
        let sketch = self.sketch_doc(doc, &mut s, How::plain(&mut ())).whole();
        Analysis {
            terms: s.tokens.fps,
            shingles: s.shingles,
            min_values: s.mins,
            sketch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{How, SketchConfig, SketchHook, Sketched, Sketcher};
    use crate::Document;

    /// What a hook was told, in order, and whether it stops.
    struct Told(Vec<String>, bool);

    impl SketchHook for Told {
        fn exact(&mut self, exact: u128) {
            self.0.push(format!("exact {exact}"));
        }
        fn stop(&mut self) -> bool {
            self.0.push("stop?".into());
            self.1
        }
        fn supershingles(&mut self, ss: &[u64]) {
            self.0.push(format!("supershingles {ss:?}"));
        }
    }

    /// A hooked sketch that may stop tells the hook the sketch's exact fingerprint, asks
    /// it whether to stop, then tells it the supershingles; told no, it gives the
    /// sketch, told yes, the fingerprint and the number of terms alone. One that may not
    /// stop tells the same without asking, and gives the sketch.
    #[test]
    fn a_hooked_sketch_tells_the_parts_and_gives_the_sketch_or_its_exact_fingerprint() {
        for simhash in [true, false] {
            let config = SketchConfig {
                simhash,
                ..Default::default()
            };
            let s = Sketcher::new(config).unwrap();
            for (i, text) in [
                "",
                "one",
                "a few words of text, then <b>some</b> more words",
            ]
            .into_iter()
            .chain([&*"lorem ipsum dolor ".repeat(300)])
            .enumerate()
            {
                let doc = Document::text(format!("d{i}"), text);
                let want = s.sketch(&doc);
                for stop in [false, true] {
                    let mut told = Told(Vec::new(), stop);
                    let how = How {
                        without: None,
                        hook: &mut told,
                        may_stop: true,
                    };
                    let got = s.sketch_as(&doc, how).sketched;
                    let mut expected = vec![format!("exact {}", want.exact), "stop?".into()];
                    if !stop {
                        expected.push(format!("supershingles {:?}", want.supershingles));
                    }
                    assert_eq!(told.0, expected, "{text:?}");
                    match got {
                        Sketched::Sketch(got) => assert!(!stop && got == want, "{text:?}"),
                        Sketched::Exact { exact, terms } => {
                            assert!(stop && exact == want.exact && terms == want.terms)
                        }
                    }
                }
                // Not let stop, it never asks, whatever the hook would say: the sketch.
                let mut told = Told(Vec::new(), true);
                assert_eq!(
                    s.sketch_as(&doc, How::plain(&mut told)).whole(),
                    want,
                    "{text:?}"
                );
                assert_eq!(
                    told.0,
                    [
                        format!("exact {}", want.exact),
                        format!("supershingles {:?}", want.supershingles)
                    ],
                    "{text:?}"
                );
            }
        }
    }
}
