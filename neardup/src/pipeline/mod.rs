//! The two-stage pipeline (seed 003 FIG. 3–4): the one entry point most users need.
//!
//! ```text
//! documents ─► sketches (parallel, streaming: text dropped once sketched)
//!           ─► exact-duplicate pre-pass (128-bit fingerprint of the term sequence)
//!           ─► stage one: candidates (≥ r of m' supershingles by default)
//!           ─► stage two: filter (Charikar agreement ≥ threshold by default)
//!           ─► optional high-recall union (Charikar agreement ≥ a higher threshold)
//!           ─► union-find clusters, representatives, kept set
//! ```
//!
//! Every input record ends in exactly one [`Fate`]: kept, exact duplicate of a named
//! record, near duplicate of a named record, or rejected with a reason (unreadable,
//! too large, no terms, or an id already used by an earlier record); the result checks
//! `read = kept + exact + near + rejected`.
//!
//! # Memory budget
//!
//! Text is dropped once sketched (at most [`PipelineBuilder::chunk_records`] records
//! are in flight), so memory grows with the number of records, not their bytes. Peak
//! memory is at most about **64 MB + (s + 250 + i) bytes per record**, where `s` is the
//! sketch size ([`Sketches::bytes_per_document`]: 124 bytes with the paper preset,
//! about 1.8 KB with the recall preset) and `i` the length of the record ids; the 250
//! bytes cover a record's fate, id and site slots, the exact-duplicate pass and the
//! stage-one keys and pairs. With the paper preset and short ids that is about 400
//! bytes per record: 4 GB for 10 million records (measured: see the README's scale
//! run). The 64 MB hold the records in flight: [`PipelineBuilder::chunk_records`] (512
//! by default) and, in the command-line tool, 1024 records read ahead
//! ([`crate::io::ReadAhead`]); documents of a few KB each fit. Big buckets never add
//! quadratic memory (see [`crate::candidates`]).

use crate::candidates::{
    BucketLimits, CandidateGenerator, CandidateStats, CharikarBlocks, Supershingles,
};
use crate::cluster::{representative, Cluster, ClusterMode, ClusterStats, Keep, UnionFind};
use crate::document::Document;
pub use crate::document::Rejection;
use crate::error::{check_range, Error, Result};
use crate::persist::sketches::SavedSketches;
use crate::sketch::boilerplate::{Boilerplate, BoilerplateConfig, BoilerplateCounter};
use crate::sketch::charikar::agreement;
use crate::sketch::{Features, Scratch, Sketch, SketchConfig, Sketcher, Sketches};
use crate::verify::filter::{CharikarFilter, PairFilter};

mod mirrors;
use crate::verify::{site_of, PairClass, Rule, SiteMode, Strategy};
pub use mirrors::MirrorPair;
use rayon::prelude::*;
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// What happened to one input record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Fate {
    /// Kept (a representative or a unique document).
    Kept,
    /// Dropped: same normalized term sequence as record `of`.
    ExactDuplicate {
        /// Ordinal of the record it duplicates.
        of: u32,
    },
    /// Dropped: near-duplicate; `of` is its cluster's representative.
    NearDuplicate {
        /// Ordinal of the representative.
        of: u32,
    },
    /// Rejected.
    Rejected {
        /// Why.
        reason: String,
    },
}

/// How a pair was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PairKind {
    /// Equal exact fingerprints.
    Exact,
    /// Stage one candidate that passed stage two.
    Near,
    /// Found only by the high-recall union.
    HighRecall,
}

impl PairKind {
    /// `"exact"`, `"near"` or `"high_recall"` (as in the pairs output).
    pub fn as_str(self) -> &'static str {
        match self {
            PairKind::Exact => "exact",
            PairKind::Near => "near",
            PairKind::HighRecall => "high_recall",
        }
    }
}

/// A verified pair of records (ordinals `a < b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// First record.
    pub a: u32,
    /// Second record.
    pub b: u32,
    /// How it was found.
    pub kind: PairKind,
    /// Agreeing supershingles.
    pub shared_supershingles: u32,
    /// Agreeing Charikar bits.
    pub agreement: u32,
    /// Same site, cross site, or unknown.
    pub class: PairClass,
}

/// Counters and timings of a run.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// Records read (new records only in incremental runs).
    pub read: u64,
    /// Saved records of an earlier snapshot compared against (incremental runs).
    pub previous: u64,
    /// Records kept.
    pub kept: u64,
    /// Records dropped as exact duplicates.
    pub exact_duplicates: u64,
    /// Records dropped as near duplicates.
    pub near_duplicates: u64,
    /// Records rejected.
    pub rejected: u64,
    /// Bytes of document bodies sketched.
    pub bytes: u64,
    /// Groups of exact duplicates (with at least two members).
    pub exact_groups: u64,
    /// Stage one counters.
    pub candidates: CandidateStats,
    /// Candidates that passed stage two.
    pub verified: u64,
    /// Pairs added by the high-recall union that stage two did not have.
    pub high_recall_added: u64,
    /// Reported pairs (exact and near) within one site.
    pub same_site_pairs: u64,
    /// Reported pairs across sites.
    pub cross_site_pairs: u64,
    /// Reported pairs where a page has no site.
    pub unknown_site_pairs: u64,
    /// Members removed from clusters by [`ClusterMode::Verified`].
    pub unchained: u64,
    /// Pages sketched without some boilerplate terms ([`Pipeline::with_boilerplate`]).
    pub boilerplate_pages: u64,
    /// Boilerplate terms and shingles removed over all pages.
    pub boilerplate_terms: u64,
    /// Cluster sizes.
    pub clusters: ClusterStats,
    /// Seconds per stage.
    pub seconds: Timings,
}

