//! Compressed tables (seed 002 §3.2): each table's sorted permuted fingerprints packed
//! into blocks of 1024 bytes.
//!
//! Within a block the first fingerprint is stored whole (64 bits); each next one `x`
//! after `y` is stored as a Huffman code of `h`, the position (from the top, 0..=63) of
//! the leading 1-bit of `x ⊕ y` (symbol 64: `x = y`, a repeated fingerprint), then the
//! `63 − h` bits below it (bit `h` of `x` is 1 because `x > y`, and the bits above it
//! are `y`'s). A block takes fingerprints while the next one still fits in its 8192
//! bits. The Huffman code is built per table from its distribution of `h`, limited to
//! [`MAX_CODE_BITS`] bits so decoding is one table lookup. The **key** of a block is its
//! last fingerprint; a probe binary-searches the keys for the first block that can hold
//! its prefix range and decodes from there.
//!
//! Sorted random 64-bit values cannot be stored in fewer than about
//! `64 − log2 n + 1.44` bits each (the entropy of a random `n`-subset), and this scheme
//! spends about 2.7 bits more (the Huffman code of `h`, block overhead), so the size per
//! fingerprint falls as the table grows: about 6.0 bytes at 1 M, 5.6 at 10 M, 5.2 at
//! 100 M, 4.8 at 1 G — seed 002 reports "about half" of 8 bytes at 8 G fingerprints.
//! Fingerprints of real corpora, where near-duplicates cluster, compress better.
//!
//! Ids are not stored per table: a compressed index keeps one `(fingerprint, id)` list
//! sorted by fingerprint and resolves the ids of a matching fingerprint there.

use super::online::prefix_range;
use super::{Design, Match, Permutation, SimhashIndex, Table};
use crate::error::Result;

/// Bytes per block.
pub const BLOCK_BYTES: usize = 1024;
/// Longest Huffman code.
pub const MAX_CODE_BITS: u32 = 12;
const SYMBOLS: usize = 65;

/// A canonical, length-limited Huffman code over the 65 symbols.
#[derive(Debug, Clone)]
struct Code {
    /// (code, length) per symbol; length 0 = unused.
    enc: Vec<(u32, u32)>,
    /// Indexed by the next `MAX_CODE_BITS` bits: (symbol, length).
    dec: Vec<(u8, u8)>,
}

impl Code {
    fn new(freq: &[u64; SYMBOLS]) -> Code {
        let mut f: Vec<u64> = freq.to_vec();
        if f.iter().all(|&x| x == 0) {
            f[0] = 1;
        }
        let lengths = loop {
            let l = huffman_lengths(&f);
            if l.iter().all(|&x| x <= MAX_CODE_BITS) {
                break l;
            }
            // Flatten the distribution until the longest code fits.
            for x in f.iter_mut().filter(|x| **x > 0) {
                *x = (*x >> 1) + 1;
            }
        };
        // Canonical codes: by (length, symbol).
        let mut order: Vec<usize> = (0..SYMBOLS).filter(|&s| lengths[s] > 0).collect();
        order.sort_by_key(|&s| (lengths[s], s));
        let mut enc = vec![(0u32, 0u32); SYMBOLS];
        let mut dec = vec![(0u8, 0u8); 1 << MAX_CODE_BITS];
        let (mut code, mut prev) = (0u32, 0u32);
        for &s in &order {
            let l = lengths[s];
            code <<= l - prev;
            prev = l;
            enc[s] = (code, l);
            let shift = MAX_CODE_BITS - l;
            for low in 0..(1u32 << shift) {
                dec[((code << shift) | low) as usize] = (s as u8, l as u8);
            }
            code += 1;
        }
        Code { enc, dec }
    }
}

/// Huffman code lengths (0 for unused symbols; a lone symbol gets length 1).
fn huffman_lengths(freq: &[u64]) -> Vec<u32> {
    let used: Vec<usize> = (0..freq.len()).filter(|&s| freq[s] > 0).collect();
    let mut len = vec![0u32; freq.len()];
    if used.len() == 1 {
        len[used[0]] = 1;
        return len;
    }
    // Nodes: leaves then internal; parent links.
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> = used
        .iter()
        .map(|&s| std::cmp::Reverse((freq[s], s)))
        .collect();
    let mut parent = vec![usize::MAX; freq.len() * 2];
    let mut next = freq.len();
    while heap.len() > 1 {
        let (Some(std::cmp::Reverse((fa, a))), Some(std::cmp::Reverse((fb, b)))) =
            (heap.pop(), heap.pop())
        else {
            break;
        };
        parent[a] = next;
        parent[b] = next;
        heap.push(std::cmp::Reverse((fa + fb, next)));
        next += 1;
    }
    for &s in &used {
        let (mut d, mut n) = (0, s);
        while parent[n] != usize::MAX {
            n = parent[n];
            d += 1;
        }
        len[s] = d;
    }
    len
}

/// MSB-first bit writer into one block.
struct BitWriter<'a> {
    out: &'a mut [u8],
    /// Bits written (flushed and pending).
    bits: usize,
    acc: u128,
    pending: u32,
}

