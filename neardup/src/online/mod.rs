//! Online two-stage dedup: is this document new, or a duplicate of one already stored?
//!
//! A [`Deduper`] holds the sketches of the documents it has stored and answers for one
//! document at a time, from many threads, with the verdict of the pipeline's one rule
//! ([`crate::verify::Rule`]: the same presets, strategies and site classes as a batch
//! run):
//!
//! 1. the document is sketched (outside any lock), and its sketch is cut short when an
//!    exact duplicate is stored: once the terms are known, so is the exact
//!    fingerprint, and when a stored document has it, the min-hashing and the
//!    projections (about a third of a sketch) are skipped, since the verdict reads
//!    nothing else (should the twin be removed before the lock is taken, the document
//!    is sketched in full);
//! 2. an equal exact fingerprint among the stored documents makes it an exact duplicate
//!    of the first such document (in insertion order);
//! 3. otherwise its candidates are the stored documents that share a supershingle with
//!    it in one of the first `m' − r + 1` slots (by pigeonhole, every pair that agrees
//!    in `r` of the `m'` slots, stage one's definition, does); they are judged in
//!    insertion order with the rule, whose own candidate test keeps those that agree in
//!    `r` slots, and the first near-duplicate is named.
//!
//! **Big posting lists.** A posting list (the stored documents with supershingle `v` in
//! slot `j`) that grows past `max_bucket` members (the pipeline's [`BucketLimits`](crate::candidates::BucketLimits),
//! default 1,000) keeps only its first member and its last `window` members (default
//! 8), so a check costs at most `1 + window` judgements per big list: the online form
//! of the batch big-bucket rule (a star around the first member, each member with its
//! neighbours). A list keeps that form once it has it; a removed member leaves it.
//!
//! **Memory.** Nothing is stored twice: the ids back to back in one string (4 bytes
//! beside each, `ids`), the sketches in the column store, and the posting lists, the
//! exact fingerprints and the ids' index as tables of slots that hold no keys (the key
//! is read from the stored document): 4-byte cells, about 6 bytes per entry at the
//! tables' average load, 7 entries per document with the paper preset.
//!
//! **Durable state** ([`Deduper::open`], [`Deduper::open_with`]): a snapshot and a
//! checksummed log (`state`), each entry written (one `pwrite`, `append`) before the
//! change is applied, and flushed before it is acknowledged as the [`SyncPolicy`] says,
//! threads that insert at once sharing one flush. A log damaged before its end is an
//! error, or recovered on request ([`StateOptions::recover`]); a failed write, flush,
//! rename or removal, or a panic while the state was being changed, leaves the deduper
//! refusing every later change ([`Error::Failed`]) until it is reopened, so memory never
//! holds what the disk does not.
//!
//! **Updates.** A document whose id is already stored is an update of that document:
//! [`Deduper::check_and_insert`] judges it against the *other* stored documents (never
//! against its own earlier version) and, when it is new, replaces the earlier version;
//! when it duplicates another document, the earlier version is removed (logged), so the
//! state holds what an index of the latest texts would. The same id with the same text
//! is a retry: [`Verdict::New`], nothing changes. [`Deduper::insert`] stores whatever it
//! is given, replacing the earlier version.
//!
//! **Semantics beside batch `dedup`.** Online, each document is compared with every
//! stored document (the kept ones, with [`Deduper::check_and_insert`]); there is no
//! chaining through clusters. A batch run drops `c` when `c ~ b ~ a` even if `c` and `a`
//! are not near-duplicates; online, `c` is new if `b` was dropped (never stored) and `c`
//! is not a near-duplicate of `a`. So the online kept set can be larger than batch's.
//!
//! [`Deduper::check_and_insert`] is atomic: the check and the insert happen under one
//! write lock, so two racing near-duplicates cannot both come back [`Verdict::New`].

mod append;
#[doc(hidden)]
pub mod fault;
mod ids;
mod mapped;
mod postings;
mod state;
mod table;

pub use state::{DiskStats, Recovered, StateOptions, SyncPolicy};

/// One of the deduper's tables on its own, for the `online-table` bench: not part of
/// the API.
#[doc(hidden)]
pub mod bench_support {
    use super::table::{Scratch, SlotTable};
    use crate::sketch::hash::mix64;

    /// A table of `n` entries, slot `s` under the hash `mix64(s)`, grown one insert at
    /// a time as the deduper grows its tables.
    pub struct LookupTable(SlotTable);

    impl LookupTable {
        /// The table of `n` entries.
        pub fn new(n: u32) -> Self {
            let (mut t, mut scratch) = (SlotTable::default(), Scratch::default());
            for s in 0..n {
                t.insert(mix64(s as u64), s, |s| mix64(s as u64), &mut scratch)
                    .expect("memory for a bench table");
            }
            LookupTable(t)
        }

        /// Looks `h` up as the deduper does (eight cells at a time); the slots visited
        /// and the end of the run, summed.
        pub fn lookup(&self, h: u64) -> u64 {
            let mut x = 0u64;
            let end = self.0.candidates(h, |s| x += s as u64);
            x + end.at as u64
        }

        /// The same, one cell at a time (the baseline).
        pub fn lookup_scalar(&self, h: u64) -> u64 {
            let mut x = 0u64;
            let end = self.0.candidates_scalar(h, |s| x += s as u64);
            x + end.at as u64
        }
    }
}

use crate::candidates::Supershingles;
use crate::document::{Document, RejectReason};
use crate::error::{Error, Result};
use crate::persist::sketches::save_records;
use crate::pipeline::Pipeline;
use crate::sketch::hash::{id_hash, mix64};
use crate::sketch::{How, Sketch, SketchHook, Sketched, Sketches};
use crate::verify::site::SiteNames;
use crate::verify::{Judgement, PairClass};
use std::sync::{OnceLock, RwLock};
use table::{sorted_entries, RunEnd, SlotTable};

/// The phases of the ids' and the exact fingerprints' tables (the posting lists' are
/// their slots' numbers, from 0): tables that grow together rebuild their shards at
/// different moments ([`SlotTable::new`]).
const ID_PHASE: usize = 6;
const EXACT_PHASE: usize = 5;

/// The answer for one document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Nothing stored is a duplicate of it.
    New,
    /// Same normalized term sequence as the stored document `of`.
    Exact {
        /// The stored document's id.
        of: String,
    },
    /// A near-duplicate of the stored document `of`, with the rule's parts.
    Near {
        /// The stored document's id.
        of: String,
        /// The rule's verdict and its parts for the pair.
        judgement: Judgement,
    },
    /// The document cannot be sketched (empty, or over the maximum size).
    Rejected {
        /// Why.
        reason: RejectReason,
    },
}

impl Verdict {
    /// `"new"`, `"exact"`, `"near"` or `"rejected"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::New => "new",
            Verdict::Exact { .. } => "exact",
            Verdict::Near { .. } => "near",
            Verdict::Rejected { .. } => "rejected",
        }
    }

    /// The stored document's id, for a duplicate.
    pub fn of(&self) -> Option<&str> {
        match self {
            Verdict::Exact { of } | Verdict::Near { of, .. } => Some(of),
            _ => None,
        }
    }
}

/// What a batch call does with each of its documents.
#[derive(Clone, Copy)]
enum Op {
    Check,
    Insert,
    CheckAndInsert,
}

