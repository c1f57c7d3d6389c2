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
//! bytes per record: 4 GB for 10 million records (measured: the scale run of
//! `docs/performance.md`). The 64 MB hold the records in flight: [`PipelineBuilder::chunk_records`] (512
//! by default, and the sketches of up to 16 times as many waiting to be collected in
//! order) and, in the command-line tool, what is read ahead of inputs other than
//! uncompressed JSONL files: at most 10 chunks of 128 records or 1 MiB plus one record
//! ([`crate::io::ReadAhead::bounded`]); documents of a few KB each fit. Big buckets never add
//! quadratic memory (see [`crate::candidates`]).

use crate::candidates::{BucketLimits, CandidateGenerator, CandidateStats, CharikarBlocks};
use crate::cluster::{
    centre_clusters, preference, Cluster, ClusterMode, ClusterStats, Keep, UnionFind,
};
use crate::document::RejectReason;
pub use crate::document::Rejection;
use crate::document::{Document, RecordBytes};
use crate::error::{Error, Result};
use crate::persist::sketches::SavedSketches;
use crate::sketch::boilerplate::{Boilerplate, BoilerplateConfig, BoilerplateCounter};
use crate::sketch::broder::shared_supershingles;
use crate::sketch::charikar::agreement;
use crate::sketch::hash::id_hash;
use crate::sketch::{How, Scratch, Sketch, SketchHook, Sketched, Sketcher, Sketches};

mod builder;
mod decisions;
mod executor;
mod memory;
mod mirrors;
mod result;

use crate::verify::{site_of, PairClass, Rule, SiteMode};
use builder::ProgressFn;
pub use builder::{PipelineBuilder, Preset, Progress, RecallSettings, RECALL};
use executor::Jobs;

/// A job of the sketching stage ends once its records hold this many bytes
/// ([`RecordBytes`]), even short of 64 records: a worker holds less than this plus one
/// record of text at a time.
const JOB_BYTES: usize = 4 << 20;
pub use decisions::{ClassDecisions, Decisions};
pub use memory::peak_memory_bytes;
pub use mirrors::MirrorPair;
use rayon::prelude::*;
pub use result::{Dedup, Fate, FateCounts, Pair, PairKind, Stats, Timings};
use roaring::RoaringBitmap;
use std::sync::Arc;
use std::time::Instant;

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
    /// [`id_hash`] of `id`, taken on the worker that read it.
    id_hash: u64,
    priority: Option<f64>,
    rejected: Option<RejectReason>,
    /// Index into the run's site names.
    site: Option<u32>,
}

/// The records' metadata by ordinal, filled in input order as the results are collected
/// (so the sequential end of a run does not have to take the [`Meta`]s apart).
#[derive(Default)]
struct Columns {
    ids: Vec<String>,
    id_hashes: Vec<u64>,
    fates: Vec<Fate>,
    priority: Vec<Option<f64>>,
    site_ids: Vec<Option<u32>>,
}

impl Columns {
    fn push(&mut self, m: Meta) {
        self.ids.push(m.id);
        self.id_hashes.push(m.id_hash);
        self.fates.push(match m.rejected {
            Some(reason) => Fate::Rejected { reason },
            None => Fate::Kept,
        });
        self.priority.push(m.priority);
        self.site_ids.push(m.site);
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// One record after the parallel stage: its metadata, site name, sketch (unless
/// rejected), body bytes and boilerplate removed.
/// One record as a worker leaves it: its metadata, its site's name, its sketch (none
/// when rejected before sketching), its body's bytes and the boilerplate terms and
/// shingles removed from it.
struct SketchedRecord {
    meta: Meta,
    site: Option<String>,
    sketch: Option<Sketch>,
    bytes: u64,
    removed: usize,
}

impl SketchedRecord {
    /// A record rejected before sketching (`hash`: its id's [`id_hash`], 0 when it
    /// has none).
    fn rejected(id: String, hash: u64, reason: RejectReason) -> Self {
        SketchedRecord {
            meta: Meta {
                id_hash: hash,
                id,
                priority: None,
                rejected: Some(reason),
                site: None,
            },
            site: None,
            sketch: None,
            bytes: 0,
            removed: 0,
        }
    }
}

/// `f`'s result and the seconds it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}

/// A run holds at most `u32::MAX` records (ordinals are 32-bit).
fn check_run_size(n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::Config(format!(
            "{n} records exceed the limit of {} per run",
            u32::MAX
        )));
    }
    Ok(())
}