/// Seconds spent per stage.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Timings {
    /// Reading and sketching.
    pub sketch: f64,
    /// Exact-duplicate pre-pass.
    pub exact: f64,
    /// Stage one.
    pub candidates: f64,
    /// Stage two.
    pub filter: f64,
    /// High-recall union.
    pub high_recall: f64,
    /// Union-find and representatives.
    pub cluster: f64,
    /// Whole run.
    pub total: f64,
}

/// The result of [`Pipeline::run`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Dedup {
    /// Record ids by ordinal.
    pub ids: Vec<String>,
    /// Each record's fate, by ordinal.
    pub fates: Vec<Fate>,
    /// Verified pairs: exact pairs (member, representative of its exact group) and near
    /// pairs, sorted by `(a, b)`.
    pub pairs: Vec<Pair>,
    /// Clusters of two or more records (exact duplicates included), ordered by their
    /// smallest member.
    pub clusters: Vec<Cluster>,
    /// Ordinals of the kept records.
    pub kept: RoaringBitmap,
    /// The sketches by ordinal (rejected records have an all-zero sketch).
    pub sketches: Sketches,
    /// Counters and timings (of the new records only, for incremental runs).
    pub stats: Stats,
    /// Site names, indexed by site id.
    pub sites: Vec<String>,
    /// Site id of each record (`None`: no site).
    pub site_of: Vec<Option<u32>>,
    /// Number of leading ordinals that are saved sketches of an earlier snapshot
    /// ([`Pipeline::run_against`]); 0 otherwise. Their fates are always `Kept` and are
    /// not counted.
    pub previous: usize,
}

/// Per site pair: duplicate pairs, pages of each site involved.
impl Dedup {
    /// Checks that every record has exactly one fate and that the counts add up.
    pub fn check_accounting(&self) -> Result<()> {
        let s = &self.stats;
        if s.read != s.kept + s.exact_duplicates + s.near_duplicates + s.rejected
            || self.fates.len() as u64 != s.read + self.previous as u64
            || self.kept.len() != s.kept
        {
            return Err(Error::Config(format!(
                "accounting broken: read {} != kept {} + exact {} + near {} + rejected {}",
                s.read, s.kept, s.exact_duplicates, s.near_duplicates, s.rejected
            )));
        }
        Ok(())
    }
}

/// Named parameter sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Preset {
    /// Seed 003's parameters: 8-term shingles, 84 min-values, 6 supershingles of 14,
    /// r = 2, 384 Charikar bits, agreement ≥ 372. A precision instrument for
    /// near-identical pages.
    #[default]
    Paper,
    /// Tuned for looser near-duplicates on the development set (see the README's
    /// accuracy report): 3-term shingles, 168 min-values in 84 supershingles of 2,
    /// 1024 Charikar bits over shingles; candidates share ≥ 35 supershingles and are
    /// kept if ≥ 815 Charikar bits agree or ≥ 51 supershingles agree (the values of
    /// [`RECALL`]). No high-recall union. Sketches are larger (about 1.8 KB).
    Recall,
}

/// Progress of a run, passed to the callback of [`PipelineBuilder::on_progress`].
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Records read so far.
    pub records: u64,
    /// Body bytes sketched so far.
    pub bytes: u64,
}

type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Builder of a [`Pipeline`]. Every setter documents its default; [`build`](Self::build)
/// validates.
#[derive(Clone)]
pub struct PipelineBuilder {
    sketch: SketchConfig,
    min_shared: usize,
    charikar_threshold: Option<u32>,
    accept_shared: Option<usize>,
    high_recall: Option<u32>,
    cluster_mode: ClusterMode,
    keep: Keep,
    limits: BucketLimits,
    threads: Option<usize>,
    max_document_bytes: usize,
    chunk_records: usize,
    candidates: Option<Arc<dyn CandidateGenerator>>,
    filter: Option<Arc<dyn PairFilter>>,
    strategy: Strategy,
    rule: Option<Rule>,
    site_mode: SiteMode,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for PipelineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineBuilder")
            .field("sketch", &self.sketch)
            .field("min_shared", &self.min_shared)
            .finish_non_exhaustive()
    }
}

impl Default for PipelineBuilder {
    fn default() -> Self {
        PipelineBuilder {
            sketch: SketchConfig::default(),
            min_shared: 2,
            charikar_threshold: None,
            accept_shared: None,
            high_recall: None,
            cluster_mode: ClusterMode::Transitive,
            keep: Keep::First,
            limits: BucketLimits::default(),
            threads: None,
            max_document_bytes: 64 << 20,
            chunk_records: 512,
            candidates: None,
            filter: None,
            strategy: Strategy::Uniform,
            rule: None,
            site_mode: SiteMode::Host,
            progress: None,
        }
    }
}

impl PipelineBuilder {
    /// Applies a preset's settings (sketch settings included). By default
    /// [`Preset::Paper`].
    pub fn preset(&mut self, preset: Preset) -> &mut Self {
        match preset {
            Preset::Paper => {
                let seed = self.sketch.seed;
                self.sketch = SketchConfig {
                    seed,
                    ..SketchConfig::default()
                };
                self.min_shared = 2;
                self.charikar_threshold = None;
                self.accept_shared = None;
                self.high_recall = None;
            }
            Preset::Recall => {
                self.sketch.shingle_size = RECALL.shingle_size;
                self.sketch.minhashes = RECALL.minhashes;
                self.sketch.supershingles = RECALL.supershingles;
                self.sketch.charikar_bits = RECALL.charikar_bits;
                self.sketch.charikar_features = Features::Shingles;
                self.min_shared = RECALL.min_shared;
                self.charikar_threshold = Some(RECALL.charikar_threshold);
                self.accept_shared = Some(RECALL.accept_shared);
                self.high_recall = None;
            }
        }
        self
    }