/// No site.
const NO_SITE: u32 = u32::MAX;

/// Slots a deduper can hold (documents stored so far, removed and replaced ones
/// included until the state is compacted and reopened).
const MAX_SLOTS: usize = 1 << table::MAX_SLOT_BITS;

fn too_many(n: usize) -> Error {
    Error::Config(format!(
        "the online deduper holds at most {MAX_SLOTS} documents (stored, removed and \
         replaced ones until compaction and a reopen); it has {n}"
    ))
}

fn too_long_id(n: usize) -> Error {
    Error::Config(format!(
        "the online deduper stores ids of at most {} bytes; this one has {n}",
        u32::MAX
    ))
}

/// The stored documents: sketches by slot, postings, exact fingerprints. Slots are
/// numbered in insertion order; the slot of a removed or replaced document keeps its id
/// and sketch, but no table points to it any more.
struct State {
    /// The ids of all slots.
    ids: ids::Ids,
    /// Site (interned) by slot, or [`NO_SITE`].
    sites: Vec<u32>,
    site_names: SiteNames,
    sketches: Sketches,
    /// Live slots by id.
    by_id: SlotTable,
    /// Live slots by exact fingerprint.
    exact: SlotTable,
    /// Live slots by supershingle.
    postings: postings::Postings,
    live: usize,
    /// The durable log, for a deduper opened on a directory.
    log: Option<state::Log>,
    /// Scratch for [`Walked`], kept between documents.
    walked: Walked,
    /// The tables' rebuilds work in it.
    scratch: table::Scratch,
}

/// Where a check's walks of the tables ended, for the insert of the same document right
/// after it under the same lock: the insert then walks no run again
/// ([`SlotTable::insert_at`]).
#[derive(Debug, Default)]
struct Walked {
    id: Option<RunEnd>,
    exact: Option<RunEnd>,
    postings: Vec<Option<postings::ListEnd>>,
}

fn exact_hash(exact: u128) -> u64 {
    mix64(exact as u64 ^ mix64((exact >> 64) as u64))
}

/// The ids' table key of a stored slot: the hash of its id (for building and rebuilding
/// the table; the one rule, beside [`id_hash`] of a new id).
fn stored_id_hash(ids: &ids::Ids) -> impl table::Keys + Sync + '_ {
    table::Prefetched(move |s| id_hash(ids.get(s)), move |s| ids.prefetch(s))
}

/// The exact fingerprints' table key of a stored slot.
fn stored_exact_hash(sketches: &Sketches) -> impl table::Keys + Sync + '_ {
    table::Prefetched(
        move |s| exact_hash(sketches.exact_fingerprints()[s as usize]),
        move |s| {
            table::prefetch_bytes(bytemuck::bytes_of(
                &sketches.exact_fingerprints()[s as usize],
            ))
        },
    )
}

impl State {
    /// Grows every table the document prepared as `p` with `sketch` goes into, if it
    /// needs to, so that storing it in the next slot rebuilds nothing (each shard's
    /// rebuild takes its blocks before it changes anything: on an error, the tables
    /// are whole).
    fn make_room(&mut self, p: &Prepared, sketch: &Sketch) -> std::io::Result<()> {
        let slot = self.ids.len() as u32;
        let State {
            ids,
            by_id,
            exact,
            sketches,
            postings,
            scratch,
            ..
        } = self;
        by_id.make_room(p.id_hash, slot, stored_id_hash(ids), scratch)?;
        exact.make_room(
            exact_hash(sketch.exact),
            slot,
            stored_exact_hash(sketches),
            scratch,
        )?;
        postings.make_room(slot, &sketch.supershingles, sketches, scratch)
    }

    fn id(&self, slot: u32) -> &str {
        self.ids.get(slot)
    }

    /// Asks for the cells a check of `p` (with `sketch`, if made) reads first (a hint),
    /// unless [`Deduper::prepare`] did.
    fn prefetch(&self, p: &Prepared, sketch: Option<&Sketch>) {
        if !p.prefetched {
            self.prefetch_all(p.id_hash, p.exact, sketch);
        }
    }

    /// Asks for the home cells of the id's, the exact fingerprint's and (with a sketch)
    /// the posting lists' lookups.
    fn prefetch_all(&self, id_hash: u64, exact: u128, s: Option<&Sketch>) {
        self.by_id.prefetch(id_hash);
        self.exact.prefetch(exact_hash(exact));
        if let Some(s) = s {
            self.postings.prefetch(&s.supershingles);
        }
    }

    /// Asks for what judging the stored `slot` reads (its site, exact fingerprint,
    /// term count and projection; its supershingles are being read): in a big state,
    /// each a cache miss of its own, which then overlap with the supershingle's
    /// instead of following it.
    #[inline]
    fn prefetch_judged(&self, slot: u32) {
        let i = slot as usize;
        let sk = &self.sketches;
        if let (Some(site), Some(exact), Some(terms)) = (
            self.sites.get(i),
            sk.exact_fingerprints().get(i),
            sk.term_counts().get(i),
        ) {
            table::prefetch_bytes(bytemuck::bytes_of(site));
            table::prefetch_bytes(bytemuck::bytes_of(exact));
            table::prefetch_bytes(bytemuck::bytes_of(terms));
            table::prefetch_lines(bytemuck::cast_slice(sk.charikar(i)));
        }
    }

    /// The first stored slot (in insertion order) with the exact fingerprint `e`, and
    /// where the walk of the exact fingerprints' table ended.
    fn first_exact(&self, e: u128) -> (Option<u32>, RunEnd) {
        let mut first: Option<u32> = None;
        let end = self.exact.candidates(exact_hash(e), |s| {
            if self.sketches.exact_fingerprints()[s as usize] == e && first.is_none_or(|f| s < f) {
                first = Some(s);
            }
        });
        (first, end)
    }

    /// The live slot of `id`, whose [`id_hash`] is `h`.
    fn slot_of(&self, id: &str, h: u64) -> Option<u32> {
        self.walk_id(id, h).0
    }

    /// The live slot of `id`, whose [`id_hash`] is `h`, and where the walk ended.
    fn walk_id(&self, id: &str, h: u64) -> (Option<u32>, RunEnd) {
        let mut found = None;
        let end = self.by_id.candidates(h, |s| {
            if found.is_none() && self.id(s) == id {
                found = Some(s);
            }
        });
        (found, end)
    }

    /// Bytes held by the stored documents (vectors at their capacity).
    fn bytes(&self) -> usize {
        self.ids.bytes()
            + 4 * self.sites.capacity()
            + self.sketches.heap_bytes()
            + self.by_id.bytes()
            + self.exact.bytes()
            + self.postings.bytes()
            + self.scratch.bytes()
    }
}

/// The online deduper (see the module docs). Build one from a pipeline with
/// [`Deduper::new`]; share it between threads by reference.
pub struct Deduper {
    pipeline: Pipeline,
    generator: Supershingles,
    /// Supershingle slots with posting lists.
    indexed: usize,
    state: RwLock<State>,
    /// Why the state stopped taking changes (final until reopened).
    failed: OnceLock<String>,
    /// What opening recovered from a damaged log.
    recovered: Option<Recovered>,
}

impl std::fmt::Debug for Deduper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deduper")
            .field("stage_one", &self.pipeline.describe().0)
            .field("len", &self.len())
            .finish()
    }
}

