//! Posting lists of supershingles: which stored documents have supershingle `v` in
//! slot `j`?
//!
//! Two documents are stage-one candidates when they agree in at least `r` of their `m'`
//! supershingle slots ([`Supershingles::is_candidate`]). By pigeonhole they then agree
//! in at least one of the first `m' − r + 1` slots, so only those slots are indexed (5
//! tables with the paper's 2 of 6): a document's candidates are the stored documents
//! that share one of these supershingles, and the rule's own candidate test, made on
//! the sketches, keeps those that agree in `r` slots.
//!
//! Each indexed slot is a [`SlotTable`] keyed by the supershingle, which the table does
//! not store: it is read from the stored sketches. **Big lists:** a list that would grow
//! past `max_bucket` members leaves its table for a bounded form that keeps its first
//! member and its last `window` members (the online form of the batch big-bucket rule,
//! a star around the first member and each member with its neighbours); it stays in
//! that form, and a removed member simply leaves it (a removed first member is not
//! replaced). A check then costs at most `1 + window` candidates per big list.
//!
//! [`Supershingles::is_candidate`]: crate::candidates::CandidateGenerator::is_candidate

use super::table::{prefetch_bytes, sorted_entries, Prefetched, RunEnd, Scratch, SlotTable};
use crate::candidates::BucketLimits;
use crate::sketch::hash::mix64;
use crate::sketch::Sketches;
use std::collections::VecDeque;
use std::io;

