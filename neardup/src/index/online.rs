//! The online index: insert, remove and query one fingerprint at a time, from many
//! threads.

use super::design::{Design, Table};
use crate::error::Result;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::RwLock;

/// A match: the stored id and its distance (≤ k).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Match {
    /// The stored fingerprint's id.
    pub id: u64,
    /// Hamming distance to the query.
    pub distance: u32,
}

#[derive(Debug, Default, Clone)]
struct Inner {
    /// Per table: sorted `(permuted fingerprint, id)`.
    main: Vec<Vec<(u64, u64)>>,
    /// Per table: `dir[b]` = first entry whose top `dir_bits` bits are ≥ `b`
    /// (`2^dir_bits + 1` offsets), so a probe starts with one lookup.
    dirs: Vec<(u32, Vec<u32>)>,
    /// Recent inserts, unsorted: `(fingerprint, id)`.
    delta: Vec<(u64, u64)>,
    /// Removed ids (filtered at query time, dropped at the next merge).
    removed: ahash::AHashSet<u64>,
}

/// The online index: inserts, removals and queries from many threads (`&self`).
///
/// Inserts go to a small unsorted buffer that queries scan linearly; when it exceeds
/// `max(4096, √n)` entries it is sorted and merged into every table (amortized
/// `O(log n)` per insert per table, no full re-sort). Removals are tombstones dropped at
/// the next merge.
#[derive(Debug)]
pub struct SimhashIndex {
    pub(super) design: Design,
    pub(super) tables: Vec<Table>,
    inner: RwLock<Inner>,
}

impl SimhashIndex {
    /// An empty index.
    pub fn new(design: Design) -> Result<Self> {
        design.validate()?;
        let tables = design.tables();
        let inner = Inner {
            main: vec![Vec::new(); tables.len()],
            dirs: vec![(0, Vec::new()); tables.len()],
            ..Default::default()
        };
        Ok(SimhashIndex {
            design,
            tables,
            inner: RwLock::new(inner),
        })
    }

    /// The design.
    pub fn design(&self) -> &Design {
        &self.design
    }

    /// Number of tables.
    pub fn table_count(&self) -> usize {
        self.tables.len()
    }