/// How the posting lists of `generator`'s stage one are keyed.
fn lists_keying(generator: &Supershingles) -> postings::Keying {
    postings::Keying {
        band: generator.band.map(|w| w.max(1)),
    }
}

impl Deduper {
    /// An empty deduper with `pipeline`'s settings. Stage one must be Broder's
    /// supershingles (postings need bucket keys); the high-recall union and boilerplate
    /// removal are batch-only and refused.
    ///
    /// When the rule does not read the 64-bit simhash (no preset does), the deduper
    /// sketches without it ([`SketchConfig::simhash`](crate::sketch::SketchConfig::simhash)
    /// off): the same verdicts, 8 bytes less per stored document. [`pipeline`](Self::pipeline) gives the settings it uses.
    pub fn new(pipeline: Pipeline) -> Result<Deduper> {
        let config = pipeline.sketcher().config();
        let pipeline = if config.simhash && !pipeline.rule().reads_simhash() {
            let mut without = config.clone();
            without.simhash = false;
            pipeline.with_sketch_config(without)?
        } else {
            pipeline
        };
        let Some(generator) = pipeline.rule().candidates().as_supershingles().cloned() else {
            return Err(Error::Config(format!(
                "the online deduper needs Broder's supershingles as stage one, not {}",
                pipeline.describe().0
            )));
        };
        if pipeline.high_recall_threshold().is_some() {
            return Err(Error::Config(
                "the online deduper does not support the high-recall union".into(),
            ));
        }
        if pipeline.boilerplate_learned() {
            return Err(Error::Config(
                "the online deduper does not support boilerplate removal".into(),
            ));
        }
        let slots = pipeline.sketcher().config().supershingles;
        let r = generator.min_shared.clamp(1, slots.max(1));
        // Banded: one list per band. Else by pigeonhole (see `postings`): the first
        // m' − r + 1 slots.
        let indexed = match generator.band {
            Some(w) => slots / w.max(1),
            None => slots + 1 - r,
        };
        let sketches = Sketches::new(pipeline.sketcher().config());
        let postings =
            postings::Postings::new(indexed, generator.limits, lists_keying(&generator), 0)?;
        Ok(Deduper {
            pipeline,
            generator,
            indexed,
            state: RwLock::new(State {
                ids: ids::Ids::default(),
                sites: Vec::new(),
                site_names: SiteNames::default(),
                sketches,
                by_id: SlotTable::new(ID_PHASE),
                exact: SlotTable::new(EXACT_PHASE),
                postings,
                live: 0,
                log: None,
                walked: Walked::default(),
                scratch: table::Scratch::default(),
            }),
            failed: OnceLock::new(),
            recovered: None,
        })
    }

    /// A deduper whose state lives in the directory `dir` (created when missing): the
    /// stored documents of its snapshot and log are restored, a torn last log entry is
    /// dropped, and every change is logged before it is applied or acknowledged, flushed
    /// as `sync` says (see [`SyncPolicy`] for what a crash can lose). The state must
    /// have been made with the same sketch settings. A log damaged before its last entry
    /// is an [`Error::Corrupt`] naming the file, the damaged bytes and the entries past
    /// them; [`open_with`](Self::open_with) can recover it.
    pub fn open(dir: &std::path::Path, pipeline: Pipeline, sync: SyncPolicy) -> Result<Deduper> {
        Self::open_with(dir, pipeline, &StateOptions::new().sync(sync))
    }

    /// [`open`](Self::open) with every option: the sync policy, recovery of a damaged
    /// log (what it kept and lost: [`recovered`](Self::recovered)), opening where the
    /// filesystem has no locks.
    pub fn open_with(
        dir: &std::path::Path,
        pipeline: Pipeline,
        options: &StateOptions,
    ) -> Result<Deduper> {
        let mut d = Deduper::new(pipeline)?;
        let (snap, entries, log, recovered) =
            state::open(dir, d.pipeline.sketcher().config(), options)?;
        d.recovered = recovered;
        if snap.config != *d.pipeline.sketcher().config() {
            // A state whose sketches have simhashes, opened by a deduper that would leave
            // them out (`state::open` checked that this is the only difference): its
            // documents go on being sketched with them, so that the state's files keep
            // saying what they hold.
            d.pipeline = d.pipeline.with_sketch_config(snap.config.clone())?;
        }
        {
            let mut st = d.write()?;
            let st = &mut *st;
            // The snapshot's documents become slots 0..n as they are: its sketches are
            // the store, and the tables are built in bulk, sized once for everything
            // restored, each on a thread of its own.
            let n = snap.ids.len();
            let total = n + entries.len();
            st.ids.reserve(total);
            st.sites.reserve(total);
            for (id, site) in snap.ids.iter().zip(snap.sites) {
                if id.len() > st.ids.max_len() {
                    return Err(too_long_id(id.len()));
                }
                st.ids.push(id);
                st.sites
                    .push(site.map_or(NO_SITE, |name| st.site_names.intern(&name)));
            }
            drop(snap.ids);
            st.sketches = snap.sketches;
            st.postings = postings::Postings::new(
                d.indexed,
                d.generator.limits,
                lists_keying(&d.generator),
                0,
            )?;
            if total > MAX_SLOTS {
                return Err(too_many(total));
            }
            let slots = 0..n as u32;
            let State {
                ids,
                sketches,
                postings,
                ..
            } = &mut *st;
            // Each table is built at once from its entries sorted by hash (written in
            // memory order, not at random): the ids', the exact fingerprints' and the
            // posting lists', on threads of their own.
            let max_slot = (n as u32).saturating_sub(1);
            let (ids, exact) = rayon::join(
                || -> Result<SlotTable> {
                    let id = |s: u64| ids.get(s as u32);
                    let e = sorted_entries(slots.clone(), stored_id_hash(ids))?;
                    // Equal ids have equal hashes: look within each run of one hash.
                    for run in e.chunk_by(|a, b| a[0] == b[0]).filter(|r| r.len() > 1) {
                        for (i, a) in run.iter().enumerate() {
                            if let Some(b) = run[i + 1..].iter().find(|b| id(b[1]) == id(a[1])) {
                                return Err(Error::Corrupt {
                                    path: dir.to_path_buf(),
                                    reason: format!(
                                        "the snapshot holds the id {:?} twice",
                                        id(b[1])
                                    ),
                                });
                            }
                        }
                    }
                    Ok(SlotTable::from_entries(total, max_slot, &e, ID_PHASE)?)
                },
                || -> Result<SlotTable> {
                    let (lists, t) = rayon::join(
                        || postings.build_all(slots.clone(), sketches, total),
                        || {
                            let e = sorted_entries(slots.clone(), stored_exact_hash(sketches))?;
                            SlotTable::from_entries(total, max_slot, &e, EXACT_PHASE)
                        },
                    );
                    lists?;
                    Ok(t?)
                },
            );
            st.by_id = ids?;
            st.exact = exact?;
            st.live = n;
            for e in entries {
                match e {
                    state::Entry::Insert { id, site, sketch } => {
                        let h = id_hash(&id);
                        let old = st.slot_of(&id, h);
                        let p = Prepared {
                            exact: sketch.exact,
                            sketch: None,
                            site,
                            site_hash: None,
                            id_hash: h,
                            prefetched: false,
                        };
                        d.store(st, &id, &p, &sketch, old, None)?;
                    }
                    state::Entry::Remove { id } => {
                        if let Some(slot) = st.slot_of(&id, id_hash(&id)) {
                            d.unstore(st, slot);
                        }
                    }
                }
            }
            st.log = Some(log);
        }
        Ok(d)
    }

