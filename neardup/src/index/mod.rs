//! The simhash index: permuted sorted tables for Hamming-distance search (Manku, Jain,
//! Das Sarma, WWW 2007 and its patent; seeds 000 and 002).
//!
//! A 64-bit fingerprint `G` is within distance `k` of a query `F` iff
//! `popcount(F ⊕ G) ≤ k` (inclusive). Split the 64 bits into `r > k` blocks: the at most
//! `k` differing bits touch at most `k` blocks, so at least `r − k` blocks are identical.
//! A table per choice of `r − k` "leading" blocks holds every fingerprint permuted so that
//! those blocks come first, sorted; a query probes each table for the entries whose
//! leading `p` bits equal its own and checks the distance of each. Designs may recurse
//! (split the remaining bits again), which multiplies tables and lengthens `p`.
//!
//! Named designs for `k = 3` (seed 000/002): [`Design::k3_20`] (6 blocks
//! 11,11,11,11,10,10, choose 3: 20 tables, p = 31–33), [`Design::k3_10`] (5 blocks,
//! choose 2: 10 tables, p = 25–26), [`Design::k3_4`] (4 × 16, choose 1: 4 tables,
//! p = 16), [`Design::k3_16`] (4 × 16 then 4 × 12: 16 tables, p = 28).
//! [`Design::auto`] evaluates the recursion
//! `X(f,k,d) = 1 if d < τ, else min over r > k of C(r,k)·X(fk/r, k, d − (r−k)f/r)` for an
//! expected `2^d` fingerprints and at most `2^τ` entries scanned per probe.
//!
//! Every match is reported once, with its distance; identical fingerprints match at
//! distance 0; a permutation never changes a Hamming distance, so distances are computed
//! on the permuted values.

use crate::error::{Error, Result};
use crate::persist::container::{self, Kind, Parts};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::RwLock;

pub mod compressed;
pub use compressed::{CompressedIndex, CompressedTable};

/// A bit permutation of a 64-bit value as contiguous runs: output bits
/// `[dst, dst+len)` (counted from the most significant bit) come from input bits
/// `[src, src+len)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Runs", into = "Runs")]
pub struct Permutation {
    runs: Vec<(u8, u8, u8)>,
    /// Per run: right shift, mask, left shift (branch-free application).
    ops: Vec<(u32, u64, u32)>,
}

/// The serialized form of a [`Permutation`]: its runs `(src, dst, len)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Runs {
    runs: Vec<(u8, u8, u8)>,
}

impl From<Runs> for Permutation {
    fn from(r: Runs) -> Self {
        Permutation::from_runs(r.runs)
    }
}

impl From<Permutation> for Runs {
    fn from(p: Permutation) -> Self {
        Runs { runs: p.runs }
    }
}

impl Permutation {
    fn from_runs(runs: Vec<(u8, u8, u8)>) -> Self {
        let ops = runs
            .iter()
            .filter(|&&(src, dst, len)| {
                len > 0 && src as u32 + len as u32 <= 64 && dst as u32 + len as u32 <= 64
            })
            .map(|&(src, dst, len)| {
                let mask = if len >= 64 {
                    u64::MAX
                } else {
                    (1u64 << len) - 1
                };
                (
                    64 - src as u32 - len as u32,
                    mask,
                    64 - dst as u32 - len as u32,
                )
            })
            .collect();
        Permutation { runs, ops }
    }

    /// From the input bit position (MSB = 0) of each output position.
    fn from_positions(pos: &[u8]) -> Self {
        let mut runs: Vec<(u8, u8, u8)> = Vec::new();
        for (dst, &src) in pos.iter().enumerate() {
            match runs.last_mut() {
                Some((s, d, l)) if *s + *l == src && *d + *l == dst as u8 => *l += 1,
                _ => runs.push((src, dst as u8, 1)),
            }
        }
        Permutation::from_runs(runs)
    }

    /// Applies the permutation.
    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        self.ops
            .iter()
            .fold(0u64, |out, &(r, mask, l)| out | ((x >> r) & mask) << l)
    }
}