    /// The sketch settings (tokenizer, shingles, min-hashing, projections). By default
    /// [`SketchConfig::default`], the paper's.
    pub fn sketch_config(&mut self, config: SketchConfig) -> &mut Self {
        self.sketch = config;
        self
    }

    /// Mutable access to the sketch settings, for changing one of them.
    pub fn sketch_config_mut(&mut self) -> &mut SketchConfig {
        &mut self.sketch
    }

    /// Stage one: minimum agreeing supershingles `r`, inclusive, 1..=m'. By default 2
    /// (seed 003).
    pub fn min_shared(&mut self, r: usize) -> &mut Self {
        self.min_shared = r;
        self
    }

    /// Stage two: minimum Charikar agreement in bits, inclusive. By default 372 for 384
    /// bits (seed 003), scaled to `round(372/384 · b)` for other `b`.
    pub fn charikar_threshold(&mut self, bits: u32) -> &mut Self {
        self.charikar_threshold = Some(bits);
        self
    }

    /// Stage two also keeps a candidate that shares at least this many supershingles,
    /// without the Charikar check (inclusive; must exceed `min_shared`). By default off
    /// (seed 003 checks every candidate).
    pub fn accept_shared(&mut self, r: Option<usize>) -> &mut Self {
        self.accept_shared = r;
        self
    }

    /// High-recall union (seed 003, end of §4.2.3): also report every pair whose
    /// Charikar agreement is at least `bits`, inclusive, found by the block pigeonhole
    /// index. Must be at least the stage-two threshold. By default off.
    pub fn high_recall(&mut self, bits: Option<u32>) -> &mut Self {
        self.high_recall = bits;
        self
    }

    /// How verified pairs become clusters. By default [`ClusterMode::Transitive`].
    pub fn cluster_mode(&mut self, mode: ClusterMode) -> &mut Self {
        self.cluster_mode = mode;
        self
    }

    /// Which member of a cluster is kept. By default [`Keep::First`].
    pub fn keep(&mut self, keep: Keep) -> &mut Self {
        self.keep = keep;
        self
    }

    /// Big-bucket limits of stage one (see [`crate::candidates`]). By default 1000
    /// members and a window of 8.
    pub fn bucket_limits(&mut self, limits: BucketLimits) -> &mut Self {
        self.limits = limits;
        self
    }

    /// Worker threads: 1..=1024. By default rayon's global pool (one per core).
    pub fn threads(&mut self, n: Option<usize>) -> &mut Self {
        self.threads = n;
        self
    }

    /// Documents with a longer body are rejected ("document too large"). By default
    /// 64 MiB; 1..=4 GiB.
    pub fn max_document_bytes(&mut self, n: usize) -> &mut Self {
        self.max_document_bytes = n;
        self
    }

    /// Records in flight: taken from the input but not yet sketched and collected;
    /// bounds the text held in memory. They go to the threads in jobs of
    /// `clamp(n / 8, 1, 64)` records. Output does not depend on it. By default 512;
    /// 1..=1000000.
    pub fn chunk_records(&mut self, n: usize) -> &mut Self {
        self.chunk_records = n;
        self
    }

    /// Replaces stage one. By default [`Supershingles`] with `r` = [`min_shared`](Self::min_shared).
    pub fn candidates(&mut self, generator: Arc<dyn CandidateGenerator>) -> &mut Self {
        self.candidates = Some(generator);
        self
    }

    /// Replaces stage two's filter (for every class of pair). By default
    /// [`CharikarFilter`] with the configured threshold and `accept_shared`. Cannot be
    /// combined with [`Strategy::Henzinger`]; for a filter per class use
    /// [`rule`](Self::rule).
    pub fn filter(&mut self, filter: Arc<dyn PairFilter>) -> &mut Self {
        self.filter = Some(filter);
        self
    }

    /// Stage two by class of pair (same site, cross site, unknown); see [`Strategy`].
    /// By default [`Strategy::Uniform`].
    pub fn strategy(&mut self, strategy: Strategy) -> &mut Self {
        self.strategy = strategy;
        self
    }

    /// Replaces the whole verdict (stage one, stage two per class, high recall) by
    /// `rule`; the candidates, filter, strategy and high-recall settings are then not
    /// used. By default the rule is built from those settings.
    pub fn rule(&mut self, rule: Rule) -> &mut Self {
        self.rule = Some(rule);
        self
    }

    /// How a page's site is found. By default [`SiteMode::Host`].
    pub fn site_mode(&mut self, mode: SiteMode) -> &mut Self {
        self.site_mode = mode;
        self
    }