    /// Rewrites the state directory as one snapshot of the stored documents (atomically)
    /// and an empty log; nothing for a deduper in memory.
    pub fn compact(&self) -> Result<()> {
        let mut st = self.write()?;
        if st.log.is_none() {
            return Ok(());
        }
        let st = &mut *st;
        // The live slots (those in the ids' table) in slot order, read off its cells;
        // their records are streamed to the file as they lie in memory, nothing copied
        // per document.
        let live = st.by_id.live_slots()?;
        debug_assert_eq!(live.len(), st.live);
        let cfg = self.pipeline.sketcher().config();
        let State {
            ids,
            sites,
            site_names,
            sketches,
            log,
            ..
        } = st;
        let records = live.iter().map(|&slot| {
            let site = sites[slot as usize];
            (
                ids.get(slot as u32),
                (site != NO_SITE).then(|| site_names.name(site)),
                sketches.get(slot as usize),
            )
        });
        if let Some(log) = log.as_mut() {
            let done = log.compact(|path| save_records(path, cfg, live.len() as u64, records));
            self.settle(done)?;
        }
        Ok(())
    }

    /// Flushes the log to the disk now (whatever the sync policy).
    pub fn sync(&self) -> Result<()> {
        let ticket = match self.write()?.log.as_mut() {
            Some(log) => log.flush_ticket(),
            None => return Ok(()),
        };
        self.settle(ticket.wait())
    }

    /// What opening recovered from a damaged log ([`StateOptions::recover`]), if it
    /// did.
    pub fn recovered(&self) -> Option<&Recovered> {
        self.recovered.as_ref()
    }

