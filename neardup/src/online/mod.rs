//! Online two-stage dedup: is this document new, or a duplicate of one already stored?
//!
//! A [`Deduper`] holds the sketches of the documents it has stored and answers for one
//! document at a time, from many threads, with the verdict of the pipeline's one rule
//! ([`crate::verify::Rule`]: the same presets, strategies and site classes as a batch
//! run):
//!
//! 1. the document is sketched (outside any lock);
//! 2. an equal exact fingerprint among the stored documents makes it an exact duplicate
//!    of the first such document (in insertion order);
//! 3. otherwise its candidates are the stored documents in the posting lists of its
//!    bucket keys (one key per pass of stage one, [`Supershingles::key`]); they are
//!    judged in insertion order and the first near-duplicate is named.
//!
//! **Big posting lists.** A posting list with more than `max_bucket` members (the
//! pipeline's [`BucketLimits`], default 1,000) contributes its first member and its
//! last `window` members (default 8) only, so a check costs at most
//! `passes × (1 + window)` judgements per big list: the online form of the batch
//! big-bucket rule (a star around the first member, each member with its neighbours).
//!
//! **Semantics beside batch `dedup`.** Online, each document is compared with every
//! stored document (the kept ones, with [`Deduper::check_and_insert`]); there is no
//! chaining through clusters. A batch run drops `c` when `c ~ b ~ a` even if `c` and `a`
//! are not near-duplicates; online, `c` is new if `b` was dropped (never stored) and `c`
//! is not a near-duplicate of `a`. So the online kept set can be larger than batch's.
//!
//! [`Deduper::check_and_insert`] is atomic: the check and the insert happen under one
//! write lock, so two racing near-duplicates cannot both come back [`Verdict::New`].

mod postings;
mod state;

pub use state::SyncPolicy;

use crate::candidates::{BucketLimits, Supershingles};
use crate::document::{Document, RejectReason};
use crate::error::{Error, Result};
use crate::persist::sketches::SavedSketches;
use crate::pipeline::Pipeline;
use crate::sketch::{Sketch, Sketches};
use crate::verify::site::SiteNames;
use crate::verify::{Judgement, PairClass};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

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

/// The stored documents: sketches by slot, postings, exact fingerprints.
struct State {
    /// Id by slot (slots of removed documents keep their id and sketch; nothing points
    /// to them any more).
    ids: Vec<Arc<str>>,
    /// Site (interned) by slot.
    sites: Vec<Option<u32>>,
    site_names: SiteNames,
    sketches: Sketches,
    /// Slot of each stored id.
    by_id: HashMap<Arc<str>, u32>,
    /// Stored slots by exact fingerprint (folded; equality checked on the sketches).
    exact: postings::Lists,
    /// Per pass: stored slots by bucket key.
    postings: Vec<postings::Lists>,
    live: usize,
    /// The durable log, for a deduper opened on a directory.
    log: Option<state::Log>,
}

/// The online deduper (see the module docs). Build one from a pipeline with
/// [`Deduper::new`]; share it between threads by reference.
pub struct Deduper {
    pipeline: Pipeline,
    generator: Supershingles,
    passes: usize,
    state: RwLock<State>,
}

impl std::fmt::Debug for Deduper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deduper")
            .field("stage_one", &self.pipeline.describe().0)
            .field("len", &self.len())
            .finish()
    }
}

impl Deduper {
    /// An empty deduper with `pipeline`'s settings. Stage one must be Broder's
    /// supershingles (postings need bucket keys); the high-recall union and boilerplate
    /// removal are batch-only and refused.
    pub fn new(pipeline: Pipeline) -> Result<Deduper> {
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
        let passes = generator.passes(slots);
        let sketches = Sketches::new(pipeline.sketcher().config());
        Ok(Deduper {
            pipeline,
            generator,
            passes,
            state: RwLock::new(State {
                ids: Vec::new(),
                sites: Vec::new(),
                site_names: SiteNames::default(),
                sketches,
                by_id: HashMap::new(),
                exact: postings::Lists::default(),
                postings: vec![postings::Lists::default(); passes],
                live: 0,
                log: None,
            }),
        })
    }