    /// A callback called after each sketched job (for progress bars). By default none.
    pub fn on_progress(&mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> &mut Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// The rule made of the candidates, filter, strategy and high-recall settings.
    fn default_rule(&self, threshold: u32) -> Result<Rule> {
        let candidates = self.candidates.clone().unwrap_or_else(|| {
            Arc::new(Supershingles {
                min_shared: self.min_shared,
                limits: self.limits,
            })
        });
        let bits = self.sketch.charikar_bits as u32;
        let rule = match self.strategy {
            Strategy::Uniform => {
                let filter = self.filter.clone().unwrap_or_else(|| {
                    Arc::new(CharikarFilter {
                        min_agreement: threshold,
                        or_min_shared: self.accept_shared,
                    })
                });
                Rule::new(candidates, filter)
            }
            Strategy::Henzinger {
                same_site,
                cross_site,
            } => {
                if self.filter.is_some() {
                    return Err(Error::Config(
                        "a custom stage-two filter cannot be combined with the henzinger \
                         strategy; build a Rule with a filter per class instead"
                            .into(),
                    ));
                }
                let (ds, dc) = Strategy::henzinger_defaults(threshold, bits);
                let (s, c) = (same_site.unwrap_or(ds), cross_site.unwrap_or(dc));
                check_range("same_site_threshold", s as u64, 0, bits as u64)?;
                check_range("cross_site_threshold", c as u64, 0, bits as u64)?;
                Rule::henzinger(candidates, s, c, self.accept_shared)
            }
        };
        Ok(rule.with_high_recall(self.high_recall))
    }

    /// Validates the settings and builds the pipeline.
    pub fn build(&self) -> Result<Pipeline> {
        self.sketch.validate()?;
        let b = self.sketch.charikar_bits as u64;
        check_range(
            "min_shared",
            self.min_shared as u64,
            1,
            self.sketch.supershingles as u64,
        )?;
        let threshold = self
            .charikar_threshold
            .unwrap_or(((372 * b + 192) / 384) as u32);
        check_range("charikar_threshold", threshold as u64, 0, b)?;
        if let Some(h) = self.high_recall {
            check_range("high_recall", h as u64, threshold as u64, b)?;
        }
        if let Some(a) = self.accept_shared {
            check_range(
                "accept_shared",
                a as u64,
                self.min_shared as u64 + 1,
                self.sketch.supershingles as u64,
            )?;
        }
        check_range(
            "max_bucket",
            self.limits.max_bucket as u64,
            2,
            u32::MAX as u64,
        )?;
        check_range("window", self.limits.window as u64, 0, 1 << 20)?;
        check_range(
            "max_document_bytes",
            self.max_document_bytes as u64,
            1,
            4 << 30,
        )?;
        check_range("chunk_records", self.chunk_records as u64, 1, 1_000_000)?;
        let pool = match self.threads {
            Some(n) => {
                check_range("threads", n as u64, 1, 1024)?;
                Some(Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        .map_err(|e| Error::Config(e.to_string()))?,
                ))
            }
            None => None,
        };
        let rule = match &self.rule {
            Some(r) => r.clone(),
            None => self.default_rule(threshold)?,
        };
        Ok(Pipeline {
            sketcher: Sketcher::new(self.sketch.clone())?,
            rule,
            site_mode: self.site_mode,
            threshold,
            min_shared: self.min_shared,
            accept_shared: self.accept_shared,
            cluster_mode: self.cluster_mode,
            keep: self.keep,
            limits: self.limits,
            max_document_bytes: self.max_document_bytes,
            chunk_records: self.chunk_records,
            pool,
            progress: self.progress.clone(),
            boilerplate: None,
        })
    }
}

/// Settings of [`Preset::Recall`], tuned on the development set of judged web-page
/// pairs (see the README's accuracy report).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RecallSettings {
    /// Terms per shingle.
    pub shingle_size: usize,
    /// Min-hash values.
    pub minhashes: usize,
    /// Supershingles.
    pub supershingles: usize,
    /// Charikar bits (the projection is over shingles).
    pub charikar_bits: usize,
    /// Stage one: candidates share at least this many supershingles.
    pub min_shared: usize,
    /// Stage two: Charikar agreement, inclusive.
    pub charikar_threshold: u32,
    /// Stage two: or at least this many shared supershingles.
    pub accept_shared: usize,
}

/// The values of [`Preset::Recall`].
pub const RECALL: RecallSettings = RecallSettings {
    shingle_size: 3,
    minhashes: 168,
    supershingles: 84,
    charikar_bits: 1024,
    min_shared: 35,
    charikar_threshold: 815,
    accept_shared: 51,
};

/// A configured two-stage near-duplicate filter. Build one with [`Pipeline::builder`].
///
/// # Examples
///
/// ```
/// use neardup::{Document, Pipeline};
/// let base = "the quick brown fox jumps over the lazy dog while the cat sleeps on the mat \
///             and the bird sings in the tree near the river bank every single morning";
/// let docs = vec![
///     Document::text("a", base),
///     Document::text("b", format!("{base} today")),
///     Document::text("c", "an entirely different text about sketching documents at scale"),
/// ];
/// let dedup = Pipeline::builder().build()?.run(docs)?;
/// assert_eq!(dedup.kept.len(), 2); // "b" is a near-duplicate of "a"
/// # Ok::<(), neardup::Error>(())
/// ```
#[derive(Clone)]
pub struct Pipeline {
    sketcher: Sketcher,
    rule: Rule,
    site_mode: SiteMode,
    threshold: u32,
    min_shared: usize,
    accept_shared: Option<usize>,
    cluster_mode: ClusterMode,
    keep: Keep,
    limits: BucketLimits,
    max_document_bytes: usize,
    chunk_records: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    progress: Option<ProgressFn>,
    boilerplate: Option<Arc<Boilerplate>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("sketch", self.sketcher.config())
            .field("candidates", &self.rule.candidates().name())
            .field("rule", &self.rule.name())
            .finish_non_exhaustive()
    }
}

/// What the pipeline keeps of a record after sketching it.
struct Meta {
    id: String,
    priority: Option<f64>,
    rejected: Option<String>,
    /// Index into the run's site names.
    site: Option<u32>,
}

/// One record after the parallel stage: its metadata, site name, sketch (unless
/// rejected), body bytes and boilerplate removed.
type Sketched = (Meta, Option<String>, Option<Sketch>, u64, usize);

impl Pipeline {
    /// A builder with the paper defaults.
    pub fn builder() -> PipelineBuilder {
        PipelineBuilder::default()
    }

    /// The sketcher (settings, tokenizer).
    pub fn sketcher(&self) -> &Sketcher {
        &self.sketcher
    }

    /// The stage-two threshold in effect (agreeing Charikar bits, inclusive).
    pub fn charikar_threshold(&self) -> u32 {
        self.threshold
    }

    /// The stage-one setting `r` (agreeing supershingles, inclusive) of the default
    /// candidate generator.
    pub fn min_shared(&self) -> usize {
        self.min_shared
    }