    /// Why the state stopped taking changes, if it did: an I/O error of its log or
    /// snapshot, or a panic while it was being changed. Every change and every check is
    /// then refused with [`Error::Failed`] until the state is reopened.
    pub fn failure(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// `r`, with the state marked failed when it is an error (see
    /// [`failure`](Self::failure)).
    fn settle<T>(&self, r: Result<T>) -> Result<T> {
        // I/O errors only: a limit refused before anything was written changes nothing.
        if let Err(e @ Error::Io { .. }) = &r {
            let _ = self.failed.set(e.to_string());
        }
        r
    }

    /// Waits for `ticket` (the entries a change or a verdict depends on, flushed).
    fn durable(&self, ticket: Option<append::Ticket>) -> Result<()> {
        match ticket {
            Some(t) => self.settle(t.wait()),
            None => Ok(()),
        }
    }

    /// The pipeline whose settings and rule it uses: the one it was made with, its
    /// sketches without the simhash when the rule does not read it (see
    /// [`new`](Self::new)) and the state it opened was made so.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Makes room for `additional` more stored documents, like `Vec::reserve`: the
    /// tables are resized once now, to the size they would grow to for that many,
    /// instead of step by step (each shard of a table growing 2.5× at a time) as documents
    /// come. For a job that knows its scale; memory is taken now (about 50 bytes per
    /// reserved document for the tables, before any is stored). A table's shards are
    /// sized for their share of the documents with room for six standard deviations
    /// more; keys that many documents share (a long posting list) can still make a
    /// shard grow before. Nothing changes in what is stored or in any verdict.
    ///
    /// An error: the system refused the memory (the tables are as they were, or some
    /// of their shards resized: still whole, and the deduper goes on), or the state
    /// failed earlier ([`Error::Failed`]).
    pub fn reserve(&self, additional: usize) -> Result<()> {
        let mut st = self.write()?;
        let st = &mut *st;
        let slots = st.ids.len().saturating_add(additional).min(MAX_SLOTS);
        let total = st.live.saturating_add(additional).min(MAX_SLOTS);
        let max_slot = slots.saturating_sub(1) as u32;
        st.ids.reserve(additional.min(MAX_SLOTS));
        st.sites.reserve(additional.min(MAX_SLOTS));
        let State {
            ids,
            by_id,
            exact,
            sketches,
            postings,
            scratch,
            ..
        } = st;
        by_id.reserve(total, max_slot, stored_id_hash(ids), scratch)?;
        exact.reserve(total, max_slot, stored_exact_hash(sketches), scratch)?;
        postings.reserve(total, max_slot, sketches, scratch)?;
        Ok(())
    }

    /// What the state directory holds on disk (the log's and snapshot's sizes, the
    /// time since the log was last flushed); `None` for a deduper in memory.
    pub fn disk(&self) -> Option<DiskStats> {
        self.read().ok()?.log.as_ref().map(|l| l.disk())
    }

    /// Stored documents.
    pub fn len(&self) -> usize {
        self.read().map_or(0, |st| st.live)
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory held by the stored documents: ids, sites, sketches, posting
    /// lists and indexes, counted at their allocated capacity (documents removed or
    /// replaced keep their id and sketch until [`compact`](Self::compact) and a reopen).
    pub fn memory_bytes(&self) -> usize {
        self.read().map_or(0, |st| st.bytes())
    }

    /// The state to read; an error when a thread panicked while changing it (its
    /// tables may be half-rebuilt).
    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, State>> {
        self.state.read().map_err(|_| self.poisoned())
    }

    /// The state to change: an error when an earlier change failed (until reopened) or
    /// a thread panicked while changing it.
    fn write(&self) -> Result<std::sync::RwLockWriteGuard<'_, State>> {
        let st = self.state.write().map_err(|_| self.poisoned())?;
        match self.failed.get() {
            Some(why) => Err(Error::Failed(why.clone())),
            None => Ok(st),
        }
    }

    fn poisoned(&self) -> Error {
        let why = "a thread panicked while changing the deduper's state";
        let _ = self.failed.set(why.into());
        Error::Failed(why.into())
    }

    /// The document's sketch and site (what [`Pipeline::sketch_record`] gives) and the
    /// hashes of its id and site, or why it is rejected. Cache misses are overlapped
    /// with work ([`Ahead`]): the id's bytes are asked for before the sketching (the
    /// document may be out of the cache; its id is first read after the terms), the
    /// cells of the id's and the exact fingerprint's lookups once the terms are known,
    /// the posting lists' once the supershingles are, before the projections (in a big
    /// state, a miss each: asked for after the whole sketch, they were still on their
    /// way when the lock was taken), and the
    /// site's cell once the site is found. The cells are skipped when a writer holds
    /// the state, or without `prefetch` (a batch prepared ahead of its checks, when the
    /// cells would be stale by then); the caller then asks under its lock (`prefetched`
    /// false).
    ///
    /// **Exact duplicates end early.** As soon as the terms are known, the exact
    /// fingerprint's cell is asked for, and once the shingles are made, the stored
    /// fingerprints are looked at (when no writer holds the state): if one is equal,
    /// the document is an exact duplicate or a retry whatever else it has, and the
    /// min-hashing, the projections and the site are skipped (the prepared document
    /// has no sketch). Should that document be gone by the time the lock is taken, the
    /// caller prepares the document again in full ([`Deduper::prepare_full`]).
    fn prepare(&self, doc: &Document) -> std::result::Result<Prepared, RejectReason> {
        self.prepare_with(doc, true)
    }

    /// [`prepare`](Self::prepare) with a whole sketch.
    fn prepare_full(&self, doc: &Document) -> std::result::Result<Prepared, RejectReason> {
        let (mut p, sketch) = self.prepare_whole(doc)?;
        p.sketch = Some(sketch);
        Ok(p)
    }

    /// [`prepare_full`](Self::prepare_full) with the sketch beside the prepared
    /// document (whose own `sketch` is `None`), for a caller that needs it whole.
    fn prepare_whole(
        &self,
        doc: &Document,
    ) -> std::result::Result<(Prepared, Sketch), RejectReason> {
        let mut ahead = Ahead::new(&self.state, doc, true, false);
        let sketch = self
            .pipeline
            .sketch_as(doc, How::plain(&mut ahead))?
            .whole();
        let p = self.prepared(doc, &ahead, sketch.exact, Some(&sketch));
        Ok((p, sketch))
    }

    /// [`prepare`](Self::prepare), the cells asked for only with `prefetch`.
    fn prepare_with(
        &self,
        doc: &Document,
        prefetch: bool,
    ) -> std::result::Result<Prepared, RejectReason> {
        let mut ahead = Ahead::new(&self.state, doc, prefetch, true);
        let how = How {
            without: None,
            hook: &mut ahead,
            may_stop: true,
        };
        let (exact, sketch) = match self.pipeline.sketch_as(doc, how)? {
            Sketched::Sketch(s) => (s.exact, Some(s)),
            Sketched::Exact { exact, .. } => (exact, None),
        };
        let mut p = self.prepared(doc, &ahead, exact, sketch.as_ref());
        p.sketch = sketch;
        Ok(p)
    }

    /// The rest of a preparation once `doc` is sketched (`sketch`, or its exact
    /// fingerprint alone) with `ahead`: the id's hash, the cells left to ask for, the
    /// site. The prepared document's `sketch` is `None`: the caller puts it in, or keeps
    /// it.
    fn prepared(
        &self,
        doc: &Document,
        ahead: &Ahead<'_>,
        exact: u128,
        sketch: Option<&Sketch>,
    ) -> Prepared {
        let prefetch = ahead.prefetch;
        let id_hash = ahead.id_hash.unwrap_or_else(|| id_hash(&doc.id));
        let state = if prefetch {
            self.state.try_read().ok()
        } else {
            None
        };
        if let Some(st) = state.as_ref().filter(|_| !ahead.asked) {
            st.prefetch_all(id_hash, exact, sketch);
        }
        let (site, site_hash, prefetched) = match (state, sketch) {
            // An exact duplicate's verdict does not read the site.
            (Some(_), None) => (None, None, true),
            (None, None) => (None, None, false),
            (Some(st), Some(_)) => {
                let site = self.pipeline.site_of(doc);
                let h = site.as_deref().map(|s| st.site_names.hash(s));
                if let Some(h) = h {
                    table::prefetch_bytes(st.site_names.home_cell(h));
                }
                (site, h, true)
            }
            (None, Some(_)) => (self.pipeline.site_of(doc), None, false),
        };
        Prepared {
            exact,
            sketch: None,
            site,
            site_hash,
            id_hash,
            prefetched,
        }
    }

    /// The verdict for `doc` against the stored documents; stores nothing. A stored
    /// document with `doc`'s id is never a candidate (an update is judged against the
    /// others; see the module docs), but the same text under the same id is its own
    /// exact duplicate. Under [`SyncPolicy::Always`], a verdict waits until what it
    /// read is on the disk. An error: the state failed (a panic while it was changed,
    /// or a failed write or flush, after which memory may hold a document the disk does
    /// not), until it is reopened.
    pub fn check(&self, doc: &Document) -> Result<Verdict> {
        let (v, ticket) = self.check_unflushed(doc, self.prepare(doc))?;
        self.durable(ticket)?;
        Ok(v)
    }

    /// [`check`](Self::check) of `doc`, prepared as `prepared`, but for the wait: the
    /// verdict and the ticket to wait for before answering.
    fn check_unflushed(
        &self,
        doc: &Document,
        prepared: std::result::Result<Prepared, RejectReason>,
    ) -> Result<(Verdict, Option<append::Ticket>)> {
        let mut prepared = prepared;
        loop {
            let p = match prepared {
                Err(reason) => return Ok((Verdict::Rejected { reason }, None)),
                Ok(p) => p,
            };
            {
                let st = self.read()?;
                if let Some(why) = self.failed.get() {
                    // Its memory may hold a document whose entry is not on the disk.
                    return Err(Error::Failed(why.clone()));
                }
                st.prefetch(&p, p.sketch.as_ref());
                let own = st.slot_of(&doc.id, p.id_hash);
                if let Some(v) = self.verdict(&st, &p, own, None) {
                    let ticket = st.log.as_ref().and_then(|l| l.ticket());
                    return Ok((v, ticket));
                }
            }
            // Prepared without a sketch for an exact fingerprint that is gone.
            prepared = self.prepare_full(doc);
        }
    }

    /// Stores `doc` whatever it duplicates (an id already stored is replaced) and
    /// returns the verdict it had before (judged against the other stored documents);
    /// a rejected document is not stored. An error is a failure to log the change
    /// (nothing was applied, and the state takes no more changes until reopened).
    pub fn insert(&self, doc: &Document) -> Result<Verdict> {
        let (v, ticket) = self.insert_unflushed(doc, self.prepare_full(doc))?;
        self.durable(ticket)?;
        Ok(v)
    }

    /// [`insert`](Self::insert) of `doc`, prepared in full as `prepared`, but for the
    /// wait: the verdict and the ticket to wait for before answering.
    fn insert_unflushed(
        &self,
        doc: &Document,
        prepared: std::result::Result<Prepared, RejectReason>,
    ) -> Result<(Verdict, Option<append::Ticket>)> {
        let mut p = match prepared {
            Err(reason) => return Ok((Verdict::Rejected { reason }, None)),
            Ok(p) => p,
        };
        let sketch = match p.sketch.take() {
            Some(sketch) => sketch,
            None => match self.prepare_whole(doc) {
                Err(reason) => return Ok((Verdict::Rejected { reason }, None)),
                Ok((whole, sketch)) => {
                    p = whole;
                    sketch
                }
            },
        };
        let mut st = self.write()?;
        st.prefetch(&p, Some(&sketch));
        let (old, id_end) = st.walk_id(&doc.id, p.id_hash);
        let mut walked = std::mem::take(&mut st.walked);
        walked.id = Some(id_end);
        let v = self.verdict_whole(&st, &p, &sketch, old, Some(&mut walked));
        let logged = self
            .log_insert(&mut st, &doc.id, &p, &sketch)
            .and_then(|t| {
                self.store(&mut st, &doc.id, &p, &sketch, old, Some(&walked))?;
                Ok(t)
            });
        st.walked = walked;
        drop(st);
        Ok((v, self.settle(logged)?))
    }

    /// Checks `doc` and stores it when it is new, atomically: of two racing
    /// near-duplicates, one is new and the other its duplicate. A document whose id is
    /// already stored with the same exact fingerprint is a retry: [`Verdict::New`],
    /// nothing changes (so a client may resend what it got no answer for). With other
    /// text, it is an update (module docs): judged against the other stored documents,
    /// it replaces its earlier version when new, and its earlier version is removed
    /// when it duplicates another. An error is a failure to log the change (nothing was
    /// applied, and the state takes no more changes until reopened).
    pub fn check_and_insert(&self, doc: &Document) -> Result<Verdict> {
        match self.prepare(doc) {
            Err(reason) => Ok(Verdict::Rejected { reason }),
            Ok(p) => {
                let (v, ticket) = self.check_and_insert_unflushed(doc, p)?;
                self.durable(ticket)?;
                Ok(v)
            }
        }
    }

    /// [`check`](Self::check) of each document of `docs`, in order, as
    /// [`check_and_insert_many`](Self::check_and_insert_many) does it: sketched first on
    /// the pipeline's threads, one wait for the disk for the whole batch.
    pub fn check_many(&self, docs: &[Document]) -> Vec<Result<Verdict>> {
        self.many(Op::Check, docs)
    }

    /// [`insert`](Self::insert) of each document of `docs`, in order, as
    /// [`check_and_insert_many`](Self::check_and_insert_many) does it: sketched first on
    /// the pipeline's threads, one wait for the disk for the whole batch.
    pub fn insert_many(&self, docs: &[Document]) -> Vec<Result<Verdict>> {
        self.many(Op::Insert, docs)
    }

    /// [`check_and_insert`](Self::check_and_insert) of each document of `docs`, in
    /// order, with the documents sketched first on the pipeline's threads: the same
    /// verdicts as those calls one after the other (a document sees the ones before it
    /// in `docs`), for any number of threads. The verdicts come in the order of `docs`,
    /// once every change they made (and every change they read) is on the disk as the
    /// [`SyncPolicy`] says: under [`SyncPolicy::Always`], one wait for the whole batch,
    /// shared with the other threads' (group commit), instead of one per document. At
    /// the first error (a failure to log a change), the rest are not applied and the
    /// vector ends with that error; when the final wait for the disk fails, the vector
    /// is that one error (no verdict of the batch is acknowledged, and the state takes
    /// no more changes until reopened). Other threads' calls may come between two
    /// documents of `docs`, as between two calls. Only the sketching runs in parallel;
    /// with a pipeline of one thread (or a single document), each document is sketched
    /// on the calling thread just before it is checked.
    pub fn check_and_insert_many(&self, docs: &[Document]) -> Vec<Result<Verdict>> {
        self.many(Op::CheckAndInsert, docs)
    }

    /// One of the batch calls: `op` for each document of `docs` (see
    /// [`check_and_insert_many`](Self::check_and_insert_many)).
    fn many(&self, op: Op, docs: &[Document]) -> Vec<Result<Verdict>> {
        use rayon::prelude::*;
        // How `op` prepares a document: in full for an insert (it stores the sketch
        // whatever the verdict); with the cells asked for only one at a time.
        let prepare = |doc: &Document, one: bool| match op {
            Op::Insert => self.prepare_full(doc),
            _ => self.prepare_with(doc, one),
        };
        let parallel = docs.len() >= 2 && self.pipeline.threads() > 1;
        let mut ahead = if parallel {
            let prepared: Vec<std::result::Result<Prepared, RejectReason>> =
                self.pipeline.install(|| {
                    docs.par_iter()
                        .with_min_len(4)
                        // The cells are asked for under the lock, one document at a
                        // time: the state changes between.
                        .map(|doc| prepare(doc, false))
                        .collect()
                });
            prepared.into_iter()
        } else {
            Vec::new().into_iter()
        };
        let mut pending: Vec<append::Ticket> = Vec::new();
        let mut out = Vec::with_capacity(docs.len());
        for doc in docs {
            let p = match ahead.next() {
                Some(p) => p,
                None => prepare(doc, true),
            };
            let done = match op {
                Op::Check => self.check_unflushed(doc, p),
                Op::Insert => self.insert_unflushed(doc, p),
                Op::CheckAndInsert => match p {
                    Err(reason) => Ok((Verdict::Rejected { reason }, None)),
                    Ok(p) => self.check_and_insert_unflushed(doc, p),
                },
            };
            match done {
                Ok((v, ticket)) => {
                    out.push(Ok(v));
                    if let Some(t) = ticket {
                        pending.retain(|old| !t.covers(old));
                        if !pending.iter().any(|old| old.covers(&t)) {
                            pending.push(t);
                        }
                    }
                }
                Err(e) => {
                    out.push(Err(e));
                    break;
                }
            }
        }
        for t in pending {
            if let Err(e) = self.durable(Some(t)) {
                return vec![Err(e)];
            }
        }
        out
    }

    /// The locked part of [`check_and_insert`](Self::check_and_insert), for `doc`
    /// prepared as `p`: the verdict and the ticket to wait for before answering (the
    /// wait is the caller's, outside the lock, so that threads share flushes).
    /// (The lock is let go and the document prepared again in full when it was
    /// prepared without a sketch for an exact fingerprint no longer stored.)
    fn check_and_insert_unflushed(
        &self,
        doc: &Document,
        p: Prepared,
    ) -> Result<(Verdict, Option<append::Ticket>)> {
        let mut p = p;
        loop {
            if let Some(v) = self.check_and_insert_locked(doc, &p)? {
                return Ok(v);
            }
            p = match self.prepare_full(doc) {
                Err(reason) => return Ok((Verdict::Rejected { reason }, None)),
                Ok(p) => p,
            };
        }
    }

    /// [`check_and_insert_unflushed`](Self::check_and_insert_unflushed) under one write
    /// lock: the verdict and the ticket to wait for before answering; `None` (nothing
    /// done) when `p` has no sketch and the verdict needs it.
    #[allow(clippy::type_complexity)]
    fn check_and_insert_locked(
        &self,
        doc: &Document,
        p: &Prepared,
    ) -> Result<Option<(Verdict, Option<append::Ticket>)>> {
        let mut st = self.write()?;
        st.prefetch(p, p.sketch.as_ref());
        let (old, id_end) = st.walk_id(&doc.id, p.id_hash);
        if let Some(slot) = old {
            if st.sketches.exact_fingerprints()[slot as usize] == p.exact {
                let ticket = st.log.as_ref().and_then(|l| l.ticket());
                return Ok(Some((Verdict::New, ticket)));
            }
        }
        let mut walked = std::mem::take(&mut st.walked);
        walked.id = Some(id_end);
        let v = self.verdict(&st, p, old, Some(&mut walked));
        let logged = match (&v, &p.sketch, old) {
            (Some(Verdict::New), Some(sketch), _) => {
                self.log_insert(&mut st, &doc.id, p, sketch).and_then(|t| {
                    self.store(&mut st, &doc.id, p, sketch, old, Some(&walked))?;
                    Ok(t)
                })
            }
            // An update that duplicates another document: its earlier version goes.
            (Some(_), _, Some(slot)) => self.log_remove(&mut st, &doc.id, slot),
            _ => Ok(None),
        };
        st.walked = walked;
        let Some(v) = v else { return Ok(None) };
        let ticket = self.settle(logged)?;
        let ticket = ticket.or_else(|| st.log.as_ref().and_then(|l| l.ticket()));
        Ok(Some((v, ticket)))
    }

    /// Removes the document `id`; false when it is not stored. An error is a failure to
    /// log the change (nothing was applied, and the state takes no more changes until
    /// reopened).
    pub fn remove(&self, id: &str) -> Result<bool> {
        let mut st = self.write()?;
        let Some(slot) = st.slot_of(id, id_hash(id)) else {
            return Ok(false);
        };
        let logged = self.log_remove(&mut st, id, slot);
        drop(st);
        self.durable(self.settle(logged)?)?;
        Ok(true)
    }

    /// Logs the removal of `id`, stored in `slot`, then takes it out.
    fn log_remove(&self, st: &mut State, id: &str, slot: u32) -> Result<Option<append::Ticket>> {
        let ticket = match st.log.as_mut() {
            Some(log) => log.remove(id)?,
            None => None,
        };
        self.unstore(st, slot);
        Ok(ticket)
    }

    /// Logs the insert of `id`; the ticket to wait for before acknowledging it.
    fn log_insert(
        &self,
        st: &mut State,
        id: &str,
        p: &Prepared,
        sketch: &Sketch,
    ) -> Result<Option<append::Ticket>> {
        // Checked before anything is logged, so that what is logged can be stored.
        if st.ids.len() >= MAX_SLOTS {
            return Err(too_many(st.ids.len()));
        }
        if id.len() > st.ids.max_len() {
            return Err(too_long_id(id.len()));
        }
        // The tables' rebuilds, if the new entry needs any, before anything is logged:
        // what is logged is then stored without asking for memory a rebuild could be
        // refused (and a refusal here changes nothing).
        st.make_room(p, sketch)
            .map_err(|e| Error::OutOfMemory(e.to_string()))?;
        match st.log.as_mut() {
            Some(log) => log.insert(id, p.site.as_deref(), sketch.as_ref()),
            None => Ok(None),
        }
    }

    /// Takes the live `slot` out of every table.
    fn unstore(&self, st: &mut State, slot: u32) {
        st.live -= 1;
        let h = id_hash(st.id(slot));
        st.by_id.remove(h, slot);
        let e = st.sketches.exact_fingerprints()[slot as usize];
        st.exact.remove(exact_hash(e), slot);
        st.postings.remove(slot, &st.sketches);
    }

    /// Stores a document, prepared as `p` with `sketch`, in a new slot, replacing `old`,
    /// the live slot of its id if any (the caller looked it up); `walked`, what the
    /// check of the document just before found, if there was one. (Taking `old` out
    /// changes the lists the check walked, so then the walks are made again.)
    fn store(
        &self,
        st: &mut State,
        id: &str,
        p: &Prepared,
        sketch: &Sketch,
        old: Option<u32>,
        walked: Option<&Walked>,
    ) -> Result<()> {
        let walked = walked.filter(|_| old.is_none());
        if let Some(old) = old {
            self.unstore(st, old);
        }
        // Fewer than `MAX_SLOTS` (checked by `log_insert` and `open`).
        let slot = st.ids.len() as u32;
        st.ids.push(id);
        let site = p.site.as_deref().map_or(NO_SITE, |name| {
            let h = p.site_hash(&st.site_names, name);
            st.site_names.intern_hashed(name, h)
        });
        st.sites.push(site);
        st.sketches.push(sketch);
        let State {
            ids,
            by_id,
            exact,
            sketches,
            postings,
            scratch,
            ..
        } = st;
        let eh = exact_hash(sketch.exact);
        match walked {
            Some(Walked {
                id: Some(id_end),
                exact: Some(exact_end),
                postings: lists,
            }) => {
                by_id.insert_at(*id_end, p.id_hash, slot, stored_id_hash(ids), scratch)?;
                exact.insert_at(*exact_end, eh, slot, stored_exact_hash(sketches), scratch)?;
                postings.push_at(slot, sketches, lists, scratch)?;
            }
            _ => {
                by_id.insert(p.id_hash, slot, stored_id_hash(ids), scratch)?;
                exact.insert(eh, slot, stored_exact_hash(sketches), scratch)?;
                postings.push(slot, sketches, scratch)?;
            }
        }
        st.live += 1;
        Ok(())
    }

    /// The verdict for `p` against the stored documents other than `own` (the live
    /// slot of its id, if any); where the walks of the exact fingerprint's and the
    /// posting lists' tables ended goes to `walked`, if given (all of them for a new
    /// document). `None` when `p` has no sketch and no stored document has its exact
    /// fingerprint (`walked` then means nothing).
    fn verdict(
        &self,
        st: &State,
        p: &Prepared,
        own: Option<u32>,
        walked: Option<&mut Walked>,
    ) -> Option<Verdict> {
        match &p.sketch {
            Some(sketch) => Some(self.verdict_whole(st, p, sketch, own, walked)),
            None => Self::exact_verdict(st, p.exact, walked),
        }
    }

    /// [`verdict`](Self::verdict) for `p` sketched whole as `sketch`.
    fn verdict_whole(
        &self,
        st: &State,
        p: &Prepared,
        sketch: &Sketch,
        own: Option<u32>,
        mut walked: Option<&mut Walked>,
    ) -> Verdict {
        Self::exact_verdict(st, p.exact, walked.as_deref_mut())
            .unwrap_or_else(|| self.near_verdict(st, p, sketch, own, walked))
    }

    /// [`Verdict::Exact`] when a stored document has the exact fingerprint `exact`;
    /// where the walk of its table ended goes to `walked`.
    fn exact_verdict(st: &State, exact: u128, walked: Option<&mut Walked>) -> Option<Verdict> {
        let (first, end) = st.first_exact(exact);
        if let Some(w) = walked {
            w.exact = Some(end);
            w.postings.clear();
        }
        first.map(|first| Verdict::Exact {
            of: st.id(first).to_string(),
        })
    }

    /// The verdict for `p`, sketched as `sketch`, when no stored document has its exact
    /// fingerprint: near-duplicate of the first candidate the rule accepts (never
    /// `own`, the earlier version of an update), or new; where the posting lists' walks
    /// ended goes to `walked`.
    fn near_verdict(
        &self,
        st: &State,
        p: &Prepared,
        sketch: &Sketch,
        own: Option<u32>,
        mut walked: Option<&mut Walked>,
    ) -> Verdict {
        let mut cand: Vec<u32> = Vec::new();
        st.postings.members(
            &sketch.supershingles,
            &st.sketches,
            &mut cand,
            |list| {
                if let Some(w) = walked.as_deref_mut() {
                    w.postings.push(list);
                }
            },
            |s| st.prefetch_judged(s),
        );
        cand.sort_unstable();
        cand.dedup();
        let me = sketch.as_ref();
        // The document's site by number: `Some(None)` for a site no stored document
        // has (a class by numbers is the class by names).
        let site = p
            .site
            .as_deref()
            .map(|name| st.site_names.find(name, p.site_hash(&st.site_names, name)));
        for slot in cand.into_iter().filter(|&s| Some(s) != own) {
            let s = st.sites[slot as usize];
            let class = match site {
                _ if s == NO_SITE => PairClass::Unknown,
                None => PairClass::Unknown,
                Some(Some(mine)) if mine == s => PairClass::SameSite,
                Some(_) => PairClass::CrossSite,
            };
            let j = self
                .pipeline
                .rule()
                .judge(class, st.sketches.get(slot as usize), me);
            if j.near_duplicate {
                return Verdict::Near {
                    of: st.id(slot).to_string(),
                    judgement: j,
                };
            }
        }
        Verdict::New
    }
}

/// The deduper's [`SketchHook`]: as a document is sketched, asks for the cells of its
/// lookups, each as soon as it is known (so the cache misses overlap the rest of the
/// sketching): the id's and the exact fingerprint's once the terms are known, the
/// posting lists' once the supershingles are, before the projections; and with
/// `early`, stops the sketch at an exact fingerprint stored. The state is read under a
/// read lock taken only when it is free (never waited for), at each step.
struct Ahead<'a> {
    state: &'a RwLock<State>,
    /// The document's id.
    id: &'a str,
    /// [`id_hash`] of `id`, once computed (after the terms: by then the id's bytes,
    /// asked for before the sketching, are in the cache).
    id_hash: Option<u64>,
    /// The exact fingerprint, once told.
    exact: u128,
    /// Ask for the cells.
    prefetch: bool,
    /// Stop at an exact fingerprint stored.
    early: bool,
    /// Every cell a check reads first was asked for.
    asked: bool,
}