/// One table of a design: a permutation and the number of leading bits probed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// The permutation applied to every fingerprint.
    pub perm: Permutation,
    /// Leading bits that must agree exactly (the probe prefix).
    pub prefix: u8,
}

/// A table design: blocks per level (each level splits the bits left over by the
/// previous one into `r` near-equal blocks and leads with `r − k` of them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Design {
    /// Maximum distance found, inclusive.
    pub k: u32,
    /// `r` per level.
    pub levels: Vec<usize>,
}

impl Design {
    /// The name of the default design, `k3-10` (k = 3 in 10 tables).
    pub const DEFAULT_NAME: &'static str = "k3-10";

    /// 6 blocks (11,11,11,11,10,10), choose 3: 20 tables, prefixes of 31–33 bits.
    pub fn k3_20() -> Design {
        Design {
            k: 3,
            levels: vec![6],
        }
    }
    /// 5 blocks (13,13,13,13,12), choose 2: 10 tables, prefixes of 25–26 bits.
    pub fn k3_10() -> Design {
        Design {
            k: 3,
            levels: vec![5],
        }
    }
    /// 4 blocks of 16, choose 1: 4 tables, prefixes of 16 bits.
    pub fn k3_4() -> Design {
        Design {
            k: 3,
            levels: vec![4],
        }
    }
    /// 4 blocks of 16 choose 1, then the remaining 48 bits as 4 blocks of 12 choose 1:
    /// 16 tables, prefixes of 28 bits.
    pub fn k3_16() -> Design {
        Design {
            k: 3,
            levels: vec![4, 4],
        }
    }

    /// A design by name: `k3-20`, `k3-16`, `k3-10`, `k3-4`, or `K:R1[,R2…]`
    /// (e.g. `4:6` or `3:4,4`).
    pub fn named(name: &str) -> Result<Design> {
        let d = match name {
            "k3-20" => Design::k3_20(),
            "k3-16" => Design::k3_16(),
            "k3-10" => Design::k3_10(),
            "k3-4" => Design::k3_4(),
            _ => {
                let bad = || {
                    Error::Config(format!(
                        "unknown index design {name:?} (k3-20, k3-16, k3-10, k3-4 or K:R1,R2…)"
                    ))
                };
                let (k, levels) = name.split_once(':').ok_or_else(bad)?;
                Design {
                    k: k.parse().map_err(|_| bad())?,
                    levels: levels
                        .split(',')
                        .map(|r| r.parse().map_err(|_| bad()))
                        .collect::<Result<_>>()?,
                }
            }
        };
        d.validate()?;
        Ok(d)
    }

    /// Checks `1 ≤ k ≤ 16`, `k < r ≤ bits left` at every level, at most
    /// [`MAX_LEVELS`] levels, and at most [`MAX_TABLES`] tables in all (each table holds
    /// every fingerprint once: 16 bytes per fingerprint and table in memory), before any
    /// table is made.
    pub fn validate(&self) -> Result<()> {
        crate::error::check_range("index k", self.k as u64, 1, 16)?;
        if self.levels.is_empty() {
            return Err(Error::Config(
                "an index design needs at least one level".into(),
            ));
        }
        crate::error::check_range(
            "index levels",
            self.levels.len() as u64,
            1,
            MAX_LEVELS as u64,
        )?;
        let mut bits = 64usize;
        for &r in &self.levels {
            crate::error::check_range("index blocks", r as u64, self.k as u64 + 1, bits as u64)?;
            bits -= (r - self.k as usize) * (bits / r);
            if bits == 0 {
                return Err(Error::Config("index design leaves no bits".into()));
            }
        }
        let tables = self.table_count();
        if tables > MAX_TABLES as u128 {
            return Err(Error::Config(format!(
                "index design k = {}, blocks {:?} has {tables} tables (at most {MAX_TABLES}: \
                 each holds every fingerprint, 16 bytes apiece)",
                self.k, self.levels
            )));
        }
        Ok(())
    }

    /// The number of tables, `Π C(r, k)` over the levels, computed without making them
    /// (saturating).
    pub fn table_count(&self) -> u128 {
        self.levels.iter().fold(1u128, |t, &r| {
            t.saturating_mul(binomial(r, self.k as usize))
        })
    }

