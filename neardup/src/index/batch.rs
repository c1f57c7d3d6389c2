//! Batch mode: many queries against a stored set streamed past in shards, and all pairs
//! within `k` of one set.

use super::design::{Design, Permutation, Table};
use crate::error::{Error, Result};
use rayon::prelude::*;

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

/// All pairs `(i, j, distance)`, `i < j`, among `fps` within distance ≤ k, each once,
/// sorted: for each table (in parallel) the permuted fingerprints are grouped by their
/// prefix (a counting sort per table) and every group is compared within itself — no
/// probing.
pub fn all_pairs(design: &Design, fps: &[u64]) -> Result<Vec<(u32, u32, u32)>> {
    design.validate()?;
    if fps.len() > u32::MAX as usize {
        return Err(Error::Config("all pairs: at most 2^32 fingerprints".into()));
    }
    let k = design.k;
    let tables = design.tables();
    // Each thread keeps its buffers from table to table (fresh ones cost page faults).
    let mut out: Vec<(u32, u32, u32)> = tables
        .par_iter()
        .map_init(Buffers::default, |bufs, t| table_pairs(t, fps, k, bufs))
        .flatten_iter()
        .collect();
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The pairs within `k` whose permuted fingerprints share table `t`'s prefix. A
/// counting sort by the top `b = min(prefix, 18, log2 n)` bits groups them in two linear passes
/// (permuting with the histogram, then one scatter; two 256-way scatters measured
/// slower here). A group (`n / 2^b` values on average) of at most 32 is compared pair
/// by pair, the rest of the prefix checked with the distance in one mask; a bigger one
/// is sorted by the whole prefix and each run of equal prefix compared within itself. The distance is XOR and popcount of the permuted values (a
/// permutation of bits keeps distances), read from the group itself, never from
/// `fps` at random. Pairs come as `(smaller index, larger index, distance)`.
pub(crate) fn table_pairs(
    t: &Table,
    fps: &[u64],
    k: u32,
    bufs: &mut Buffers,
) -> Vec<(u32, u32, u32)> {
    let n = fps.len();
    let p = u32::from(t.prefix).min(64);
    // About 4 values per group, at most 2^18 groups (a 1 MiB histogram).
    let b = p.min(18).min(usize::BITS - n.max(1).leading_zeros());
    let top = |x: u64| if b == 0 { 0 } else { (x >> (64 - b)) as usize };
    let prefix_mask = if p == 0 { 0 } else { u64::MAX << (64 - p) };
    // One read pass (permuting, the histogram of the top `b` bits), then one scatter.
    let Buffers {
        permuted,
        grouped,
        start,
    } = bufs;
    permuted.clear();
    start.clear();
    start.resize((1usize << b) + 1, 0);
    for (i, &f) in fps.iter().enumerate() {
        let x = t.perm.apply(f);
        permuted.push((x, i as u32));
        start[top(x) + 1] += 1;
    }
    for g in 1..start.len() {
        start[g] += start[g - 1];
    }
    grouped.clear();
    grouped.resize(n, (0, 0));
    let mut next = start.clone();
    for &(x, i) in permuted.iter() {
        let g = top(x);
        grouped[next[g] as usize] = (x, i);
        next[g] += 1;
    }
    let mut pairs = Vec::new();
    let mut push = |x: u64, ia: u32, y: u64, ib: u32| {
        let d = x ^ y;
        if d & prefix_mask == 0 && d.count_ones() <= k {
            pairs.push((ia.min(ib), ia.max(ib), d.count_ones()));
        }
    };
    for g in start.windows(2) {
        let group = &mut grouped[g[0] as usize..g[1] as usize];
        if group.len() < 2 {
            continue;
        }
        if p == b || group.len() <= 32 {
            // Every pair of the group, the rest of the prefix checked with the distance.
            for (a, &(x, ia)) in group.iter().enumerate() {
                for &(y, ib) in &group[a + 1..] {
                    push(x, ia, y, ib);
                }
            }
            continue;
        }
        // A big group: sorted by the whole prefix, then each run within itself.
        group.sort_unstable_by_key(|e| e.0 & prefix_mask);
        let mut i = 0;
        while i < group.len() {
            let key = group[i].0 & prefix_mask;
            let mut j = i + 1;
            while j < group.len() && group[j].0 & prefix_mask == key {
                j += 1;
            }
            let run = &group[i..j];
            for (a, &(x, ia)) in run.iter().enumerate() {
                for &(y, ib) in &run[a + 1..] {
                    push(x, ia, y, ib);
                }
            }
            i = j;
        }
    }
    pairs
}

/// The working memory of [`table_pairs`], kept by a thread from table to table.
#[derive(Default)]
pub(crate) struct Buffers {
    permuted: Vec<(u64, u32)>,
    grouped: Vec<(u64, u32)>,
    start: Vec<u32>,
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