impl<'a> Ahead<'a> {
    /// The hook for sketching `doc` against `state`, the id's bytes asked for at once
    /// (the document may be out of the cache; its id is first read after the terms).
    fn new(state: &'a RwLock<State>, doc: &'a Document, prefetch: bool, early: bool) -> Self {
        table::prefetch_bytes(doc.id.as_bytes());
        Ahead {
            state,
            id: &doc.id,
            id_hash: None,
            exact: 0,
            prefetch,
            early,
            asked: false,
        }
    }
}

impl SketchHook for Ahead<'_> {
    fn exact(&mut self, exact: u128) {
        self.exact = exact;
        let h = id_hash(self.id);
        self.id_hash = Some(h);
        if self.prefetch || self.early {
            if let Ok(st) = self.state.try_read() {
                st.by_id.prefetch(h);
                st.exact.prefetch(exact_hash(exact));
                self.asked = self.prefetch;
            }
        }
    }

    fn stop(&mut self) -> bool {
        self.early
            && self
                .state
                .try_read()
                .is_ok_and(|st| st.first_exact(self.exact).0.is_some())
    }

    fn supershingles(&mut self, ss: &[u64]) {
        if self.prefetch {
            match self.state.try_read() {
                Ok(st) => st.postings.prefetch(ss),
                Err(_) => self.asked = false,
            }
        }
    }
}