    /// A deduper whose state lives in the directory `dir` (created when missing): the
    /// stored documents of its snapshot and log are restored, a torn last log entry is
    /// dropped, and every change is logged before it is applied or acknowledged, flushed
    /// as `sync` says (see [`SyncPolicy`] for what a crash can lose). The state must
    /// have been made with the same sketch settings.
    pub fn open(dir: &std::path::Path, pipeline: Pipeline, sync: SyncPolicy) -> Result<Deduper> {
        let d = Deduper::new(pipeline)?;
        let (snap, entries, log) = state::open(dir, d.pipeline.sketcher().config(), sync)?;
        {
            let mut st = d.write();
            for (i, id) in snap.ids.iter().enumerate() {
                let p = d.prepared(snap.sketches.get(i).to_owned(), snap.sites[i].clone());
                d.store(&mut st, id, p);
            }
            for e in entries {
                match e {
                    state::Entry::Insert { id, site, sketch } => {
                        let p = d.prepared(sketch, site);
                        d.store(&mut st, &id, p);
                    }
                    state::Entry::Remove { id } => {
                        if let Some(slot) = st.by_id.remove(id.as_str()) {
                            d.unstore(&mut st, slot);
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
        let mut st = self.write();
        if st.log.is_none() {
            return Ok(());
        }
        let cfg = self.pipeline.sketcher().config();
        let mut snap = SavedSketches {
            config: cfg.clone(),
            ids: Vec::with_capacity(st.live),
            sites: Vec::with_capacity(st.live),
            sketches: Sketches::new(cfg),
        };
        for (slot, id) in st.ids.iter().enumerate() {
            if st.by_id.get(id) == Some(&(slot as u32)) {
                snap.ids.push(id.to_string());
                snap.sites
                    .push(st.sites[slot].map(|s| st.site_names.name(s).to_string()));
                snap.sketches.push(&st.sketches.get(slot).to_owned());
            }
        }
        if let Some(log) = st.log.as_mut() {
            log.compact(&snap)?;
        }
        Ok(())
    }

    /// Flushes the log to the disk now (whatever the sync policy).
    pub fn sync(&self) -> Result<()> {
        match self.write().log.as_mut() {
            Some(log) => log.sync(),
            None => Ok(()),
        }
    }

    /// The pipeline whose settings and rule it uses.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Stored documents.
    pub fn len(&self) -> usize {
        self.read().live
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The document's sketch, site and bucket keys, or why it is rejected.
    fn prepare(&self, doc: &Document) -> std::result::Result<Prepared, RejectReason> {
        let (sketch, site) = self.pipeline.sketch_record(doc)?;
        Ok(self.prepared(sketch, site))
    }

    fn prepared(&self, sketch: Sketch, site: Option<String>) -> Prepared {
        let keys = (0..self.passes)
            .map(|p| self.generator.key(p, &sketch.supershingles))
            .collect();
        Prepared { sketch, site, keys }
    }

    /// The verdict for `doc` against the stored documents; stores nothing.
    pub fn check(&self, doc: &Document) -> Verdict {
        match self.prepare(doc) {
            Err(reason) => Verdict::Rejected { reason },
            Ok(p) => self.verdict(&self.read(), &p),
        }
    }

    /// Stores `doc` whatever it duplicates (an id already stored is replaced) and
    /// returns the verdict it had before; a rejected document is not stored. An error is
    /// a failure to log the change (nothing was applied).
    pub fn insert(&self, doc: &Document) -> Result<Verdict> {
        let p = match self.prepare(doc) {
            Err(reason) => return Ok(Verdict::Rejected { reason }),
            Ok(p) => p,
        };
        let mut st = self.write();
        let v = self.verdict(&st, &p);
        self.log_insert(&mut st, &doc.id, &p)?;
        self.store(&mut st, &doc.id, p);
        Ok(v)
    }

    /// Checks `doc` and stores it when it is new, atomically: of two racing
    /// near-duplicates, one is new and the other its duplicate. A document whose id is
    /// already stored with the same exact fingerprint is a retry: [`Verdict::New`],
    /// nothing changes (so a client may resend what it got no answer for). An error is
    /// a failure to log the change (nothing was applied).
    pub fn check_and_insert(&self, doc: &Document) -> Result<Verdict> {
        let p = match self.prepare(doc) {
            Err(reason) => return Ok(Verdict::Rejected { reason }),
            Ok(p) => p,
        };
        let mut st = self.write();
        if let Some(&slot) = st.by_id.get(doc.id.as_str()) {
            if st.sketches.get(slot as usize).exact == p.sketch.exact {
                return Ok(Verdict::New);
            }
        }
        let v = self.verdict(&st, &p);
        if v == Verdict::New {
            self.log_insert(&mut st, &doc.id, &p)?;
            self.store(&mut st, &doc.id, p);
        }
        Ok(v)
    }

    /// Removes the document `id`; false when it is not stored. An error is a failure to
    /// log the change (nothing was applied).
    pub fn remove(&self, id: &str) -> Result<bool> {
        let mut st = self.write();
        let Some(&slot) = st.by_id.get(id) else {
            return Ok(false);
        };
        if let Some(log) = st.log.as_mut() {
            log.remove(id)?;
        }
        st.by_id.remove(id);
        self.unstore(&mut st, slot);
        Ok(true)
    }

    fn log_insert(&self, st: &mut State, id: &str, p: &Prepared) -> Result<()> {
        if let Some(log) = st.log.as_mut() {
            log.insert(id, p.site.as_deref(), p.sketch.as_ref())?;
        }
        Ok(())
    }

    fn unstore(&self, st: &mut State, slot: u32) {
        st.live -= 1;
        let s = st.sketches.get(slot as usize).to_owned();
        st.exact.remove(fold_exact(s.exact), slot);
        for p in 0..self.passes {
            let key = self.generator.key(p, &s.supershingles);
            st.postings[p].remove(postings::fold(key), slot);
        }
    }

    fn store(&self, st: &mut State, id: &str, p: Prepared) {
        if let Some(old) = st.by_id.remove(id) {
            self.unstore(st, old);
        }
        let slot = st.ids.len() as u32;
        let id: Arc<str> = Arc::from(id);
        st.ids.push(id.clone());
        let site = p.site.map(|name| st.site_names.intern(name));
        st.sites.push(site);
        st.sketches.push(&p.sketch);
        st.by_id.insert(id, slot);
        st.exact.push(fold_exact(p.sketch.exact), slot);
        for (pass, key) in p.keys.into_iter().enumerate() {
            st.postings[pass].push(postings::fold(key), slot);
        }
        st.live += 1;
    }

    fn verdict(&self, st: &State, p: &Prepared) -> Verdict {
        let mut cand: Vec<u32> = Vec::new();
        st.exact
            .members(fold_exact(p.sketch.exact), usize::MAX, 0, &mut cand);
        if let Some(first) = cand
            .iter()
            .copied()
            .filter(|&s| st.sketches.get(s as usize).exact == p.sketch.exact)
            .min()
        {
            return Verdict::Exact {
                of: st.ids[first as usize].to_string(),
            };
        }
        cand.clear();
        let BucketLimits { max_bucket, window } = self.generator.limits;
        for (pass, &key) in p.keys.iter().enumerate() {
            st.postings[pass].members(postings::fold(key), max_bucket, window, &mut cand);
        }
        cand.sort_unstable();
        cand.dedup();
        let me = p.sketch.as_ref();
        let site = p.site.as_deref();
        for slot in cand {
            let other = st.sites[slot as usize].map(|s| st.site_names.name(s));
            let class = PairClass::of(other, site);
            let j = self
                .pipeline
                .rule()
                .judge(class, st.sketches.get(slot as usize), me);
            if j.near_duplicate {
                return Verdict::Near {
                    of: st.ids[slot as usize].to_string(),
                    judgement: j,
                };
            }
        }
        Verdict::New
    }
}

/// The exact fingerprint folded to the 32 bits its lists are keyed by.
fn fold_exact(exact: u128) -> u32 {
    postings::fold((exact ^ (exact >> 64)) as u64)
}

struct Prepared {
    sketch: Sketch,
    site: Option<String>,
    keys: Vec<u64>,
}