/// Ordinals below `old` are references from saved sketches: they keep no fate (they
/// count as kept), and pairs and clusters among them alone are old news. The pairs are
/// left sorted.
fn only_new(old: usize, pairs: &mut Vec<Pair>, clusters: &mut Vec<Cluster>, fates: &mut [Fate]) {
    pairs.retain(|p| p.b as usize >= old);
    clusters.retain(|c| c.members.last().is_some_and(|&m| m as usize >= old));
    for f in &mut fates[..old] {
        *f = Fate::Kept;
    }
    pairs.sort_unstable_by_key(|p| (p.a, p.b));
}

/// Rejects the records whose id an earlier record has ([`repeated_ids`]).
fn reject_repeated_ids(ids: &[String], hashes: &[u64], fates: &mut [Fate], old: usize) {
    for (i, first) in repeated_ids(ids, hashes, fates, old) {
        fates[i as usize] = Fate::Rejected {
            reason: RejectReason::DuplicateId { first },
        };
    }
}

/// What the exact pass leaves: the records left for the stages (each its own or its
/// exact group's representative, in ordinal order), the `(representative, member)`
/// pairs of the exact groups, and the groups of two or more `(representative,
/// members)`.
struct ExactPass {
    active: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    groups: ExactGroups,
}

/// Exact groups of two or more records: `(representative, members)`.
type ExactGroups = Vec<(u32, Vec<u32>)>;

/// The exact-duplicate pass: kept records grouped by their 128-bit exact fingerprint;
/// each group keeps the member `pick` chooses, the others become exact duplicates.
fn exact_pass(
    sketches: &Sketches,
    fates: &mut [Fate],
    pick: &impl Fn(&[u32]) -> u32,
    stats: &mut Stats,
) -> ExactPass {
    let n = fates.len();
    let mut is_active = vec![false; n];
    let mut by_exact: Vec<(u128, u32)> = (sketches.exact_fingerprints().iter())
        .zip(fates.iter())
        .enumerate()
        .filter(|(_, (_, f))| matches!(f, Fate::Kept))
        .map(|(i, (&e, _))| (e, i as u32))
        .collect();
    // Records whose fingerprint no other has are their own representatives; only the
    // others are sorted into groups.
    let may_repeat = crate::candidates::repeated_first(&mut by_exact, |x| (x.0 >> 64) as u64);
    for &(_, i) in &by_exact[may_repeat..] {
        is_active[i as usize] = true;
    }
    by_exact.truncate(may_repeat);
    crate::candidates::sort_hashed(&mut by_exact, |x| (x.0 >> 64) as u64);
    let mut out = ExactPass {
        active: Vec::new(),
        pairs: Vec::new(),
        groups: Vec::new(),
    };
    for group in by_exact.chunk_by(|x, y| x.0 == y.0) {
        let members: Vec<u32> = group.iter().map(|p| p.1).collect();
        let rep = if members.len() == 1 {
            members[0]
        } else {
            pick(&members)
        };
        is_active[rep as usize] = true;
        if members.len() > 1 {
            stats.exact_groups += 1;
            for &m in &members {
                if m != rep {
                    fates[m as usize] = Fate::ExactDuplicate { of: rep };
                    out.pairs.push((rep, m));
                }
            }
            out.groups.push((rep, members));
        }
    }
    out.active = (0..n as u32).filter(|&i| is_active[i as usize]).collect();
    out
}

/// The fate tally of this snapshot's records (from `old` on) and the pairs' site
/// classes, into `stats`; the kept records as a bitmap.
fn tally(fates: &[Fate], old: usize, pairs: &[Pair], stats: &mut Stats) -> RoaringBitmap {
    let new = &fates[old.min(fates.len())..];
    let c = FateCounts::of(new);
    stats.kept += c.kept;
    stats.exact_duplicates += c.exact_duplicates;
    stats.near_duplicates += c.near_duplicates;
    stats.rejected += c.rejected;
    let kept = RoaringBitmap::from_sorted_iter(
        (old..fates.len())
            .filter(|&i| matches!(fates[i], Fate::Kept))
            .map(|i| i as u32),
    )
    .expect("ordinals in order");
    for p in pairs {
        match p.class {
            PairClass::SameSite => stats.same_site_pairs += 1,
            PairClass::CrossSite => stats.cross_site_pairs += 1,
            PairClass::Unknown => stats.unknown_site_pairs += 1,
        }
    }
    stats.read -= old as u64;
    stats.previous = old as u64;
    kept
}