struct Prepared {
    /// The exact fingerprint.
    exact: u128,
    /// The sketch (with `exact`); none when a stored document had the exact
    /// fingerprint as the document was sketched ([`Deduper::prepare`]).
    sketch: Option<Sketch>,
    site: Option<String>,
    /// [`SiteNames::hash`] of the site, if computed yet.
    site_hash: Option<u64>,
    /// [`id_hash`] of the document's id.
    id_hash: u64,
    /// The lookups' first cells were asked for.
    prefetched: bool,
}

impl Prepared {
    /// The hash of the site `name` in `names`: the one `prepare` computed, or computed
    /// now (`prepare` could not read the state).
    fn site_hash(&self, names: &SiteNames, name: &str) -> u64 {
        self.site_hash.unwrap_or_else(|| names.hash(name))
    }
}

#[cfg(test)]
mod tests {
    use super::{Deduper, Verdict};
    use crate::{Document, Pipeline};

    /// A document prepared without a sketch (a stored document had its exact
    /// fingerprint) whose twin is removed before the lock is taken is prepared again
    /// in full: `check` and `check_and_insert` call it new, and it is stored whole (the
    /// batch sketch, found as a near-duplicate's match).
    #[test]
    fn an_exact_twin_gone_before_the_lock_sends_the_document_back_to_be_sketched() {
        let d = Deduper::new(Pipeline::builder().build().unwrap()).unwrap();
        // 2,000 distinct terms: one more is a near-duplicate (about 3 Charikar bits apart).
        let text: String = (0..2000).map(|i| format!("t{i} ")).collect();
        let a = Document::text("a", text.clone());
        let b = Document::text("b", text.clone());
        assert_eq!(d.check_and_insert(&a).unwrap(), Verdict::New);
        let (p, q) = (d.prepare(&b).unwrap(), d.prepare(&b).unwrap());
        assert!(p.sketch.is_none() && q.sketch.is_none(), "stopped early");
        assert_eq!(
            d.check_unflushed(&b, Ok(q)).unwrap().0,
            Verdict::Exact { of: "a".into() }
        );
        let q = d.prepare(&b).unwrap();
        assert!(d.remove("a").unwrap());
        assert_eq!(d.check_unflushed(&b, Ok(q)).unwrap().0, Verdict::New);
        assert_eq!(d.check_and_insert_unflushed(&b, p).unwrap().0, Verdict::New);
        assert_eq!(d.len(), 1);
        let (want, _) = d.pipeline().sketch_record(&b).unwrap();
        assert_eq!(d.read().unwrap().sketches.get(1).to_owned(), want);
        let near = Document::text("n", format!("{text}one"));
        match d.check(&near).unwrap() {
            Verdict::Near { of, .. } => assert_eq!(of, "b"),
            v => panic!("expected a near-duplicate of b, got {v:?}"),
        }
    }