    /// The tables of the design.
    pub fn tables(&self) -> Vec<Table> {
        let mut out = Vec::new();
        let all: Vec<u8> = (0..64).collect();
        self.expand(0, &all, Vec::new(), &mut out);
        out
    }

    fn expand(&self, level: usize, rest: &[u8], lead: Vec<u8>, out: &mut Vec<Table>) {
        if level == self.levels.len() {
            let prefix = lead.len() as u8;
            let mut pos = lead;
            pos.extend_from_slice(rest);
            out.push(Table {
                perm: Permutation::from_positions(&pos),
                prefix,
            });
            return;
        }
        let r = self.levels[level];
        let n = rest.len();
        // Near-equal blocks, the larger first (64 = 11,11,11,11,10,10).
        let (base, extra) = (n / r, n % r);
        let mut blocks = Vec::with_capacity(r);
        let mut at = 0;
        for b in 0..r {
            let len = base + usize::from(b < extra);
            blocks.push(&rest[at..at + len]);
            at += len;
        }
        let choose = r - self.k as usize;
        for subset in combinations(r, choose) {
            let mut l = lead.clone();
            let mut remaining = Vec::with_capacity(n);
            for (b, block) in blocks.iter().enumerate() {
                if subset.contains(&b) {
                    l.extend_from_slice(block);
                } else {
                    remaining.extend_from_slice(block);
                }
            }
            self.expand(level + 1, &remaining, l, out);
        }
    }

    /// The design of fewest tables, by the recursion `X(f, k, d)` of seed 002, for an
    /// expected `2^d` fingerprints and at most about `2^max_scan_log2` entries scanned per
    /// probe (each table's prefix at least `d − max_scan_log2` bits).
    pub fn auto(k: u32, d: u32, max_scan_log2: u32) -> Result<Design> {
        crate::error::check_range("index k", k as u64, 1, 16)?;
        let need = d.saturating_sub(max_scan_log2) as usize;
        fn x(bits: usize, k: usize, need: usize, depth: usize) -> Option<(u128, Vec<usize>)> {
            if need == 0 {
                return Some((1, Vec::new()));
            }
            if depth > 4 {
                return None;
            }
            let mut best: Option<(u128, Vec<usize>)> = None;
            for r in k + 1..=bits.min(k + 12) {
                let lead = (r - k) * (bits / r);
                if lead == 0 || lead >= bits {
                    continue;
                }
                let sub = x(bits - lead, k, need.saturating_sub(lead), depth + 1);
                if let Some((t, mut levels)) = sub {
                    let total = binomial(r, k) * t;
                    if best.as_ref().is_none_or(|b| total < b.0) {
                        levels.insert(0, r);
                        best = Some((total, levels));
                    }
                }
            }
            best
        }
        let (_, levels) = x(64, k as usize, need, 0)
            .ok_or_else(|| Error::Config(format!("no design for k={k}, d={d}")))?;
        let levels = if levels.is_empty() {
            vec![k as usize + 1]
        } else {
            levels
        };
        let design = Design { k, levels };
        design.validate()?;
        Ok(design)
    }
}

fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let mut r = 1u128;
    for i in 0..k {
        r = r * (n - i) as u128 / (i + 1) as u128;
    }
    r
}