/// The columns and sketches of the saved sketches of an earlier snapshot, and their
/// count: old records keep their sites, so that a pair of an old and a new record is
/// judged in the class a batch run would give it.
fn previous_columns(
    p: &SavedSketches,
    site_names: &mut crate::verify::site::SiteNames,
) -> (Columns, Sketches, usize) {
    let mut meta = Columns::default();
    for (i, id) in p.ids.iter().enumerate() {
        meta.push(Meta {
            id: id.clone(),
            id_hash: id_hash(id),
            priority: None,
            rejected: None,
            site: p
                .sites
                .get(i)
                .and_then(|s| s.as_deref())
                .map(|s| site_names.intern(s)),
        });
    }
    (meta, p.sketches.clone(), p.len())
}

/// The records (ordinal `old` on, kept so far, with an id) whose id an earlier such
/// record has, each with the first of those: `(record, first)`, in no particular order.
/// `hashes` are the ids' hashes (taken as the records were read); the records that may
/// repeat a hash are sorted by it with their ordinals (a linear sort:
/// [`crate::candidates::sort_hashed`]), and records of one hash, in input order, are
/// told apart by their ids, so a collision of hashes changes nothing.
fn repeated_ids(ids: &[String], hashes: &[u64], fates: &[Fate], old: usize) -> Vec<(u32, u32)> {
    let mut by_hash: Vec<(u64, u32)> = (ids.iter().zip(hashes).zip(fates))
        .enumerate()
        .skip(old)
        .filter(|(_, ((id, _), f))| !id.is_empty() && matches!(f, Fate::Kept))
        .map(|(i, ((_, &h), _))| (h, i as u32))
        .collect();
    // Only hashes that occur twice or more can be repeated ids.
    let may_repeat = crate::candidates::repeated_first(&mut by_hash, |x| x.0);
    let by_hash = &mut by_hash[..may_repeat];
    crate::candidates::sort_hashed(by_hash, |x| x.0);
    let mut out = Vec::new();
    let mut firsts: Vec<u32> = Vec::new();
    for run in by_hash.chunk_by(|a, b| a.0 == b.0) {
        if run.len() == 1 {
            continue;
        }
        // The distinct ids of this hash so far, by their first record.
        firsts.clear();
        for &(_, i) in run {
            match firsts.iter().find(|&&f| ids[f as usize] == ids[i as usize]) {
                Some(&f) => out.push((i, f)),
                None => firsts.push(i),
            }
        }
    }
    out
}

/// An error when `rule` reads the simhash and `config` leaves it out (a pipeline is
/// made of both only when its sketches hold what its rule reads).
fn sketches_what_the_rule_reads(config: &crate::sketch::SketchConfig, rule: &Rule) -> Result<()> {
    if !config.simhash && rule.reads_simhash() {
        return Err(Error::Config(format!(
            "the rule ({}; {}) reads the simhash, which the sketch settings leave out \
             (simhash off)",
            rule.candidates().name(),
            rule.name()
        )));
    }
    Ok(())
}

/// The reason of a record longer than `max` bytes.
fn too_large(len: usize, max: usize) -> RejectReason {
    RejectReason::TooLarge {
        bytes: len as u64,
        max: max as u64,
    }
}

/// The reason of a record whose sketch has `terms` terms, if it is refused: one without
/// terms is ([`RejectReason::Empty`]).
fn no_terms(terms: u32) -> Option<RejectReason> {
    (terms == 0).then_some(RejectReason::Empty)
}

impl Pipeline {
    /// A builder with the paper defaults.
    pub fn builder() -> PipelineBuilder {
        PipelineBuilder::default()
    }

    /// The sketcher (settings, tokenizer).
    pub fn sketcher(&self) -> &Sketcher {
        &self.sketcher
    }