    /// A panic while the state is being changed (a rebuild, say) leaves it refusing
    /// every call with an error, never carrying on over half-rebuilt tables.
    #[test]
    fn a_panic_while_changing_the_state_is_an_error_not_silence() {
        let d = Deduper::new(Pipeline::builder().build().unwrap()).unwrap();
        let a = Document::text("a", "some words to store before the panic");
        assert_eq!(d.check_and_insert(&a).unwrap(), Verdict::New);
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let _held = d.state.write().unwrap();
                panic!("a rebuild went wrong");
            })
            .join()
        });
        let b = Document::text("b", "other words, sent after the panic");
        assert!(matches!(
            d.check_and_insert(&b),
            Err(crate::Error::Failed(_))
        ));
        assert!(matches!(d.check(&b), Err(crate::Error::Failed(_))));
        assert!(matches!(d.remove("a"), Err(crate::Error::Failed(_))));
        assert!(d.failure().is_some());
    }

    /// A batch stops at its first error: the documents after it are not applied, and
    /// the vector ends with it, for each of the three batch calls and any number of
    /// threads.
    #[test]
    fn a_batch_ends_with_its_first_error() {
        for threads in [1, 2] {
            let pipeline = Pipeline::builder().threads(Some(threads)).build().unwrap();
            let d = Deduper::new(pipeline).unwrap();
            let docs: Vec<Document> = (0..5)
                .map(|i| Document::text(format!("d{i}"), format!("words of document {i}")))
                .collect();
            assert!(d
                .check_and_insert_many(&docs[..2])
                .iter()
                .all(|v| v.is_ok()));
            let _ = std::thread::scope(|s| {
                s.spawn(|| {
                    let _held = d.state.write().unwrap();
                    panic!("a rebuild went wrong");
                })
                .join()
            });
            for got in [
                d.check_many(&docs),
                d.insert_many(&docs[2..]),
                d.check_and_insert_many(&docs[2..]),
            ] {
                assert_eq!(got.len(), 1, "{threads} threads: {got:?}");
                assert!(matches!(got[0], Err(crate::Error::Failed(_))));
            }
        }
    }
}