/// All `choose`-subsets of `0..n`, in lexicographic order.
fn combinations(n: usize, choose: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(choose);
    fn rec(start: usize, n: usize, choose: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == choose {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            rec(i + 1, n, choose, cur, out);
            cur.pop();
        }
    }
    rec(0, n, choose, &mut cur, &mut out);
    out
}

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
    design: Design,
    tables: Vec<Table>,
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

    /// Writes the index atomically: magic `NDSIMIDX`, version 1, the design as JSON,
    /// the `(id, fingerprint)` pairs, CRC-32, end magic. Tables are rebuilt on load.
    pub fn save(&self, path: &Path) -> Result<()> {
        let entries = self.entries();
        let design = serde_json::to_vec(&self.design).map_err(|e| Error::Config(e.to_string()))?;
        container::write(path, &INDEX_KIND, &design, entries.len() as u64, |put| {
            let mut buf = Vec::with_capacity(16 * 4096);
            for chunk in entries.chunks(4096) {
                buf.clear();
                for (id, fp) in chunk {
                    buf.extend_from_slice(&id.to_le_bytes());
                    buf.extend_from_slice(&fp.to_le_bytes());
                }
                put(&buf)?;
            }
            Ok(())
        })
    }

    /// Loads a saved index; a damaged, truncated or foreign file is [`Error::Corrupt`].
    pub fn load(path: &Path) -> Result<SimhashIndex> {
        container::load(path, Self::from_bytes)
    }

    /// Parses the bytes of a saved index; a damaged, truncated or foreign one is
    /// [`Error::Corrupt`] (with the path `(bytes)`).
    pub fn from_bytes(data: &[u8]) -> Result<SimhashIndex> {
        let Parts {
            header,
            count,
            records: mut r,
        } = container::read(data, &INDEX_KIND)?;
        let design: Design =
            serde_json::from_slice(header).map_err(|e| r.error(format!("bad design: {e}")))?;
        design
            .validate()
            .map_err(|e| r.error(format!("bad design: {e}")))?;
        let rest = r.remaining();
        if count.checked_mul(16) != Some(rest as u64) {
            return Err(r.error(format!(
                "{count} entries do not match the {rest} bytes present"
            )));
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            entries.push((r.u64()?, r.u64()?));
        }
        let idx = SimhashIndex::new(design)?;
        idx.extend(entries);
        Ok(idx)
    }
}

/// Most tables a design may have (the automatic designs of seed 002 need at most a few
/// hundred).
pub const MAX_TABLES: usize = 4096;
/// Most levels of blocks a design may have.
pub const MAX_LEVELS: usize = 8;

/// Magic bytes of a saved index.
pub const INDEX_MAGIC: &[u8; 8] = b"NDSIMIDX";
/// End magic of a saved index.
pub const INDEX_END: &[u8; 8] = b"NDSIEND1";
/// Saved index format version.
pub const INDEX_VERSION: u32 = 1;

const INDEX_KIND: Kind = Kind {
    name: "simhash index",
    magic: INDEX_MAGIC,
    end: INDEX_END,
    version: INDEX_VERSION,
    refused: &[],
};

impl Permutation {
    /// The inverse permutation.
    pub fn inverse(&self) -> Permutation {
        let mut pos = [0u8; 64];
        for &(src, dst, len) in &self.runs {
            for i in 0..len {
                pos[(src + i) as usize] = dst + i;
            }
        }
        Permutation::from_positions(&pos)
    }
}