    /// Stored fingerprints (removed ones excluded). `O(1)` without pending removals;
    /// with some, one pass over the stored ids (a removal of an id that is not stored
    /// changes nothing).
    pub fn len(&self) -> usize {
        let g = self.read();
        let stored = g.main.first().map_or(0, Vec::len) + g.delta.len();
        if g.removed.is_empty() {
            return stored;
        }
        let gone = g
            .main
            .first()
            .into_iter()
            .flatten()
            .map(|&(_, id)| id)
            .chain(g.delta.iter().map(|&(_, id)| id))
            .filter(|id| g.removed.contains(id))
            .count();
        stored - gone
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Bulk load (replaces nothing; appends), sorting each table once.
    pub fn extend(&self, items: impl IntoIterator<Item = (u64, u64)>) {
        let mut g = self.write();
        g.delta.extend(items.into_iter().map(|(id, fp)| (fp, id)));
        self.merge(&mut g);
    }

    /// Stores `fp` under `id` (ids should be unique; a removed id may be reused after
    /// [`compact`](Self::compact)).
    pub fn insert(&self, id: u64, fp: u64) {
        let mut g = self.write();
        g.delta.push((fp, id));
        let n = g.main.first().map_or(0, Vec::len);
        if g.delta.len() > 4096usize.max((n as f64).sqrt() as usize) {
            self.merge(&mut g);
        }
    }

    /// Removes `id` (it no longer matches).
    pub fn remove(&self, id: u64) {
        self.write().removed.insert(id);
    }

    /// Merges pending inserts and drops removed entries now.
    pub fn compact(&self) {
        let mut g = self.write();
        self.merge(&mut g);
    }

    fn merge(&self, g: &mut Inner) {
        let delta = std::mem::take(&mut g.delta);
        let removed = std::mem::take(&mut g.removed);
        let tables = &self.tables;
        let Inner {
            main: mains, dirs, ..
        } = g;
        mains
            .par_iter_mut()
            .zip(dirs.par_iter_mut())
            .enumerate()
            .for_each(|(t, (main, dir))| {
                let mut add: Vec<(u64, u64)> = delta
                    .iter()
                    .map(|&(fp, id)| (tables[t].perm.apply(fp), id))
                    .collect();
                add.sort_unstable();
                let old = std::mem::take(main);
                let mut merged = Vec::with_capacity(old.len() + add.len());
                let (mut i, mut j) = (0, 0);
                while i < old.len() || j < add.len() {
                    let take_old = j >= add.len() || (i < old.len() && old[i] <= add[j]);
                    let e = if take_old {
                        i += 1;
                        old[i - 1]
                    } else {
                        j += 1;
                        add[j - 1]
                    };
                    if !removed.contains(&e.1) {
                        merged.push(e);
                    }
                }
                *main = merged;
                *dir = directory(main, tables[t].prefix);
            });
    }

    /// Every stored fingerprint within distance ≤ k of `fp`, each id once, sorted by
    /// (distance, id).
    pub fn query(&self, fp: u64) -> Vec<Match> {
        let g = self.read();
        self.query_locked(&g, fp)
    }

    fn query_locked(&self, g: &Inner, fp: u64) -> Vec<Match> {
        let k = self.design.k;
        let mut out: Vec<Match> = Vec::new();
        // Two passes so the tables' memory accesses overlap: first every table's
        // permuted query and directory range (independent loads), then the scans.
        let mut probes: Vec<(u64, usize, usize)> = Vec::with_capacity(self.tables.len());
        for (t, table) in self.tables.iter().enumerate() {
            let q = table.perm.apply(fp);
            let main = &g.main[t];
            let (bits, dir) = &g.dirs[t];
            let (from, to) = if *bits == 0 || dir.is_empty() {
                (0, main.len())
            } else {
                let b = (q >> (64 - bits)) as usize;
                (dir[b] as usize, dir[b + 1] as usize)
            };
            probes.push((q, from, to));
        }
        for (t, &(q, from, to)) in probes.iter().enumerate() {
            let shift = 64 - self.tables[t].prefix as u32;
            let (lo, hi) = prefix_range(q, shift);
            let main = &g.main[t];
            let start = from + main[from..to].partition_point(|e| e.0 < lo);
            for e in &main[start..] {
                if e.0 > hi {
                    break;
                }
                let d = (e.0 ^ q).count_ones();
                if d <= k {
                    out.push(Match {
                        id: e.1,
                        distance: d,
                    });
                }
            }
        }
        for &(f, id) in &g.delta {
            let d = (f ^ fp).count_ones();
            if d <= k {
                out.push(Match { id, distance: d });
            }
        }
        if !g.removed.is_empty() {
            out.retain(|m| !g.removed.contains(&m.id));
        }
        out.sort_unstable_by_key(|m| (m.id, m.distance));
        out.dedup_by_key(|m| m.id);
        out.sort_unstable_by_key(|m| (m.distance, m.id));
        out
    }

    /// The crawler loop: the matches of `fp`; when there are none, `fp` is stored under
    /// `id` (atomically with the query).
    pub fn query_or_insert(&self, id: u64, fp: u64) -> Vec<Match> {
        let mut g = self.write();
        let m = self.query_locked(&g, fp);
        if m.is_empty() {
            g.delta.push((fp, id));
            let n = g.main.first().map_or(0, Vec::len);
            if g.delta.len() > 4096usize.max((n as f64).sqrt() as usize) {
                self.merge(&mut g);
            }
        }
        m
    }

    /// All `(id, fingerprint)` stored (after merging), in fingerprint order.
    pub fn entries(&self) -> Vec<(u64, u64)> {
        self.compact();
        let g = self.read();
        let Some(t0) = self.tables.first() else {
            return Vec::new();
        };
        // Table 0's permutation is inverted by re-permuting: find fingerprints from the
        // delta-free main table via an inverse permutation.
        let inv = t0.perm.inverse();
        let mut v: Vec<(u64, u64)> = g.main[0]
            .iter()
            .map(|&(p, id)| (id, inv.apply(p)))
            .collect();
        v.sort_unstable_by_key(|&(id, fp)| (fp, id));
        v
    }
}

/// The probe directory of a sorted table: `2^b + 1` offsets for the top `b` bits,
/// `b = min(prefix, ⌈log2 n⌉, 24)`.
pub(super) fn directory(main: &[(u64, u64)], prefix: u8) -> (u32, Vec<u32>) {
    if main.len() < 1024 || main.len() > u32::MAX as usize {
        return (0, Vec::new());
    }
    let b = (usize::BITS - main.len().leading_zeros())
        .min(prefix as u32)
        .min(24);
    if b == 0 {
        return (0, Vec::new());
    }
    let mut dir = vec![0u32; (1usize << b) + 1];
    let mut i = 0usize;
    for (bucket, slot) in dir.iter_mut().enumerate() {
        while i < main.len() && ((main[i].0 >> (64 - b)) as usize) < bucket {
            i += 1;
        }
        *slot = i as u32;
    }
    (b, dir)
}

#[inline]
pub(super) fn prefix_range(q: u64, shift: u32) -> (u64, u64) {
    if shift >= 64 {
        (0, u64::MAX)
    } else {
        let lo = (q >> shift) << shift;
        (lo, lo | ((1u64 << shift) - 1))
    }
}