    /// Stage two's "or at least this many shared supershingles" setting, if on.
    pub fn accept_shared(&self) -> Option<usize> {
        self.accept_shared
    }

    /// The high-recall threshold, if on.
    pub fn high_recall_threshold(&self) -> Option<u32> {
        self.rule.high_recall()
    }

    /// The site of `doc` under this pipeline's site mode (see [`site_of`]).
    pub fn site_of(&self, doc: &Document) -> Option<String> {
        site_of(doc, self.site_mode)
    }

    /// The class of the pair `(a, b)` by their sites (see [`PairClass`]).
    pub fn pair_class(&self, a: &Document, b: &Document) -> PairClass {
        match (self.site_of(a), self.site_of(b)) {
            (Some(x), Some(y)) if x == y => PairClass::SameSite,
            (Some(_), Some(_)) => PairClass::CrossSite,
            _ => PairClass::Unknown,
        }
    }

    /// The verdict this pipeline applies to every pair (see [`Rule`]).
    pub fn rule(&self) -> &Rule {
        &self.rule
    }

    /// A short description of stage one and stage two.
    pub fn describe(&self) -> (String, String) {
        (self.rule.candidates().name(), self.rule.name())
    }

    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Maps `records` through `f` on the pool and hands the results to `consume` in
    /// input order, without a barrier between batches: records go out in jobs of up to
    /// 64, at most [`PipelineBuilder::chunk_records`] records are in flight (taken but
    /// not yet consumed), and a worker takes the next job as soon as it is done with
    /// one. Each job borrows a [`Scratch`] from a shared stack. A panic in `f` is
    /// re-raised here.
    fn ordered_map<T, R, I, F, C>(&self, mut records: I, f: F, mut consume: C)
    where
        T: Send,
        R: Send,
        I: Iterator<Item = T>,
        F: Fn(&mut Scratch, T) -> R + Sync,
        C: FnMut(Vec<R>),
    {
        let job_len = (self.chunk_records / 8).clamp(1, 64);
        let jobs = Jobs {
            len: job_len,
            max: self.chunk_records.div_ceil(job_len),
            f: &f,
            scratches: std::sync::Mutex::new(Vec::new()),
        };
        match &self.pool {
            Some(p) => p.in_place_scope_fifo(|s| jobs.drive(s, &mut records, &mut consume)),
            None => rayon::in_place_scope_fifo(|s| jobs.drive(s, &mut records, &mut consume)),
        }
    }

    /// The first pass of boilerplate removal (see [`crate::sketch::boilerplate`]): counts, per
    /// site, the pages each shingle is on, over the same records (and with the same
    /// `parse`) the run will see. Records that fail to parse, are too large or have no
    /// site are skipped here (the run accounts for them).
    pub fn learn_boilerplate<T, I, F>(
        &self,
        records: I,
        parse: F,
        config: BoilerplateConfig,
    ) -> Result<Boilerplate>
    where
        T: Send,
        I: IntoIterator<Item = T>,
        F: Fn(T) -> std::result::Result<Document, Rejection> + Sync + Send,
    {
        let mut counter = BoilerplateCounter::new(config)?;
        let max = self.max_document_bytes;
        self.ordered_map(
            records.into_iter(),
            |scratch, rec| {
                let doc = parse(rec).ok().filter(|d| d.body.len() <= max)?;
                let site = site_of(&doc, self.site_mode)?;
                let sh = self.sketcher.distinct_shingles(&doc, scratch);
                (!sh.is_empty()).then_some((site, sh))
            },
            |pages| {
                for (site, sh) in pages.iter().flatten() {
                    counter.observe_distinct(site, sh);
                }
            },
        );
        Ok(counter.finish())
    }

    /// This pipeline with boilerplate removal: every page of a site listed in
    /// `boilerplate` is sketched without its boilerplate terms.
    pub fn with_boilerplate(&self, boilerplate: Arc<Boilerplate>) -> Pipeline {
        Pipeline {
            boilerplate: Some(boilerplate),
            ..self.clone()
        }
    }

    /// Runs the pipeline over documents.
    pub fn run<I>(&self, docs: I) -> Result<Dedup>
    where
        I: IntoIterator<Item = Document>,
    {
        self.run_records(docs.into_iter().map(Ok))
    }

    /// Runs the pipeline over records, some of which may already be rejected by the
    /// reader; rejected records keep their position and are accounted for.
    pub fn run_records<I>(&self, records: I) -> Result<Dedup>
    where
        I: IntoIterator<Item = std::result::Result<Document, Rejection>>,
    {
        self.run_with(records, |r| r)
    }

    /// Runs the pipeline over items of any type that `parse` turns into documents (or
    /// rejections) inside the parallel sketching stage, so that parsing (e.g. JSON) is
    /// spread over the threads too.
    pub fn run_with<T, I, F>(&self, records: I, parse: F) -> Result<Dedup>
    where
        T: Send,
        I: IntoIterator<Item = T>,
        F: Fn(T) -> std::result::Result<Document, Rejection> + Sync + Send,
    {
        self.run_inner(None, records, parse)
    }

    /// Incremental dedup: runs over new records against the saved sketches of an
    /// earlier snapshot (see [`crate::persist::sketches`]). Old records are references only: they
    /// are never dropped and get no fate; a new record that is an exact or near
    /// duplicate of an old one is dropped with the old record named as its
    /// representative (the first old record of its cluster). The result's ordinals
    /// `0..previous.len()` are the old records, then the new ones; `fates`, `kept` and
    /// the counts cover the new records only (see [`Dedup::previous`]).
    pub fn run_against<T, I, F>(
        &self,
        previous: &SavedSketches,
        records: I,
        parse: F,
    ) -> Result<Dedup>
    where
        T: Send,
        I: IntoIterator<Item = T>,
        F: Fn(T) -> std::result::Result<Document, Rejection> + Sync + Send,
    {
        if previous.config.fingerprint() != self.sketcher.config().fingerprint() {
            return Err(Error::Incompatible(format!(
                "saved sketches were made with {}, this run uses {}",
                serde_json::to_string(&previous.config).unwrap_or_default(),
                serde_json::to_string(self.sketcher.config()).unwrap_or_default()
            )));
        }
        self.run_inner(Some(previous), records, parse)
    }

