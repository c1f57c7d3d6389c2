//! The [`PipelineBuilder`]: every setting with its documented default, the presets,
//! validation, and the [`Rule`] built from the settings.

use super::Pipeline;
use crate::candidates::{BucketLimits, CandidateGenerator, Supershingles};
use crate::cluster::{ClusterMode, Keep};
use crate::error::{check_range, Error, Result};
use crate::sketch::{Features, SketchConfig, Sketcher};
use crate::verify::filter::{CharikarFilter, PairFilter};
use crate::verify::{Rule, SiteMode, Strategy};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// Tuned for looser near-duplicates on the development set (see the guide's
    /// accuracy report): 3-term shingles, 168 min-values in 84 supershingles of 2,
    /// 1024 Charikar bits over shingles; stage one buckets the supershingles in 42 LSH
    /// bands of 2 (4 min-values each), and a candidate agrees on a whole band and
    /// shares ≥ 35 supershingles; it is kept if ≥ 815 Charikar bits agree or ≥ 51
    /// supershingles agree (the values of [`RECALL`]). Clusters are
    /// [`ClusterMode::Verified`]: every member is a verified near-duplicate of the
    /// member kept, so template siblings do not chain. No high-recall union. Sketches
    /// are larger (about 1.8 KB).
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

pub(super) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Builder of a [`Pipeline`]. Every setter documents its default; [`build`](Self::build)
/// validates.
#[derive(Clone)]
pub struct PipelineBuilder {
    sketch: SketchConfig,
    min_shared: usize,
    band: Option<usize>,
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
            band: None,
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
                self.band = None;
                self.charikar_threshold = None;
                self.accept_shared = None;
                self.high_recall = None;
                self.cluster_mode = ClusterMode::Transitive;
            }
            Preset::Recall => {
                self.sketch.shingle_size = RECALL.shingle_size;
                self.sketch.minhashes = RECALL.minhashes;
                self.sketch.supershingles = RECALL.supershingles;
                self.sketch.charikar_bits = RECALL.charikar_bits;
                self.sketch.charikar_features = Features::Shingles;
                self.min_shared = RECALL.min_shared;
                self.band = Some(RECALL.band);
                self.charikar_threshold = Some(RECALL.charikar_threshold);
                self.accept_shared = Some(RECALL.accept_shared);
                self.high_recall = None;
                self.cluster_mode = ClusterMode::Verified;
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

    /// Stage one by LSH bands of `w` consecutive supershingles (one bucket key per band;
    /// a candidate must agree on a whole band as well as share `min_shared`
    /// supershingles), or `None` for the m-of-n search of seed 003. `w` must divide the
    /// supershingles. By default `None`; [`Preset::Recall`] sets 2.
    pub fn band(&mut self, w: Option<usize>) -> &mut Self {
        self.band = w;
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

    /// Records in flight: taken from the input and not yet sketched; bounds the text
    /// held in memory. They go to the threads in jobs of `clamp(n / 8, 1, 64)` records.
    /// Output does not depend on it. By default 512; 1..=1000000.
    ///
    /// Results are collected in input order, and a slow record (a big document) holds
    /// back the collection of those after it, not the work on them: up to 16 times as
    /// many records' results (a sketch each, no text) wait for it. So the threads do
    /// not run out of work behind a big document: on the Rust documentation corpus
    /// (pages up to 1.7 MB, a quarter of the text in the 100 biggest), two threads were
    /// idle a fifth of the time when the in-flight records counted until collected.
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
                band: self.band,
                ..Supershingles::new(self.min_shared, self.limits)
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
        if let Some(w) = self.band {
            let slots = self.sketch.supershingles;
            check_range("band", w as u64, 1, slots as u64)?;
            if !slots.is_multiple_of(w) {
                return Err(Error::Config(format!(
                    "band = {w} must divide the {slots} supershingles"
                )));
            }
        }
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
        super::sketches_what_the_rule_reads(&self.sketch, &rule)?;
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
/// pairs (see the guide's accuracy page, docs/accuracy.md).
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
    /// Stage one: LSH bands of this many consecutive supershingles (4 min-values), one
    /// bucket key each; a candidate agrees on a whole band.
    pub band: usize,
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
    band: 2,
    charikar_threshold: 815,
    accept_shared: 51,
};