    /// The longest record a reader of this pipeline's input needs to hold
    /// ([`crate::io::Reader::max_record_bytes`]): twice the longest body
    /// ([`PipelineBuilder::max_document_bytes`](crate::PipelineBuilder::max_document_bytes);
    /// JSON escapes can double a body's size, and the pipeline checks the decoded body)
    /// and 1 MiB for the rest of the record. A reader set to it rejects a longer record
    /// unread ("record too large"), so one record never takes more memory than this.
    pub fn max_record_bytes(&self) -> usize {
        self.max_document_bytes
            .saturating_mul(2)
            .saturating_add(1 << 20)
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

    /// Whether learned boilerplate is attached ([`Pipeline::with_boilerplate`]).
    pub fn boilerplate_learned(&self) -> bool {
        self.boilerplate.is_some()
    }

    /// Stage two's "or at least this many shared supershingles" setting, if on.
    pub fn accept_shared(&self) -> Option<usize> {
        self.accept_shared
    }

    /// How verified pairs become clusters.
    pub fn cluster_mode(&self) -> ClusterMode {
        self.cluster_mode
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
        PairClass::of(self.site_of(a), self.site_of(b))
    }

    /// The verdict this pipeline applies to every pair (see [`Rule`]).
    pub fn rule(&self) -> &Rule {
        &self.rule
    }

    /// A short description of stage one and stage two.
    pub fn describe(&self) -> (String, String) {
        (self.rule.candidates().name(), self.rule.name())
    }

    /// The threads the pipeline works on: those set by
    /// [`PipelineBuilder::threads`](crate::PipelineBuilder::threads), else those of
    /// rayon's global pool (one per core by default). Front ends bound their own
    /// parallel work by it.
    pub fn threads(&self) -> usize {
        match &self.pool {
            Some(p) => p.current_num_threads(),
            None => rayon::current_num_threads(),
        }
    }

    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Maps `records` through `f` on the pool and hands the results to `consume` in
    /// input order, without a barrier between batches: records go out in jobs of up to
    /// 64 (or of [`JOB_BYTES`]), at most [`PipelineBuilder::chunk_records`] records are in flight (taken but
    /// not yet mapped; the results of up to 16 times as many may wait for a slow job
    /// before them). Each of the pool's threads runs a worker that takes its next job
    /// from `records` itself as soon as it is done with one, and hands on the results
    /// its job completes (see [`executor`]): no thread waits for another to hand out
    /// work. A panic in `f` is re-raised here.
    fn ordered_map<T, R, I, F, C>(&self, records: I, f: F, consume: C)
    where
        T: Send + RecordBytes,
        R: Send,
        I: Iterator<Item = T> + Send,
        F: Fn(&mut Scratch, T) -> R + Sync,
        C: FnMut(Vec<R>) + Send,
    {
        let job_len = (self.chunk_records / 8).clamp(1, 64);
        let jobs = Jobs {
            len: job_len,
            bytes: JOB_BYTES,
            max: self.chunk_records.div_ceil(job_len),
            f: &f,
        };
        // A worker on each of the pool's threads.
        let spawn = |worker: &(dyn Fn() + Sync)| {
            self.install(|| {
                rayon::scope(|s| {
                    for _ in 0..rayon::current_num_threads() {
                        s.spawn(|_| worker());
                    }
                })
            })
        };
        jobs.run(spawn, records, consume);
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
        T: Send + RecordBytes,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
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

    /// One record's sketch and site as a batch run computes them (without boilerplate
    /// removal), or the reason the run would reject the record: too large for
    /// `max_document_bytes`, or empty (no terms). The building block of distributed
    /// jobs, which sketch records on their own workers.
    pub fn sketch_record(
        &self,
        doc: &Document,
    ) -> std::result::Result<(Sketch, Option<String>), RejectReason> {
        let s = self.sketch_only(doc)?;
        Ok((s, site_of(doc, self.site_mode)))
    }

    /// [`sketch_record`](Self::sketch_record)'s sketch (or reason) without the site,
    /// which the caller takes from [`site_of`](Self::site_of).
    pub(crate) fn sketch_only(&self, doc: &Document) -> std::result::Result<Sketch, RejectReason> {
        self.sketch_as(doc, How::plain(&mut ()))
            .map(Sketched::whole)
    }

    /// A record sketched as `how` says (see [`Sketcher::sketch_doc`]), or the reason a
    /// run would reject it: a record longer than `max_document_bytes` is not sketched
    /// at all, one without terms is refused once sketched ([`no_terms`]). Unless the
    /// hook stops it, [`sketch_only`](Self::sketch_only)'s sketch.
    pub(crate) fn sketch_as<H: SketchHook>(
        &self,
        doc: &Document,
        how: How<'_, H>,
    ) -> std::result::Result<Sketched, RejectReason> {
        if doc.body.len() > self.max_document_bytes {
            return Err(too_large(doc.body.len(), self.max_document_bytes));
        }
        let s = self.sketcher.sketch_as(doc, how).sketched;
        match no_terms(s.terms()) {
            Some(reason) => Err(reason),
            None => Ok(s),
        }
    }

    /// This pipeline with other sketch settings (what the online deduper sketches with:
    /// the same settings, with or without the simhash).
    pub(crate) fn with_sketch_config(
        &self,
        config: crate::sketch::SketchConfig,
    ) -> Result<Pipeline> {
        sketches_what_the_rule_reads(&config, &self.rule)?;
        Ok(Pipeline {
            sketcher: Sketcher::new(config)?,
            ..self.clone()
        })
    }

    /// Runs the pipeline over documents.
    pub fn run<I>(&self, docs: I) -> Result<Dedup>
    where
        I: IntoIterator<Item = Document>,
        I::IntoIter: Send,
    {
        self.run_records(docs.into_iter().map(Ok))
    }

    /// Runs the pipeline over records, some of which may already be rejected by the
    /// reader; rejected records keep their position and are accounted for.
    pub fn run_records<I>(&self, records: I) -> Result<Dedup>
    where
        I: IntoIterator<Item = std::result::Result<Document, Rejection>>,
        I::IntoIter: Send,
    {
        self.run_with(records, |r| r)
    }

    /// Runs the pipeline over items of any type that `parse` turns into documents (or
    /// rejections) inside the parallel sketching stage, so that parsing (e.g. JSON) is
    /// spread over the threads too. The items say what they hold ([`RecordBytes`]): the
    /// workers take them in jobs of up to 64 items or 4 MiB, so that memory holds a few
    /// MB of text per thread even when each record is large.
    ///
    /// The records are taken from the iterator, and the results collected, by one of
    /// the pool's threads (which sketches too while it waits), so the iterator must be
    /// `Send`; so with [`run`](Self::run), [`run_records`](Self::run_records) and
    /// [`run_against`](Self::run_against).
    pub fn run_with<T, I, F>(&self, records: I, parse: F) -> Result<Dedup>
    where
        T: Send + RecordBytes,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
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
        T: Send + RecordBytes,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
        F: Fn(T) -> std::result::Result<Document, Rejection> + Sync + Send,
    {
        (self.sketcher.config()).check_tokenizer(&previous.config, "saved sketches")?;
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
        T: Send + RecordBytes,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
        F: Fn(T) -> std::result::Result<Document, Rejection> + Sync + Send,
    {
        let start = Instant::now();
        let cfg = self.sketcher.config();
        // Sites are interned as they arrive: one string per site, not per page.
        let mut site_names = crate::verify::site::SiteNames::default();
        let (mut meta, mut sketches, old) = match previous {
            Some(p) => previous_columns(p, &mut site_names),
            None => (Columns::default(), Sketches::new(cfg), 0),
        };
        let mut bytes = 0u64;
        let (mut stripped_pages, mut stripped_terms) = (0u64, 0u64);
        let empty = Sketch {
            supershingles: vec![0; cfg.supershingles],
            charikar: vec![0; cfg.charikar_bits / 64],
            simhash: 0,
            exact: 0,
            terms: 0,
            pugh: Vec::new(),
        };
        // Records taken from the input, counted as they are taken (not from the fates).
        let received = std::sync::atomic::AtomicU64::new(0);
        self.ordered_map(
            records.into_iter().inspect(|_| {
                received.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
            |scratch, rec| self.sketch_record_for_run(scratch, parse(rec)),
            |done| {
                for mut r in done {
                    bytes += r.bytes;
                    r.meta.site = r.site.map(|name| site_names.intern(&name));
                    if r.removed > 0 {
                        stripped_pages += 1;
                        stripped_terms += r.removed as u64;
                    }
                    let kept = r.sketch.as_ref().filter(|_| r.meta.rejected.is_none());
                    sketches.push(kept.unwrap_or(&empty));
                    meta.push(r.meta);
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
        let received = received.into_inner();
        let mut d = self.install(|| {
            self.dedup_sketched(meta, site_names.into_names(), sketches, old, received)
        })?;
        d.stats.bytes = bytes;
        d.stats.boilerplate_pages = stripped_pages;
        d.stats.boilerplate_terms = stripped_terms;
        d.stats.seconds.sketch = sketch_time.as_secs_f64();
        d.stats.seconds.total = start.elapsed().as_secs_f64();
        Ok(d)
    }

    /// One parsed record (or the reason it could not be) sketched on a worker, as a
    /// run keeps it: rejected when too large or without terms, its site's
    /// boilerplate left out.
    fn sketch_record_for_run(
        &self,
        scratch: &mut Scratch,
        parsed: std::result::Result<Document, Rejection>,
    ) -> SketchedRecord {
        let doc = match parsed {
            Err(r) => {
                let hash = r.id.as_deref().map_or(0, id_hash);
                return SketchedRecord::rejected(r.id.unwrap_or_default(), hash, r.reason);
            }
            Ok(doc) => doc,
        };
        if doc.body.len() > self.max_document_bytes {
            let reason = too_large(doc.body.len(), self.max_document_bytes);
            let hash = id_hash(&doc.id);
            return SketchedRecord::rejected(doc.id, hash, reason);
        }
        let site = site_of(&doc, self.site_mode);
        let bp = self
            .boilerplate
            .as_deref()
            .zip(site.as_deref())
            .and_then(|(b, s)| b.for_site(s));
        let how = How {
            without: bp,
            hook: &mut (),
            may_stop: false,
        };
        let made = self.sketcher.sketch_doc(&doc, scratch, how);
        let removed = made.removed;
        let s = made.whole();
        SketchedRecord {
            meta: Meta {
                id_hash: id_hash(&doc.id),
                rejected: no_terms(s.terms),
                id: doc.id,
                priority: doc.priority,
                site: None,
            },
            site,
            sketch: Some(s),
            bytes: doc.body.len() as u64,
            removed,
        }
    }

    /// The sequential end of a run, over the sketches: repeated ids, the exact pass,
    /// stage one, stage two, the high-recall union and the clusters. Ordinals below
    /// `old` are references from saved sketches.
    fn dedup_sketched(
        &self,
        meta: Columns,
        site_names: Vec<String>,
        sketches: Sketches,
        old: usize,
        received: u64,
    ) -> Result<Dedup> {
        let n = meta.len();
        check_run_size(n)?;
        let mut stats = Stats {
            read: n as u64,
            ..Stats::default()
        };
        let Columns {
            ids,
            id_hashes,
            mut fates,
            priority,
            site_ids,
        } = meta;
        // Ids name records in every output, so a repeated id is rejected.
        reject_repeated_ids(&ids, &id_hashes, &mut fates, old);
        let terms = sketches.term_counts().to_vec();
        // The representative: an old record when there is one (old records are never
        // dropped), else by the keep policy.
        let better = preference(self.keep, &terms, &priority, old);
        let pick = |members: &[u32]| -> u32 {
            members
                .iter()
                .copied()
                .min_by(|&a, &b| better(a, b))
                .unwrap_or(0)
        };
        let (exact, t_exact) = timed(|| exact_pass(&sketches, &mut fates, &pick, &mut stats));
        let mut pairs = self.measured(&sketches, &site_ids, &exact.pairs, PairKind::Exact);
        let (candidates, t_cand) = timed(|| {
            let generator = self.rule.candidates();
            generator.candidates(&sketches, &exact.active, &mut stats.candidates)
        });
        let candidates = candidates?;
        let ((near, decisions), t_filter) =
            timed(|| self.stage_two(&sketches, &site_ids, &candidates));
        stats.verified = near.len() as u64;
        let (extra, t_hr) = timed(|| self.high_recall_pairs(&sketches, &exact.active, &near));
        let extra = extra?;
        stats.high_recall_added = extra.len() as u64;
        let t = Instant::now();
        let (mut clusters, unchained) =
            self.clusters([&near, &extra], exact.groups, &mut fates, (&pick, &better));
        stats.unchained = unchained;
        pairs.extend(self.measured(&sketches, &site_ids, &near, PairKind::Near));
        pairs.extend(self.measured(&sketches, &site_ids, &extra, PairKind::HighRecall));
        only_new(old, &mut pairs, &mut clusters, &mut fates);
        let kept = tally(&fates, old, &pairs, &mut stats);
        stats.clusters = ClusterStats::of(&clusters);
        stats.seconds = Timings {
            exact: t_exact,
            candidates: t_cand,
            filter: t_filter,
            high_recall: t_hr,
            cluster: t.elapsed().as_secs_f64(),
            ..Timings::default()
        };
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
            decisions,
        };
        d.reconcile(received)?;
        Ok(d)
    }

    /// `pairs` of `kind` with their measures, in the same order.
    fn measured(
        &self,
        sketches: &Sketches,
        site_ids: &[Option<u32>],
        pairs: &[(u32, u32)],
        kind: PairKind,
    ) -> Vec<Pair> {
        pairs
            .par_iter()
            .map(|&(a, b)| self.pair(sketches, site_ids, a, b, kind))
            .collect()
    }

    /// Stage two over the candidates (by class of pair when a site strategy is set):
    /// the accepted pairs, in candidate order, and every decision's measures.
    fn stage_two(
        &self,
        sketches: &Sketches,
        site_ids: &[Option<u32>],
        candidates: &[(u32, u32)],
    ) -> (Vec<(u32, u32)>, Decisions) {
        let class = |a: u32, b: u32| PairClass::of(site_ids[a as usize], site_ids[b as usize]);
        let (bits, ss) = (
            self.sketcher.config().charikar_bits,
            self.sketcher.config().supershingles,
        );
        candidates
            .par_iter()
            .copied()
            .fold(
                || (Vec::new(), Decisions::new(bits, ss)),
                |(mut near, mut decisions), (a, b)| {
                    let (x, y) = (sketches.get(a as usize), sketches.get(b as usize));
                    let accepted = self.rule.accepts(class(a, b), x, y);
                    decisions.record(
                        class(a, b),
                        agreement(x.charikar, y.charikar),
                        shared_supershingles(x.supershingles, y.supershingles),
                        accepted,
                    );
                    if accepted {
                        near.push((a, b));
                    }
                    (near, decisions)
                },
            )
            .reduce(
                || (Vec::new(), Decisions::new(bits, ss)),
                |(mut n1, d1), (n2, d2)| {
                    n1.extend(n2);
                    (n1, d1.merge(d2))
                },
            )
    }

    /// The high-recall union (when on): pairs within its Charikar distance among the
    /// active records that stage two did not accept.
    fn high_recall_pairs(
        &self,
        sketches: &Sketches,
        active: &[u32],
        near: &[(u32, u32)],
    ) -> Result<Vec<(u32, u32)>> {
        let Some(h) = self.rule.high_recall() else {
            return Ok(Vec::new());
        };
        let bits = self.sketcher.config().charikar_bits as u32;
        let gen = CharikarBlocks {
            max_distance: bits - h,
            limits: self.limits,
        };
        let found = gen.candidates(sketches, active, &mut CandidateStats::default())?;
        Ok(found
            .into_iter()
            .filter(|p| near.binary_search(p).is_err())
            .collect())
    }

    /// The clusters of the near and high-recall pairs (union-find; in verified mode
    /// clusters around centres, [`centre_clusters`]), each taking in its members'
    /// exact groups, and the exact groups no near cluster took; the dropped members'
    /// fates set; and how many documents verified mode kept out of the cluster of
    /// their component's best member.
    fn clusters(
        &self,
        [near, extra]: [&[(u32, u32)]; 2],
        exact_group: ExactGroups,
        fates: &mut [Fate],
        (pick, better): (
            &impl Fn(&[u32]) -> u32,
            &impl Fn(u32, u32) -> std::cmp::Ordering,
        ),
    ) -> (Vec<Cluster>, u64) {
        let n = fates.len();
        let mut uf = UnionFind::new(n);
        for &(a, b) in near.iter().chain(extra) {
            uf.union(a, b);
        }
        let mut groups = uf.groups();
        let mut unchained = 0;
        if self.cluster_mode == ClusterMode::Verified {
            let edges: Vec<(u32, u32)> = near.iter().chain(extra).copied().collect();
            let centred = centre_clusters(n, &edges, better);
            // The documents of each component outside its best member's cluster.
            let mut centre_size = vec![0u64; n];
            for (c, members) in &centred {
                centre_size[*c as usize] = members.len() as u64;
            }
            for g in &groups {
                unchained += g.len() as u64 - centre_size[pick(g) as usize].max(1);
            }
            groups = centred.into_iter().map(|(_, m)| m).collect();
        }
        let mut clusters: Vec<Cluster> = Vec::with_capacity(groups.len() + exact_group.len());
        let mut in_near_cluster = vec![false; n];
        // A near cluster takes in the exact groups of its members.
        let exact_of: ahash::AHashMap<u32, &Vec<u32>> =
            exact_group.iter().map(|(r, m)| (*r, m)).collect();
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
        drop(exact_of);
        for (rep, members) in exact_group {
            if !in_near_cluster[rep as usize] {
                clusters.push(Cluster {
                    representative: rep,
                    members,
                });
            }
        }
        clusters.sort_unstable_by_key(|c| c.members[0]);
        (clusters, unchained)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: a record (from `old` on, kept, with an id) repeats the id of the
    /// first earlier such record with it.
    fn brute(ids: &[String], fates: &[Fate], old: usize) -> Vec<(u32, u32)> {
        let eligible = |i: usize| i >= old && !ids[i].is_empty() && matches!(fates[i], Fate::Kept);
        let mut first: std::collections::HashMap<&str, u32> = Default::default();
        let mut out = Vec::new();
        for i in (0..ids.len()).filter(|&i| eligible(i)) {
            match first.get(ids[i].as_str()) {
                Some(&j) => out.push((i as u32, j)),
                None => {
                    first.insert(&ids[i], i as u32);
                }
            }
        }
        out
    }

    #[test]
    fn repeated_ids_equal_the_definition_whatever_the_hash() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for round in 0..200 {
            // Mostly short runs with many repeats; some long enough that only the hashes
            // that may repeat are sorted (`repeated_first`).
            let (n, distinct) = if round % 20 == 0 {
                (rng.random_range(4096..6000), 8000)
            } else {
                (rng.random_range(0..300), 40)
            };
            let ids: Vec<String> = (0..n)
                .map(|_| match rng.random_range(0..10) {
                    0 => String::new(),
                    _ => format!("id{}", rng.random_range(0..distinct)),
                })
                .collect();
            let fates: Vec<Fate> = (0..n)
                .map(|_| match rng.random_range(0..8) {
                    0 => Fate::Rejected {
                        reason: RejectReason::Empty,
                    },
                    _ => Fate::Kept,
                })
                .collect();
            let old = rng.random_range(0..=n / 4);
            let want = brute(&ids, &fates, old);
            let by = |hash: &dyn Fn(&str) -> u64| {
                let hashes: Vec<u64> = ids.iter().map(|id| hash(id)).collect();
                repeated_ids(&ids, &hashes, &fates, old)
            };
            let sorted = |mut v: Vec<(u32, u32)>| {
                v.sort_unstable();
                v
            };
            // The real hash, every id colliding, and ids in three colliding classes.
            assert_eq!(sorted(by(&id_hash)), want, "round {round}");
            assert_eq!(sorted(by(&|_| 5)), want);
            assert_eq!(sorted(by(&|id| id.len() as u64 % 3)), want);
        }
    }
}

#[cfg(test)]
mod decision_tests {
    use super::*;

    /// Pages of a template with a few words changed: candidates on both sides of the
    /// threshold, on two sites and without a site.
    fn corpus() -> Vec<Document> {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let words: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        let base: Vec<String> = (0..300)
            .map(|_| words[rng.random_range(0..400)].clone())
            .collect();
        (0..120)
            .map(|i| {
                let mut t = base.clone();
                for _ in 0..(i % 40) {
                    let at = rng.random_range(0..t.len());
                    t[at] = format!("x{}", rng.random_range(0..100_000));
                }
                let mut d = Document::text(format!("d{i}"), t.join(" "));
                if i % 3 != 0 {
                    d.url = Some(format!("http://site{}.example/{i}", i % 2));
                }
                d
            })
            .collect()
    }

    #[test]
    fn decisions_count_every_candidate_once_with_its_measures() {
        let docs = corpus();
        for strategy in [
            None,
            Some(crate::verify::Strategy::Henzinger {
                same_site: None,
                cross_site: None,
            }),
        ] {
            let mut b = Pipeline::builder();
            b.min_shared(1);
            if let Some(s) = strategy {
                b.strategy(s);
            }
            let p = b.build().unwrap();
            let d = p.run(docs.clone()).unwrap();
            let dec = &d.decisions;
            assert_eq!(dec.total(), d.stats.candidates.candidates);
            let accepted: u64 = [&dec.same_site, &dec.cross_site, &dec.unknown_site]
                .iter()
                .map(|c| c.accepted())
                .sum();
            assert_eq!(accepted, d.stats.verified);
            assert!(
                accepted > 0 && accepted < dec.total(),
                "{accepted} of {}",
                dec.total()
            );
            // The accepted candidates are the near pairs: the same measures, recomputed
            // here from the sketches, in the same classes.
            let mut want = Decisions::new(384, 6);
            for pair in d.pairs.iter().filter(|p| p.kind == PairKind::Near) {
                let (x, y) = (
                    d.sketches.get(pair.a as usize),
                    d.sketches.get(pair.b as usize),
                );
                let bits: u32 = x
                    .charikar
                    .iter()
                    .zip(y.charikar)
                    .map(|(a, b)| 64 - (a ^ b).count_ones())
                    .sum();
                let shared = x
                    .supershingles
                    .iter()
                    .zip(y.supershingles)
                    .filter(|(a, b)| a == b)
                    .count();
                let class = PairClass::of(d.site(pair.a as usize), d.site(pair.b as usize));
                want.record(class, bits, shared, true);
            }
            for c in [
                PairClass::SameSite,
                PairClass::CrossSite,
                PairClass::Unknown,
            ] {
                assert_eq!(
                    dec.class(c).accepted_by_agreement,
                    want.class(c).accepted_by_agreement
                );
                assert_eq!(
                    dec.class(c).accepted_by_shared,
                    want.class(c).accepted_by_shared
                );
            }
            // Rejected candidates lie below the threshold (uniform), or below their
            // class's threshold.
            if strategy.is_none() {
                let below = |c: &ClassDecisions| {
                    c.rejected_by_agreement[372..].iter().sum::<u64>() == 0
                        && c.accepted_by_agreement[..372].iter().sum::<u64>() == 0
                };
                assert!(
                    below(&dec.same_site) && below(&dec.cross_site) && below(&dec.unknown_site)
                );
            }
        }
    }
}