    fn run_inner<T, I, F>(
        &self,
        previous: Option<&SavedSketches>,
        records: I,
        parse: F,
    ) -> Result<Dedup>
    where
        T: Send,
        I: IntoIterator<Item = T>,
        F: Fn(T) -> std::result::Result<Document, Rejection> + Sync + Send,
    {
        let start = Instant::now();
        let cfg = self.sketcher.config();
        let (mut sketches, mut meta, old) = match previous {
            Some(p) => (
                p.sketches.clone(),
                p.ids
                    .iter()
                    .map(|id| Meta {
                        id: id.clone(),
                        priority: None,
                        rejected: None,
                        site: None,
                    })
                    .collect::<Vec<_>>(),
                p.len(),
            ),
            None => (Sketches::new(cfg), Vec::new(), 0),
        };
        let mut bytes = 0u64;
        let (mut stripped_pages, mut stripped_terms) = (0u64, 0u64);
        let mut site_names: Vec<String> = Vec::new();
        let mut site_index: ahash::AHashMap<String, u32> = ahash::AHashMap::new();
        let empty = Sketch {
            supershingles: vec![0; cfg.supershingles],
            charikar: vec![0; cfg.charikar_bits / 64],
            simhash: 0,
            exact: 0,
            terms: 0,
            pugh: Vec::new(),
        };
        let max = self.max_document_bytes;
        self.ordered_map(
            records.into_iter(),
            |scratch, rec| -> Sketched {
                match parse(rec) {
                    Err(r) => (
                        Meta {
                            id: r.id.unwrap_or_default(),
                            priority: None,
                            rejected: Some(r.reason),
                            site: None,
                        },
                        None,
                        None,
                        0,
                        0,
                    ),
                    Ok(doc) if doc.body.len() > max => (
                        Meta {
                            id: doc.id.clone(),
                            priority: None,
                            site: None,
                            rejected: Some(format!(
                                "document too large: {} bytes > {max}",
                                doc.body.len()
                            )),
                        },
                        None,
                        None,
                        0,
                        0,
                    ),
                    Ok(doc) => {
                        let site = site_of(&doc, self.site_mode);
                        let bp = self
                            .boilerplate
                            .as_deref()
                            .zip(site.as_deref())
                            .and_then(|(b, s)| b.for_site(s));
                        let (s, removed) = self.sketcher.sketch_without(&doc, scratch, bp);
                        let rejected =
                            (s.terms == 0).then(|| "empty document: no terms".to_string());
                        let len = doc.body.len() as u64;
                        (
                            Meta {
                                id: doc.id,
                                priority: doc.priority,
                                rejected,
                                site: None,
                            },
                            site,
                            Some(s),
                            len,
                            removed,
                        )
                    }
                }
            },
            |done| {
                for (mut m, site, s, b, removed) in done {
                    bytes += b;
                    // Sites are interned as they arrive: one string per site, not per page.
                    m.site = site.map(|name| match site_index.get(&name) {
                        Some(&i) => i,
                        None => {
                            site_names.push(name.clone());
                            site_index.insert(name, (site_names.len() - 1) as u32);
                            (site_names.len() - 1) as u32
                        }
                    });
                    if removed > 0 {
                        stripped_pages += 1;
                        stripped_terms += removed as u64;
                    }
                    sketches.push(
                        s.as_ref()
                            .filter(|_| m.rejected.is_none())
                            .unwrap_or(&empty),
                    );
                    meta.push(m);
                }
                if let Some(p) = &self.progress {
                    p(Progress {
                        records: meta.len() as u64,
                        bytes,
                    });
                }
            },
        );
        let sketch_time = start.elapsed();
        let mut d = self.install(|| self.dedup_sketched(meta, site_names, sketches, old))?;
        d.stats.bytes = bytes;
        d.stats.boilerplate_pages = stripped_pages;
        d.stats.boilerplate_terms = stripped_terms;
        d.stats.seconds.sketch = sketch_time.as_secs_f64();
        d.stats.seconds.total = start.elapsed().as_secs_f64();
        Ok(d)
    }