/// The hash of supershingle `v` in slot `j`.
fn key_hash(j: usize, v: u64) -> u64 {
    mix64(v ^ (j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// What list `j` of a document is keyed by: its supershingle in slot `j`, or, for a
/// banded stage one, its band `j`'s key ([`band_key`](crate::candidates::band_key)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keying {
    /// Slots per band; `None` when lists are keyed by single slots.
    pub(super) band: Option<usize>,
}

impl Keying {
    /// The key of list `j` of a document of supershingles `ss`.
    #[inline]
    pub(super) fn of(self, j: usize, ss: &[u64]) -> u64 {
        match self.band {
            None => ss[j],
            Some(w) => crate::candidates::band_key(j, w, ss),
        }
    }

    /// The slot of the first supershingle list `j`'s key is made of.
    #[inline]
    fn first(self, j: usize) -> usize {
        j * self.band.unwrap_or(1)
    }
}

/// A list past `max_bucket` members, in its bounded form.
#[derive(Debug, Clone)]
struct Big {
    first: Option<u32>,
    recent: VecDeque<u32>,
}

/// What a check's walk of a list in its table found, for an insert right after
/// ([`Postings::push_at`]): the members of the list and where the walk ended.
#[derive(Debug, Clone, Copy)]
pub(super) struct ListEnd {
    members: usize,
    end: RunEnd,
}

/// The posting lists of one indexed slot `j`: small lists in a table, big ones aside.
#[derive(Debug, Default)]
struct SlotLists {
    table: SlotTable,
    big: ahash::AHashMap<u64, Big>,
}

impl SlotLists {
    /// Adds `slot` to its list; `walked` what a check's walk of the list in the table
    /// found, if there was one with no change since.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        keying: Keying,
        j: usize,
        slot: u32,
        sk: &Sketches,
        limits: BucketLimits,
        walked: Option<ListEnd>,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let BucketLimits { max_bucket, window } = limits;
        let v = keying.of(j, sk.supershingles(slot as usize));
        if let Some(b) = self.big.get_mut(&v) {
            b.recent.push_back(slot);
            while b.recent.len() > window {
                b.recent.pop_front();
            }
            return Ok(());
        }
        let h = key_hash(j, v);
        let hash_of = Prefetched(
            |s: u32| key_hash(j, keying.of(j, sk.supershingles(s as usize))),
            |s: u32| {
                prefetch_bytes(bytemuck::bytes_of(
                    &sk.supershingles(s as usize)[keying.first(j)],
                ))
            },
        );
        if let Some(w) = walked.filter(|w| w.members < max_bucket) {
            return self.table.insert_at(w.end, h, slot, hash_of, scratch);
        }
        let same = |s: u32| keying.of(j, sk.supershingles(s as usize)) == v;
        if self
            .table
            .insert_below(h, slot, max_bucket, same, hash_of, scratch)?
        {
            return Ok(());
        }
        // Past the limit: the list leaves the table for its bounded form.
        let mut members = Vec::new();
        self.table.candidates(h, |s| {
            if same(s) {
                members.push(s);
            }
        });
        members.sort_unstable();
        for &s in &members {
            self.table.remove(h, s);
        }
        let keep = window.saturating_sub(1).min(members.len());
        let mut recent: VecDeque<u32> = members[members.len() - keep..].iter().copied().collect();
        if window > 0 {
            recent.push_back(slot);
        }
        let first = members.first().copied();
        self.big.insert(v, Big { first, recent });
        Ok(())
    }

    fn remove(&mut self, keying: Keying, j: usize, slot: u32, sk: &Sketches) {
        let v = keying.of(j, sk.supershingles(slot as usize));
        if let Some(b) = self.big.get_mut(&v) {
            if b.first == Some(slot) {
                b.first = None;
            }
            b.recent.retain(|&s| s != slot);
            return;
        }
        self.table.remove(key_hash(j, v), slot);
    }

    /// Adds the members of the list of `v` to `out`; for a list in the table, what the
    /// walk found. `ask` is told each slot whose stored supershingle is about to be
    /// read (a hint: its sketch may be read next).
    fn members(
        &self,
        keying: Keying,
        j: usize,
        v: u64,
        sk: &Sketches,
        out: &mut Vec<u32>,
        ask: &impl Fn(u32),
    ) -> Option<ListEnd> {
        if let Some(b) = self.big.get(&v) {
            out.extend(b.first);
            out.extend(b.recent.iter().copied());
            return None;
        }
        let before = out.len();
        let end = self.table.candidates(key_hash(j, v), |s| {
            ask(s);
            if keying.of(j, sk.supershingles(s as usize)) == v {
                out.push(s);
            }
        });
        Some(ListEnd {
            members: out.len() - before,
            end,
        })
    }
}

/// The posting lists of the indexed supershingle slots.
#[derive(Debug)]
pub(super) struct Postings {
    slots: Vec<SlotLists>,
    limits: BucketLimits,
    keying: Keying,
}

impl Postings {
    /// Lists over `indexed` slots, sized for `n` documents.
    pub(super) fn new(
        indexed: usize,
        limits: BucketLimits,
        keying: Keying,
        n: usize,
    ) -> io::Result<Self> {
        Ok(Postings {
            slots: (0..indexed)
                .map(|j| {
                    Ok(SlotLists {
                        table: SlotTable::with_capacity(n, j)?,
                        big: ahash::AHashMap::new(),
                    })
                })
                .collect::<io::Result<_>>()?,
            limits,
            keying,
        })
    }

    /// Bytes held (the big lists' few bytes aside).
    pub(super) fn bytes(&self) -> usize {
        self.slots.iter().map(|l| l.table.bytes()).sum()
    }

    /// Makes room in every slot's table for `total` entries with slots up to `max_slot`
    /// (see [`SlotTable::reserve`]).
    pub(super) fn reserve(
        &mut self,
        total: usize,
        max_slot: u32,
        sk: &Sketches,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let keying = self.keying;
        for (j, lists) in self.slots.iter_mut().enumerate() {
            lists.table.reserve(
                total,
                max_slot,
                |s| key_hash(j, keying.of(j, sk.supershingles(s as usize))),
                scratch,
            )?;
        }
        Ok(())
    }

    /// Makes room in the tables of the lists of `ss` (the supershingles of the document
    /// to be stored in `slot`) so that pushing it rebuilds nothing; see
    /// [`SlotTable::make_room`].
    pub(super) fn make_room(
        &mut self,
        slot: u32,
        ss: &[u64],
        sk: &Sketches,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let keying = self.keying;
        // A list in its bounded form takes no cell, but its key's shard may be grown
        // all the same (it would grow soon): one lookup fewer per slot.
        for (j, lists) in self.slots.iter_mut().enumerate() {
            let hash_of = |s: u32| key_hash(j, keying.of(j, sk.supershingles(s as usize)));
            lists
                .table
                .make_room(key_hash(j, keying.of(j, ss)), slot, hash_of, scratch)?;
        }
        Ok(())
    }

    /// Appends the stored document `slot` (its sketch already in `sk`) to its lists; a
    /// rebuild works in `scratch`.
    pub(super) fn push(
        &mut self,
        slot: u32,
        sk: &Sketches,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        for (j, lists) in self.slots.iter_mut().enumerate() {
            lists.push(self.keying, j, slot, sk, self.limits, None, scratch)?;
        }
        Ok(())
    }

    /// [`push`](Self::push), after [`members`](Self::members) of the same supershingles
    /// with nothing changed since, which gave `walked` (one per indexed slot, or none if
    /// the check stopped before the lists): a list in a table is not walked again.
    pub(super) fn push_at(
        &mut self,
        slot: u32,
        sk: &Sketches,
        walked: &[Option<ListEnd>],
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        for (j, lists) in self.slots.iter_mut().enumerate() {
            let w = walked.get(j).copied().flatten();
            lists.push(self.keying, j, slot, sk, self.limits, w, scratch)?;
        }
        Ok(())
    }

    /// The lists of the stored documents `slots` (lists empty before), sized for
    /// `capacity` documents: what [`push`](Self::push) for each slot in order would
    /// give, built at once, each indexed slot's lists on a thread of their own. A slot's
    /// `(hash, slot)` entries are made in slot order (the sketches read in memory
    /// order) and sorted by hash; since the hash is a bijection of the supershingle, a
    /// run of equal hashes is one list, in slot order. A list past `max_bucket` members
    /// takes the bounded form pushing would have left: its first member and its last
    /// `window`. The rest are placed in the table in hash order, that is in memory
    /// order. Holds 32 bytes per document of each slot being built meanwhile.
    pub(super) fn build_all(
        &mut self,
        slots: std::ops::Range<u32>,
        sk: &Sketches,
        capacity: usize,
    ) -> io::Result<()> {
        use rayon::prelude::*;
        let BucketLimits { max_bucket, window } = self.limits;
        let keying = self.keying;
        let max_slot = slots.end.saturating_sub(1);
        self.slots
            .par_iter_mut()
            .enumerate()
            .try_for_each(|(j, lists)| {
                let mut e = sorted_entries(slots.clone(), |slot| {
                    key_hash(j, keying.of(j, sk.supershingles(slot as usize)))
                })?;
                // Small lists are moved to the front, in order; big ones set aside.
                let (mut i, mut kept) = (0, 0);
                while i < e.len() {
                    let h = e[i][0];
                    let mut k = i + 1;
                    while k < e.len() && e[k][0] == h {
                        k += 1;
                    }
                    if k - i > max_bucket {
                        let first = e[i][1] as u32;
                        let recent = e[k - window.min(k - i)..k]
                            .iter()
                            .map(|x| x[1] as u32)
                            .collect();
                        let v = keying.of(j, sk.supershingles(first as usize));
                        lists.big.insert(
                            v,
                            Big {
                                first: Some(first),
                                recent,
                            },
                        );
                    } else {
                        e.copy_within(i..k, kept);
                        kept += k - i;
                    }
                    i = k;
                }
                lists.table = SlotTable::from_entries(capacity, max_slot, &e[..kept], j)?;
                Ok(())
            })
    }

    /// Takes the stored document `slot` (its sketch still in `sk`) out of its lists.
    pub(super) fn remove(&mut self, slot: u32, sk: &Sketches) {
        for (j, lists) in self.slots.iter_mut().enumerate() {
            lists.remove(self.keying, j, slot, sk);
        }
    }

    /// Asks for the home cells of the lists of `ss` ahead of their use (a hint).
    #[inline]
    pub(super) fn prefetch(&self, ss: &[u64]) {
        for (j, lists) in self.slots.iter().enumerate() {
            lists.table.prefetch(key_hash(j, self.keying.of(j, ss)));
        }
    }

    /// Adds to `out` the stored documents that share an indexed supershingle with `ss`
    /// (within the big-list rule); a document may come more than once. What each walk
    /// found goes to `walked`, one per indexed slot, for [`push_at`](Self::push_at);
    /// `ask` is told each stored document whose supershingle a walk is about to compare
    /// (so that the caller can ask for what it reads of a candidate next, while that
    /// comparison waits for its cache miss).
    pub(super) fn members(
        &self,
        ss: &[u64],
        sk: &Sketches,
        out: &mut Vec<u32>,
        mut walked: impl FnMut(Option<ListEnd>),
        ask: impl Fn(u32),
    ) {
        for (j, lists) in self.slots.iter().enumerate() {
            walked(lists.members(self.keying, j, self.keying.of(j, ss), sk, out, &ask));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Postings, Scratch};
    use crate::candidates::BucketLimits;
    use crate::sketch::{Sketch, SketchConfig, Sketches};

    /// The lists against a model (vectors of members per slot and value, with the
    /// big-list rule written out), through random pushes and removals; few distinct
    /// supershingles, so that lists grow past the limit.
    #[test]
    fn lists_equal_a_model() {
        let mut sc = Scratch::default();
        let mut state = 7u64;
        let mut rnd = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let cfg = SketchConfig::default();
        let m = cfg.supershingles;
        let mut sk = Sketches::new(&cfg);
        let limits = BucketLimits {
            max_bucket: 40,
            window: 3,
        };
        let indexed = m - 1;
        let keying = super::Keying { band: None };
        let mut p = Postings::new(indexed, limits, keying, 0).unwrap();
        // Model: per (slot, value), members in insertion order, and whether the list
        // went big (then: first member, last `window` members).
        type Model =
            std::collections::HashMap<(usize, u64), (Vec<u32>, Option<(Option<u32>, Vec<u32>)>)>;
        let mut model: Model = Default::default();
        let mut live = Vec::new();
        for slot in 0..4000u32 {
            let s = Sketch {
                supershingles: (0..m).map(|_| rnd(60)).collect(),
                charikar: vec![0; cfg.charikar_bits / 64],
                simhash: 0,
                exact: 0,
                terms: 1,
                pugh: Vec::new(),
            };
            sk.push(&s);
            if slot % 2 == 0 {
                p.push(slot, &sk, &mut sc).unwrap();
            } else {
                // As a check followed by an insert: the walks' ends reused.
                let (mut walked, mut seen) = (Vec::new(), Vec::new());
                p.members(&s.supershingles, &sk, &mut seen, |w| walked.push(w), |_| {});
                p.push_at(slot, &sk, &walked, &mut sc).unwrap();
            }
            live.push(true);
            for j in 0..indexed {
                let e = model.entry((j, s.supershingles[j])).or_default();
                match &mut e.1 {
                    Some((_, recent)) => {
                        recent.push(slot);
                        if recent.len() > limits.window {
                            recent.remove(0);
                        }
                    }
                    None if e.0.len() >= limits.max_bucket => {
                        let mut recent: Vec<u32> =
                            e.0.iter()
                                .rev()
                                .take(limits.window - 1)
                                .rev()
                                .copied()
                                .collect();
                        recent.push(slot);
                        e.1 = Some((e.0.first().copied(), recent));
                    }
                    None => e.0.push(slot),
                }
            }
            if rnd(4) == 0 {
                let victim = rnd(slot as u64 + 1) as u32;
                if live[victim as usize] {
                    live[victim as usize] = false;
                    p.remove(victim, &sk);
                    for j in 0..indexed {
                        let e = model
                            .get_mut(&(j, keying.of(j, sk.supershingles(victim as usize))))
                            .unwrap();
                        match &mut e.1 {
                            Some((first, recent)) => {
                                if *first == Some(victim) {
                                    *first = None;
                                }
                                recent.retain(|&x| x != victim);
                            }
                            None => e.0.retain(|&x| x != victim),
                        }
                    }
                }
            }
            if slot % 53 == 0 {
                let probe: Vec<u64> = (0..m).map(|_| rnd(60)).collect();
                let mut got = Vec::new();
                p.members(&probe, &sk, &mut got, |_| {}, |_| {});
                let mut want: Vec<u32> = Vec::new();
                for (j, &v) in probe.iter().enumerate().take(indexed) {
                    if let Some(e) = model.get(&(j, v)) {
                        match &e.1 {
                            Some((first, recent)) => {
                                want.extend(first);
                                want.extend(recent);
                            }
                            None => want.extend(&e.0),
                        }
                    }
                }
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "after slot {slot}");
            }
        }
        assert!(
            model.values().any(|e| e.1.is_some()),
            "no list went past the limit: the big-list rule was not exercised"
        );
    }

    /// Lists built in bulk, a thread per indexed slot, equal lists built one push at a
    /// time: big lists (10 values shared by about 150 documents each) and small ones
    /// (1000 values shared by one or a few), with a window smaller and one larger than
    /// the limit.
    #[test]
    fn bulk_building_equals_pushing() {
        let mut sc = Scratch::default();
        let cfg = SketchConfig::default();
        let m = cfg.supershingles;
        let mut sk = Sketches::new(&cfg);
        let mut state = 3u64;
        for _ in 0..3100 {
            let ss = (0..m)
                .map(|_| {
                    state = crate::sketch::hash::mix64(state.wrapping_add(1));
                    if state.is_multiple_of(2) {
                        (state >> 1) % 10
                    } else {
                        100 + (state >> 1) % 1000
                    }
                })
                .collect();
            sk.push(&Sketch {
                supershingles: ss,
                charikar: vec![0; cfg.charikar_bits / 64],
                simhash: 0,
                exact: 0,
                terms: 1,
                pugh: Vec::new(),
            });
        }
        // The members of every value, sorted, as each of the two gives them.
        let same = |one: &Postings, bulk: &Postings, sk: &Sketches, what: &str| {
            for v in (0..10u64).chain(100..1100) {
                let probe = vec![v; m];
                let (mut a, mut b) = (Vec::new(), Vec::new());
                one.members(&probe, sk, &mut a, |_| {}, |_| {});
                bulk.members(&probe, sk, &mut b, |_| {}, |_| {});
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "value {v}, {what}");
            }
        };
        for (max_bucket, window) in [(50, 4), (50, 60), (50, 0), (3, 1), (2, 0)] {
            let limits = BucketLimits { max_bucket, window };
            let what = format!("limits {max_bucket} / {window}");
            let mut one = Postings::new(m, limits, super::Keying { band: None }, 0).unwrap();
            for slot in 0..3000 {
                one.push(slot, &sk, &mut sc).unwrap();
            }
            let mut bulk = Postings::new(m, limits, super::Keying { band: None }, 0).unwrap();
            bulk.build_all(0..3000, &sk, 3000).unwrap();
            same(&one, &bulk, &sk, &what);
            // Both go on taking the documents stored after alike.
            for slot in 3000..3100 {
                one.push(slot, &sk, &mut sc).unwrap();
                bulk.push(slot, &sk, &mut sc).unwrap();
            }
            same(&one, &bulk, &sk, &format!("{what}, after more pushes"));
        }
    }
}