/// The probe directory of a sorted table: `2^b + 1` offsets for the top `b` bits,
/// `b = min(prefix, ⌈log2 n⌉, 24)`.
fn directory(main: &[(u64, u64)], prefix: u8) -> (u32, Vec<u32>) {
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
fn prefix_range(q: u64, shift: u32) -> (u64, u64) {
    if shift >= 64 {
        (0, u64::MAX)
    } else {
        let lo = (q >> shift) << shift;
        (lo, lo | ((1u64 << shift) - 1))
    }
}

/// Batch mode (seed 000 FIG. 12): the tables are built on the batch of queries (each
/// sorted by its permuted fingerprints, bucketed by their top `min(prefix, 16)` bits);
/// the stored fingerprints stream past in shards of `shard` entries, each shard split
/// among the worker threads (the "devices"). A worker permutes its part of the shard for
/// each table, groups it by the same top bits (a counting sort) and joins each group with
/// the batch's group: the probes walk both sides in order, so the batch tables are read
/// sequentially, not at random. Returns `(query index, stored id, distance)` for every
/// pair within distance ≤ k, each once, sorted. The stored set is never held in memory
/// beyond one shard.
pub fn batch_query(
    design: &Design,
    queries: &[u64],
    stored: impl Iterator<Item = Result<(u64, u64)>>,
    shard: usize,
) -> Result<Vec<(u32, u64, u32)>> {
    design.validate()?;
    if queries.len() > u32::MAX as usize {
        return Err(Error::Config("a batch holds at most 2^32 queries".into()));
    }
    let k = design.k;
    let tables: Vec<BatchTable> = design
        .tables()
        .into_par_iter()
        .map(|t| BatchTable::new(t, queries))
        .collect();
    let mut out = Vec::new();
    let mut buf: Vec<(u64, u64)> = Vec::with_capacity(shard.max(1));
    let mut stored = stored.peekable();
    let workers = rayon::current_num_threads().max(1);
    while stored.peek().is_some() {
        buf.clear();
        for item in stored.by_ref().take(shard.max(1)) {
            buf.push(item?);
        }
        let part = buf.len().div_ceil(workers).max(1024);
        let mut found: Vec<(u32, u64, u32)> = buf
            .par_chunks(part)
            .flat_map_iter(|chunk| {
                let mut found = Vec::new();
                let mut scratch = JoinScratch::default();
                for t in &tables {
                    t.join(chunk, k, &mut scratch, &mut found);
                }
                found
            })
            .collect();
        found.par_sort_unstable();
        found.dedup();
        out.extend(found);
    }
    out.par_sort_unstable();
    Ok(out)
}

/// One table of a batch: the queries grouped by the top `bits` bits of their permuted
/// fingerprints, with a directory. Hamming distance does not depend on the
/// permutation, so entries keep their original fingerprints: a group index needs only
/// the permutation's runs that land in the top bits, and the prefix test is a mask of
/// the original bits.
struct BatchTable {
    bits: u32,
    /// The runs of the permutation that produce the top `bits` bits.
    top: Permutation,
    /// Original bits that must agree (the table's prefix, un-permuted).
    prefix_mask: u64,
    /// `(original fingerprint, query index)` grouped by bucket.
    sorted: Vec<(u64, u32)>,
    dir: Vec<u32>,
}

#[derive(Default)]
struct JoinScratch {
    counts: Vec<u32>,
    at: Vec<u32>,
    grouped: Vec<(u64, u32)>,
}

impl BatchTable {
    fn new(table: Table, queries: &[u64]) -> BatchTable {
        let bits = (table.prefix as u32).min(16);
        let top = Permutation::from_runs(
            table
                .perm
                .runs
                .iter()
                .copied()
                .filter(|&(_, dst, _)| (dst as u32) < bits)
                .collect(),
        );
        let prefix_top = if table.prefix == 0 {
            0
        } else {
            u64::MAX << (64 - table.prefix as u32)
        };
        let prefix_mask = table.perm.inverse().apply(prefix_top);
        let mut sorted: Vec<(u64, u32)> = queries
            .iter()
            .enumerate()
            .map(|(i, &f)| (f, i as u32))
            .collect();
        sorted.sort_unstable_by_key(|&(f, i)| (Self::bucket(top.apply(f), bits), i));
        let mut dir = vec![0u32; (1usize << bits) + 1];
        for e in &sorted {
            dir[Self::bucket(top.apply(e.0), bits) + 1] += 1;
        }
        for b in 1..dir.len() {
            dir[b] += dir[b - 1];
        }
        BatchTable {
            bits,
            top,
            prefix_mask,
            sorted,
            dir,
        }
    }

    #[inline]
    fn bucket(x: u64, bits: u32) -> usize {
        if bits == 0 {
            0
        } else {
            (x >> (64 - bits)) as usize
        }
    }

    /// Appends `(query, stored id, distance)` for the pairs of `chunk` this table finds.
    fn join(
        &self,
        chunk: &[(u64, u64)],
        k: u32,
        s: &mut JoinScratch,
        out: &mut Vec<(u32, u64, u32)>,
    ) {
        let bits = self.bits;
        let nb = 1usize << bits;
        // Counting sort of the chunk by the same groups.
        s.counts.clear();
        s.counts.resize(nb + 1, 0);
        for &(_, fp) in chunk {
            s.counts[Self::bucket(self.top.apply(fp), bits) + 1] += 1;
        }
        for b in 1..=nb {
            s.counts[b] += s.counts[b - 1];
        }
        s.grouped.clear();
        s.grouped.resize(chunk.len(), (0, 0));
        s.at.clear();
        s.at.extend_from_slice(&s.counts);
        for (i, &(_, fp)) in chunk.iter().enumerate() {
            let b = Self::bucket(self.top.apply(fp), bits);
            s.grouped[s.at[b] as usize] = (fp, i as u32);
            s.at[b] += 1;
        }
        join_buckets(
            &self.dir,
            &self.sorted,
            &s.counts,
            &s.grouped,
            chunk,
            self.prefix_mask,
            k,
            out,
        );
    }
}

crate::sketch::simd::kernel! {
    /// Compares every stored entry of each group (`grouped[counts[b]..counts[b + 1]]`)
    /// with the batch entries of the same group (`sorted[dir[b]..dir[b + 1]]`): a pair
    /// equal on the bits of `prefix_mask` and within distance k is appended. Compiled
    /// with the CPU's population-count instruction where it has one.
    #[allow(clippy::too_many_arguments)]
    fn join_buckets(
        dir: &[u32],
        sorted: &[(u64, u32)],
        counts: &[u32],
        grouped: &[(u64, u32)],
        chunk: &[(u64, u64)],
        prefix_mask: u64,
        k: u32,
        out: &mut Vec<(u32, u64, u32)>,
    ) {
        let buckets = dir.len().min(counts.len()).saturating_sub(1);
        for b in 0..buckets {
            let (qa, qb) = (dir[b] as usize, dir[b + 1] as usize);
            let (sa, sb) = (counts[b] as usize, counts[b + 1] as usize);
            if qa == qb || sa == sb {
                continue;
            }
            let qs = &sorted[qa..qb];
            for &(x, i) in &grouped[sa..sb] {
                for &(y, q) in qs {
                    let d = x ^ y;
                    if d & prefix_mask == 0 && d.count_ones() <= k {
                        out.push((q, chunk[i as usize].0, d.count_ones()));
                    }
                }
            }
        }
    }
}

/// All pairs `(i, j, distance)`, `i < j`, among `fps` within distance ≤ k: for each
/// table (in parallel) the permuted fingerprints are sorted and every run with equal
/// prefix is compared within itself — no probing.
pub fn all_pairs(design: &Design, fps: &[u64]) -> Result<Vec<(u32, u32, u32)>> {
    design.validate()?;
    let k = design.k;
    let tables = design.tables();
    let mut out: Vec<(u32, u32, u32)> = tables
        .par_iter()
        .flat_map_iter(|t| {
            let mut v: Vec<(u64, u32)> = fps
                .iter()
                .enumerate()
                .map(|(i, &f)| (t.perm.apply(f), i as u32))
                .collect();
            v.sort_unstable();
            let shift = 64 - t.prefix as u32;
            let key = |x: u64| if shift >= 64 { 0 } else { x >> shift };
            let mut pairs = Vec::new();
            let mut i = 0;
            while i < v.len() {
                let mut j = i + 1;
                while j < v.len() && key(v[j].0) == key(v[i].0) {
                    j += 1;
                }
                for a in i..j {
                    for b in a + 1..j {
                        let d = (v[a].0 ^ v[b].0).count_ones();
                        if d <= k {
                            pairs.push((v[a].1.min(v[b].1), v[a].1.max(v[b].1), d));
                        }
                    }
                }
                i = j;
            }
            pairs
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The cheap approximate all-pairs scan of seed 001: rotate the fingerprints by `B`
/// different amounts, sort each rotation, and compare each entry with its next `window`
/// neighbours. Finds only pairs that land near each other in some rotation: a baseline
/// for comparisons, not exact.
pub fn rotate_sort_pairs(
    fps: &[u64],
    k: u32,
    rotations: u32,
    window: usize,
) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    for r in 0..rotations.max(1) {
        let rot = (64 / rotations.max(1)) * r;
        let mut v: Vec<(u64, u32)> = fps
            .iter()
            .enumerate()
            .map(|(i, &f)| (f.rotate_left(rot), i as u32))
            .collect();
        v.sort_unstable();
        for a in 0..v.len() {
            for b in a + 1..v.len().min(a + 1 + window) {
                let d = (v[a].0 ^ v[b].0).count_ones();
                if d <= k {
                    let (x, y) = (v[a].1.min(v[b].1), v[a].1.max(v[b].1));
                    out.push((x, y, d));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