    /// Ordinals below `old` are references from saved sketches.
    fn dedup_sketched(
        &self,
        meta: Vec<Meta>,
        site_names: Vec<String>,
        sketches: Sketches,
        old: usize,
    ) -> Result<Dedup> {
        let n = meta.len();
        if n > u32::MAX as usize {
            return Err(Error::Config(format!(
                "{n} records exceed the limit of {} per run",
                u32::MAX
            )));
        }
        let mut stats = Stats {
            read: n as u64,
            ..Stats::default()
        };
        let mut fates: Vec<Fate> = Vec::with_capacity(n);
        let mut ids = Vec::with_capacity(n);
        let mut priority = Vec::with_capacity(n);
        let mut site_ids: Vec<Option<u32>> = Vec::with_capacity(n);
        for m in meta {
            site_ids.push(m.site);
            fates.push(match m.rejected {
                Some(reason) => Fate::Rejected { reason },
                None => Fate::Kept,
            });
            ids.push(m.id);
            priority.push(m.priority);
        }
        // Ids name records in every output, so a repeated id is rejected.
        let mut first_with_id: ahash::AHashMap<&str, u32> = ahash::AHashMap::with_capacity(n);
        for (i, id) in ids.iter().enumerate() {
            if i < old || id.is_empty() || !matches!(fates[i], Fate::Kept) {
                continue;
            }
            if let Some(&first) = first_with_id.get(id.as_str()) {
                fates[i] = Fate::Rejected {
                    reason: format!("duplicate id (first used by record {first})"),
                };
            } else {
                first_with_id.insert(id, i as u32);
            }
        }
        drop(first_with_id);
        let terms: Vec<u32> = (0..n).map(|i| sketches.get(i).terms).collect();
        // The representative: an old record when there is one (old records are never
        // dropped), else by the keep policy.
        let pick = |members: &[u32]| -> u32 {
            match members.first() {
                Some(&m) if (m as usize) < old => m,
                _ => representative(members, self.keep, &terms, &priority),
            }
        };

        // Exact-duplicate pre-pass.
        let t = Instant::now();
        let mut by_exact: Vec<(u128, u32)> = (0..n as u32)
            .filter(|&i| matches!(fates[i as usize], Fate::Kept))
            .map(|i| (sketches.get(i as usize).exact, i))
            .collect();
        crate::candidates::sort_hashed(&mut by_exact, |x| (x.0 >> 64) as u64);
        let mut pairs: Vec<Pair> = Vec::new();
        let mut active: Vec<u32> = Vec::new();
        // Exact group of each active representative: (rep, members) for groups ≥ 2.
        let mut exact_group: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut i = 0;
        while i < by_exact.len() {
            let mut j = i + 1;
            while j < by_exact.len() && by_exact[j].0 == by_exact[i].0 {
                j += 1;
            }
            if j == i + 1 {
                // No exact duplicate: its own representative.
                active.push(by_exact[i].1);
                i = j;
                continue;
            }
            let members: Vec<u32> = by_exact[i..j].iter().map(|p| p.1).collect();
            let rep = pick(&members);
            active.push(rep);
            if members.len() > 1 {
                stats.exact_groups += 1;
                for &m in &members {
                    if m != rep {
                        fates[m as usize] = Fate::ExactDuplicate { of: rep };
                        pairs.push(self.pair(&sketches, &site_ids, rep, m, PairKind::Exact));
                    }
                }
                exact_group.push((rep, members));
            }
            i = j;
        }
        active.sort_unstable();
        let t_exact = t.elapsed();

        // Stage one.
        let t = Instant::now();
        let candidates =
            self.rule
                .candidates()
                .candidates(&sketches, &active, &mut stats.candidates)?;
        let t_cand = t.elapsed();

        // Stage two (by class of pair when a site strategy is set).
        let t = Instant::now();
        let class = |a: u32, b: u32| PairClass::of(site_ids[a as usize], site_ids[b as usize]);
        let stage_two = |a: u32, b: u32| {
            let (x, y) = (sketches.get(a as usize), sketches.get(b as usize));
            self.rule.accepts(class(a, b), x, y)
        };
        let near: Vec<(u32, u32)> = candidates
            .par_iter()
            .copied()
            .filter(|&(a, b)| stage_two(a, b))
            .collect();
        stats.verified = near.len() as u64;
        let t_filter = t.elapsed();

        // High-recall union.
        let t = Instant::now();
        let mut extra: Vec<(u32, u32)> = Vec::new();
        if let Some(h) = self.rule.high_recall() {
            let bits = self.sketcher.config().charikar_bits as u32;
            let gen = CharikarBlocks {
                max_distance: bits - h,
                limits: self.limits,
            };
            let found = gen.candidates(&sketches, &active, &mut CandidateStats::default())?;
            extra = found
                .into_iter()
                .filter(|p| near.binary_search(p).is_err())
                .collect();
            stats.high_recall_added = extra.len() as u64;
        }
        let t_hr = t.elapsed();

        // Clusters.
        let t = Instant::now();
        let mut uf = UnionFind::new(n);
        for &(a, b) in near.iter().chain(&extra) {
            uf.union(a, b);
        }
        let mut groups = uf.groups();
        // Near pairs that the filter accepts, for verified mode.
        let accepts = |a: u32, b: u32| {
            let (x, y) = (sketches.get(a as usize), sketches.get(b as usize));
            stage_two(a, b)
                || self
                    .rule
                    .high_recall()
                    .is_some_and(|h| agreement(x.charikar, y.charikar) >= h)
        };
        if self.cluster_mode == ClusterMode::Verified {
            for g in &mut groups {
                let rep = pick(g);
                let before = g.len();
                g.retain(|&m| m == rep || accepts(rep, m));
                stats.unchained += (before - g.len()) as u64;
            }
            groups.retain(|g| g.len() > 1);
        }
        let exact_of: std::collections::HashMap<u32, &Vec<u32>> =
            exact_group.iter().map(|(r, m)| (*r, m)).collect();
        let mut clusters: Vec<Cluster> = Vec::with_capacity(groups.len() + exact_group.len());
        let mut in_near_cluster = vec![false; n];
        for g in &groups {
            let rep = pick(g);
            let mut members = Vec::new();
            for &m in g {
                in_near_cluster[m as usize] = true;
                if m != rep {
                    fates[m as usize] = Fate::NearDuplicate { of: rep };
                }
                match exact_of.get(&m) {
                    Some(ms) => members.extend_from_slice(ms),
                    None => members.push(m),
                }
            }
            members.sort_unstable();
            clusters.push(Cluster {
                representative: rep,
                members,
            });
        }
        for (rep, members) in &exact_group {
            if !in_near_cluster[*rep as usize] {
                clusters.push(Cluster {
                    representative: *rep,
                    members: members.clone(),
                });
            }
        }
        clusters.sort_unstable_by_key(|c| c.members[0]);
        for &(a, b) in &near {
            pairs.push(self.pair(&sketches, &site_ids, a, b, PairKind::Near));
        }
        for &(a, b) in &extra {
            pairs.push(self.pair(&sketches, &site_ids, a, b, PairKind::HighRecall));
        }
        // Old records are references: they keep no fate, and pairs among them are old news.
        pairs.retain(|p| p.b as usize >= old);
        clusters.retain(|c| c.members.last().is_some_and(|&m| m as usize >= old));
        for f in &mut fates[..old] {
            *f = Fate::Kept;
        }
        pairs.sort_unstable_by_key(|p| (p.a, p.b));
        let mut kept = RoaringBitmap::new();
        for (i, f) in fates.iter().enumerate().skip(old) {
            match f {
                Fate::Kept => {
                    kept.insert(i as u32);
                    stats.kept += 1;
                }
                Fate::ExactDuplicate { .. } => stats.exact_duplicates += 1,
                Fate::NearDuplicate { .. } => stats.near_duplicates += 1,
                Fate::Rejected { .. } => stats.rejected += 1,
            }
        }
        stats.clusters = ClusterStats::of(&clusters);
        let t_cluster = t.elapsed();
        stats.seconds = Timings {
            exact: t_exact.as_secs_f64(),
            candidates: t_cand.as_secs_f64(),
            filter: t_filter.as_secs_f64(),
            high_recall: t_hr.as_secs_f64(),
            cluster: t_cluster.as_secs_f64(),
            ..Timings::default()
        };
        for p in &pairs {
            match p.class {
                PairClass::SameSite => stats.same_site_pairs += 1,
                PairClass::CrossSite => stats.cross_site_pairs += 1,
                PairClass::Unknown => stats.unknown_site_pairs += 1,
            }
        }
        stats.read -= old as u64;
        stats.previous = old as u64;
        let d = Dedup {
            ids,
            fates,
            pairs,
            clusters,
            kept,
            sketches,
            stats,
            previous: old,
            sites: site_names,
            site_of: site_ids,
        };
        d.check_accounting()?;
        Ok(d)
    }

