//! All pairs of documents that share a fingerprint, at scale (Pugh's bucket checksums'
//! candidates): [`bitmap_join`] finds every group of equal fingerprints without sorting
//! all of them. A first pass counts fingerprints in a bitmap of 2-bit counters (0, 1,
//! many), a second keeps only those in "many" buckets; this repeats with a new hash to
//! thin collisions; the survivors are sorted and equal runs become pairs.
//! [`bitmap_join_partitioned`] splits the entries by fingerprint when one bitmap would
//! be too large, and [`bitmap_clusters`] joins the pairs into clusters.

use crate::cluster::UnionFind;
use crate::sketch::hash::mix64;
use bitvec::prelude::*;
use serde::Serialize;

/// What [`bitmap_join`] removed and kept.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct BitmapStats {
    /// Entries given.
    pub input: u64,
    /// Entries removed by each pass (fingerprint in a bucket counted once).
    pub removed_per_pass: Vec<u64>,
    /// Entries left for the sort.
    pub survivors: u64,
    /// Survivors whose fingerprint occurs once: kept only because of bucket collisions.
    pub collided_uniques: u64,
    /// Bitmap buckets per pass.
    pub buckets: u64,
}

/// Like [`bitmap_join`], but when the bitmap of all entries would exceed
/// `max_bitmap_bytes`, the entries are partitioned by the top bits of their fingerprint
/// (equal fingerprints always share a partition) and each partition is joined with a
/// bitmap of its own; the stats add up over the partitions (`buckets` is the largest).
pub fn bitmap_join_partitioned(
    entries: &[(u64, u32)],
    passes: usize,
    buckets_per_entry: usize,
    star: bool,
    max_bitmap_bytes: usize,
) -> (Vec<(u32, u32)>, BitmapStats, usize) {
    let need = (entries.len().max(1) * buckets_per_entry.max(1)).next_power_of_two() / 4;
    let parts = need.div_ceil(max_bitmap_bytes.max(64)).next_power_of_two();
    if parts <= 1 {
        let (p, s) = bitmap_join(entries, passes, buckets_per_entry, star);
        return (p, s, 1);
    }
    let bits = parts.trailing_zeros();
    let mut buckets: Vec<Vec<(u64, u32)>> = vec![Vec::new(); parts];
    for &e in entries {
        buckets[(mix64(e.0) >> (64 - bits)) as usize].push(e);
    }
    let mut pairs = Vec::new();
    let mut stats = BitmapStats {
        removed_per_pass: vec![0; passes],
        ..Default::default()
    };
    for part in &buckets {
        let (p, s) = bitmap_join(part, passes, buckets_per_entry, star);
        pairs.extend(p);
        stats.input += s.input;
        stats.survivors += s.survivors;
        stats.collided_uniques += s.collided_uniques;
        stats.buckets = stats.buckets.max(s.buckets);
        for (t, r) in stats.removed_per_pass.iter_mut().zip(&s.removed_per_pass) {
            *t += r;
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    (pairs, stats, parts)
}

/// Pairs `(a, b)`, `a < b`, of documents that share a fingerprint, from `(fingerprint,
/// document)` entries (fingerprint 0 = empty, ignored). `passes` bitmap passes with
/// `buckets_per_entry · n` 2-bit buckets each (default 2 passes of 8 buckets per entry),
/// then a sort of the survivors. Each run of equal fingerprints is joined as a star
/// around its first document (enough for union-find clusters) when `star`, else all
/// pairs.
pub fn bitmap_join(
    entries: &[(u64, u32)],
    passes: usize,
    buckets_per_entry: usize,
    star: bool,
) -> (Vec<(u32, u32)>, BitmapStats) {
    let mut stats = BitmapStats {
        input: entries.len() as u64,
        ..Default::default()
    };
    let mut live: Vec<(u64, u32)> = entries.iter().copied().filter(|e| e.0 != 0).collect();
    let m = (live.len().max(1) * buckets_per_entry.max(1)).next_power_of_two();
    stats.buckets = m as u64;
    let mut bits: BitVec<u64, Lsb0> = bitvec![u64, Lsb0; 0; 2 * m];
    for pass in 0..passes {
        bits.fill(false);
        let seed = 0x5055_4748_0000_0000u64 + pass as u64; // "PUGH"
        let bucket = |fp: u64| (mix64(fp ^ seed) as usize) & (m - 1);
        // Pass one: count 0, 1, many (2-bit saturating counters: 00, 01, 11).
        for &(fp, _) in &live {
            let b = bucket(fp);
            if bits[2 * b] {
                bits.set(2 * b + 1, true);
            } else {
                bits.set(2 * b, true);
            }
        }
        // Pass two: keep entries in "many" buckets.
        let before = live.len();
        live.retain(|&(fp, _)| bits[2 * bucket(fp) + 1]);
        stats.removed_per_pass.push((before - live.len()) as u64);
    }
    live.sort_unstable();
    stats.survivors = live.len() as u64;
    let mut pairs = Vec::new();
    let mut i = 0;
    while i < live.len() {
        let mut j = i + 1;
        while j < live.len() && live[j].0 == live[i].0 {
            j += 1;
        }
        if j - i == 1 {
            stats.collided_uniques += 1;
        }
        for x in i..j {
            let ys = match (star, x == i) {
                (false, _) => x + 1..j,
                (true, true) => i + 1..j,
                (true, false) => 0..0,
            };
            for y in ys {
                let (a, b) = (live[x].1, live[y].1);
                if a != b {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        i = j;
    }
    pairs.sort_unstable();
    pairs.dedup();
    (pairs, stats)
}

/// Clusters of documents connected by shared fingerprints :
/// the star pairs of [`bitmap_join_partitioned`] through union-find over `0..documents`;
/// groups of two or more, each sorted, ordered by first member.
pub fn bitmap_clusters(
    entries: &[(u64, u32)],
    documents: usize,
    max_bitmap_bytes: usize,
) -> (Vec<Vec<u32>>, BitmapStats) {
    let (pairs, stats, _) = bitmap_join_partitioned(entries, 2, 8, true, max_bitmap_bytes);
    let mut uf = UnionFind::new(documents);
    for (a, b) in pairs {
        uf.union(a, b);
    }
    (uf.groups(), stats)
}