impl BitWriter<'_> {
    fn put(&mut self, value: u64, n: u32) {
        if n == 0 {
            return;
        }
        self.acc = (self.acc << n) | u128::from(value);
        self.pending += n;
        self.bits += n as usize;
        while self.pending >= 8 {
            self.pending -= 8;
            let at = (self.bits - self.pending as usize) / 8 - 1;
            self.out[at] = (self.acc >> self.pending) as u8;
        }
    }

    fn flush(&mut self) {
        if self.pending > 0 {
            let at = self.bits / 8;
            self.out[at] = (self.acc << (8 - self.pending)) as u8;
            self.pending = 0;
        }
    }
}

/// Reads `n ≤ 57` bits at bit offset `at` of `data` (which has 8 bytes of slack).
#[inline]
fn get(data: &[u8], at: usize, n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    let byte = at / 8;
    let mut w = [0u8; 8];
    w.copy_from_slice(&data[byte..byte + 8]);
    let x = u64::from_be_bytes(w) << (at % 8);
    x >> (64 - n)
}

/// One compressed table.
#[derive(Debug, Clone)]
pub struct CompressedTable {
    code: Code,
    /// Blocks of [`BLOCK_BYTES`], then 8 bytes of slack.
    data: Vec<u8>,
    /// Last fingerprint of each block.
    keys: Vec<u64>,
    /// Fingerprints in each block.
    counts: Vec<u16>,
    len: usize,
}

impl CompressedTable {
    /// Packs sorted permuted fingerprints.
    pub fn new(sorted: &[u64]) -> CompressedTable {
        let mut freq = [0u64; SYMBOLS];
        for w in sorted.windows(2) {
            freq[(w[0] ^ w[1]).leading_zeros() as usize] += 1;
        }
        let code = Code::new(&freq);
        let mut data = Vec::new();
        let (mut keys, mut counts) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < sorted.len() {
            let mut block = [0u8; BLOCK_BYTES];
            let mut w = BitWriter {
                out: &mut block,
                bits: 0,
                acc: 0,
                pending: 0,
            };
            w.put(sorted[i], 64);
            let mut count = 1u16;
            i += 1;
            while i < sorted.len() && count < u16::MAX {
                let h = (sorted[i - 1] ^ sorted[i]).leading_zeros();
                let (c, l) = code.enc[h as usize];
                let low = 63u32.saturating_sub(h) * u32::from(h < 64);
                if w.bits + (l + low) as usize > BLOCK_BYTES * 8 {
                    break;
                }
                w.put(c as u64, l);
                if low > 0 {
                    w.put(sorted[i] & ((1u64 << low) - 1), low);
                }
                count += 1;
                i += 1;
            }
            w.flush();
            data.extend_from_slice(&block);
            keys.push(sorted[i - 1]);
            counts.push(count);
        }
        data.extend_from_slice(&[0u8; 8]);
        CompressedTable {
            code,
            data,
            keys,
            counts,
            len: sorted.len(),
        }
    }

    /// Fingerprints stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes used: blocks, keys and counts.
    pub fn bytes(&self) -> usize {
        self.keys.len() * (BLOCK_BYTES + 8 + 2)
    }

    /// Calls `f` for every stored value in `[lo, hi]`, in order.
    pub fn range(&self, lo: u64, hi: u64, mut f: impl FnMut(u64)) {
        let mut b = self.keys.partition_point(|&k| k < lo);
        while b < self.keys.len() {
            let base = b * BLOCK_BYTES;
            let block = &self.data[base..base + BLOCK_BYTES + 8];
            let mut x = get(block, 0, 64 - 7) << 7 | get(block, 57, 7);
            let mut at = 64;
            for n in 0..self.counts[b] {
                if n > 0 {
                    let (s, l) = self.code.dec[get(block, at, MAX_CODE_BITS) as usize];
                    at += l as usize;
                    let h = s as u32;
                    if h < 64 {
                        let low = 63 - h;
                        let below = get(block, at, low.min(57)) << low.saturating_sub(57)
                            | if low > 57 {
                                get(block, at + 57, low - 57)
                            } else {
                                0
                            };
                        at += low as usize;
                        // Bits above h from the previous value, bit h set, the rest read.
                        let above = if h == 0 { 0 } else { x >> (64 - h) << (64 - h) };
                        x = above | (1u64 << (63 - h)) | below;
                    }
                }
                if x > hi {
                    return;
                }
                if x >= lo {
                    f(x);
                }
            }
            b += 1;
        }
    }

    /// Every stored value, in order (for tests and stats).
    pub fn values(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.len);
        self.range(0, u64::MAX, |x| v.push(x));
        v
    }
}

/// A read-only index over compressed tables; answers exactly as the
/// [`SimhashIndex`] it was made from.
#[derive(Debug, Clone)]
pub struct CompressedIndex {
    design: Design,
    /// Per table: its permutation and prefix, the inverse permutation, the data.
    tables: Vec<(Table, Permutation, CompressedTable)>,
    /// `(fingerprint, id)` sorted: ids of a matching fingerprint.
    ids: Vec<(u64, u64)>,
}