    fn pair(&self, sk: &Sketches, sites: &[Option<u32>], a: u32, b: u32, kind: PairKind) -> Pair {
        let (a, b) = (a.min(b), a.max(b));
        let (x, y) = (sk.get(a as usize), sk.get(b as usize));
        Pair {
            a,
            b,
            kind,
            class: PairClass::of(sites[a as usize], sites[b as usize]),
            shared_supershingles: crate::sketch::broder::shared_supershingles(
                x.supershingles,
                y.supershingles,
            ) as u32,
            agreement: agreement(x.charikar, y.charikar),
        }
    }
}

/// The shape of [`Pipeline::ordered_map`]'s jobs, and what they share.
struct Jobs<'f, F> {
    /// Records per job.
    len: usize,
    /// Jobs taken but not yet consumed.
    max: usize,
    f: &'f F,
    scratches: std::sync::Mutex<Vec<Scratch>>,
}

impl<'f, F> Jobs<'f, F> {
    fn drive<'s, T, R, I, C>(&'s self, s: &rayon::ScopeFifo<'s>, records: &mut I, consume: &mut C)
    where
        'f: 's,
        T: Send + 's,
        R: Send + 's,
        I: Iterator<Item = T>,
        F: Fn(&mut Scratch, T) -> R + Sync,
        C: FnMut(Vec<R>),
    {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, std::thread::Result<Vec<R>>)>();
        let (mut submitted, mut consumed) = (0usize, 0usize);
        // Results of jobs `consumed..submitted`, in order; `None` until done.
        let mut pending: std::collections::VecDeque<Option<Vec<R>>> =
            std::collections::VecDeque::new();
        let mut exhausted = false;
        loop {
            while !exhausted && submitted - consumed < self.max {
                let job: Vec<T> = records.by_ref().take(self.len).collect();
                if job.is_empty() {
                    exhausted = true;
                    break;
                }
                let tx = tx.clone();
                let index = submitted;
                s.spawn_fifo(move |_| {
                    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let mut scratch = self
                            .scratches
                            .lock()
                            .map(|mut v| v.pop().unwrap_or_default())
                            .unwrap_or_default();
                        let out: Vec<R> =
                            job.into_iter().map(|t| (self.f)(&mut scratch, t)).collect();
                        if let Ok(mut v) = self.scratches.lock() {
                            v.push(scratch);
                        }
                        out
                    }));
                    // The receiver lives until every job has reported.
                    let _ = tx.send((index, out));
                });
                submitted += 1;
                pending.push_back(None);
            }
            if consumed == submitted {
                return;
            }
            let (index, out) = receive(&rx);
            match out {
                Ok(out) => pending[index - consumed] = Some(out),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            while let Some(Some(_)) = pending.front() {
                if let Some(Some(out)) = pending.pop_front() {
                    consume(out);
                    consumed += 1;
                }
            }
        }
    }
}

/// The next message; on a thread of a rayon pool (a caller inside `par_iter`, say) it
/// keeps running the pool's other work while it waits instead of blocking a worker.
fn receive<M>(rx: &std::sync::mpsc::Receiver<M>) -> M {
    use std::sync::mpsc::TryRecvError;
    if rayon::current_thread_index().is_none() {
        if let Ok(m) = rx.recv() {
            return m;
        }
    }
    loop {
        match rx.try_recv() {
            Ok(m) => return m,
            Err(TryRecvError::Empty) => {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
            // Not reached: the caller holds a sender for as long as it receives.
            Err(TryRecvError::Disconnected) => std::thread::yield_now(),
        }
    }
}

/// Peak resident memory of this process (Linux `VmHWM`), if the system reports it.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb * 1024)
}