impl CompressedIndex {
    /// Compresses every table of `index` (pending inserts and removals applied first).
    pub fn from_index(index: &SimhashIndex) -> CompressedIndex {
        use rayon::prelude::*;
        let ids = index.entries();
        let mut fps: Vec<u64> = ids.iter().map(|e| e.1).collect();
        fps.dedup();
        let tables = index
            .tables
            .par_iter()
            .map(|t| {
                let mut v: Vec<u64> = fps.iter().map(|&f| t.perm.apply(f)).collect();
                v.sort_unstable();
                (t.clone(), t.perm.inverse(), CompressedTable::new(&v))
            })
            .collect();
        let mut ids: Vec<(u64, u64)> = ids.into_iter().map(|(id, fp)| (fp, id)).collect();
        ids.sort_unstable();
        CompressedIndex {
            design: index.design.clone(),
            tables,
            ids,
        }
    }

    /// Compresses `(id, fingerprint)` pairs under `design`.
    pub fn build(design: Design, items: impl IntoIterator<Item = (u64, u64)>) -> Result<Self> {
        let idx = SimhashIndex::new(design)?;
        idx.extend(items);
        Ok(CompressedIndex::from_index(&idx))
    }

    /// The design.
    pub fn design(&self) -> &Design {
        &self.design
    }

    /// Distinct fingerprints per table.
    pub fn fingerprints(&self) -> usize {
        self.tables.first().map_or(0, |t| t.2.len())
    }

    /// Mean bytes per fingerprint per table (blocks, keys and counts).
    pub fn bytes_per_fingerprint(&self) -> f64 {
        let n = self.fingerprints().max(1) * self.tables.len().max(1);
        self.tables.iter().map(|t| t.2.bytes()).sum::<usize>() as f64 / n as f64
    }

    /// The compressed tables.
    pub fn tables(&self) -> impl Iterator<Item = &CompressedTable> {
        self.tables.iter().map(|t| &t.2)
    }

    /// Every stored fingerprint within distance ≤ k of `fp`, each id once, sorted by
    /// (distance, id) — the same answer as [`SimhashIndex::query`].
    pub fn query(&self, fp: u64) -> Vec<Match> {
        let k = self.design.k;
        let mut found: Vec<(u64, u32)> = Vec::new();
        for (t, inv, ct) in &self.tables {
            let q = t.perm.apply(fp);
            let (lo, hi) = prefix_range(q, 64 - t.prefix as u32);
            ct.range(lo, hi, |x| {
                let d = (x ^ q).count_ones();
                if d <= k {
                    found.push((inv.apply(x), d));
                }
            });
        }
        found.sort_unstable();
        found.dedup();
        let mut out = Vec::new();
        for (f, d) in found {
            let from = self.ids.partition_point(|e| e.0 < f);
            for e in self.ids[from..].iter().take_while(|e| e.0 == f) {
                out.push(Match {
                    id: e.1,
                    distance: d,
                });
            }
        }
        out.sort_unstable_by_key(|m| (m.distance, m.id));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;
    use rand_chacha::rand_core::SeedableRng;

    fn round_trip(mut v: Vec<u64>) {
        v.sort_unstable();
        let t = CompressedTable::new(&v);
        assert_eq!(t.values(), v);
        // Every range answer equals a filter of the sorted values.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(v.len() as u64);
        for _ in 0..50 {
            let a: u64 = if v.is_empty() {
                0
            } else {
                v[rng.random_range(0..v.len())]
            };
            let b = a.saturating_add(rng.random::<u64>() >> rng.random_range(0..64));
            let mut got = Vec::new();
            t.range(a, b, |x| got.push(x));
            let want: Vec<u64> = v.iter().copied().filter(|&x| x >= a && x <= b).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn tables_round_trip_edge_cases() {
        round_trip(vec![]);
        round_trip(vec![0]);
        round_trip(vec![0, 0, 0, u64::MAX, u64::MAX]);
        round_trip(vec![0, 1, 2, 3, 1 << 63, u64::MAX - 1, u64::MAX]);
        round_trip((0..5000).collect());
        round_trip((0..5000).map(|i| i << 40).collect());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        // Many blocks; gaps of every size (exercises long and limited codes).
        round_trip(
            (0..200_000)
                .map(|_| rng.random::<u64>() >> rng.random_range(0..64))
                .collect(),
        );
    }

    #[test]
    fn size_tracks_the_entropy_of_sorted_random_values() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let n = 1 << 20;
        let mut v: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        v.sort_unstable();
        let t = CompressedTable::new(&v);
        let bits = t.bytes() as f64 * 8.0 / n as f64;
        // Lower bound ≈ 64 − log2 n + 1.44 = 45.4 bits; the scheme stays within 3 bits
        // of it (about 2 for the Huffman code of h, the rest block overhead: the whole
        // first fingerprint, the key, the count and the padding).
        let bound = 64.0 - 20.0 + 1.44;
        assert!(
            bits > bound && bits < bound + 3.0,
            "{bits} bits per fingerprint"
        );
        // And well below the 64 bits of the plain table.
        assert!(bits < 49.0);
    }
}
