//! Stage one: candidate pairs from bucketed keys (the Henzinger patent, seed 003, FIG. 3; docs/algorithms.md).
//!
//! A [`CandidateGenerator`] turns the sketches of the documents still in play into
//! candidate pairs `(a, b)` with `a < b` (input ordinals), each pair once, sorted.
//!
//! Built in:
//!
//! * [`Supershingles`] — pairs sharing at least `r` supershingles (same slot, same
//!   value). For `r ≥ 2` the documents are bucketed by megashingle (one pass per pair of
//!   slots), so sharing any bucket already means "≥ 2 agree" and the iceberg query is
//!   plain bucketing; for `r = 1` by supershingle; when there are so many slots that
//!   pairs of slots would take more than [`MAX_MEGASHINGLE_PASSES`] passes, by
//!   `m' − r + 1` contiguous groups of slots (pigeonhole: at most `m' − r` slots
//!   disagree, so some group agrees entirely). Each pair found is checked against its
//!   sketches for `≥ r`; every pair with `≥ r` agreeing slots is found.
//! * [`CharikarBlocks`] — every pair whose Charikar projections differ in at most `h`
//!   bits, by pigeonhole: the `b` bits split into `h + 1` blocks, and two fingerprints
//!   within distance `h` agree on at least one whole block.
//!
//! # Big buckets
//!
//! A bucket shared by more than `max_bucket` documents (a template page repeated
//! 200,000 times, near-empty pages) would cost quadratic time. For such a bucket, with
//! its members in input order `d_0 < d_1 < … < d_{s−1}`, the candidates are only
//! `(d_0, d_i)` for every `i` (the star around the first member) and `(d_i, d_{i+j})`
//! for `1 ≤ j ≤ window` (each member with its next `window` members): `O(s · window)`
//! pairs. Every member is thus compared with the bucket's first member, so near-
//! duplicates of it still cluster together; pairs of other members found only through
//! this bucket and farther apart than `window` are not produced. Such buckets are counted
//! in [`CandidateStats::big_buckets`].

pub mod bitmap_join;
mod charikar_blocks;
mod pugh;
mod simhash;
mod supershingles;

pub use bitmap_join::{bitmap_clusters, bitmap_join, bitmap_join_partitioned, BitmapStats};
pub use charikar_blocks::CharikarBlocks;
pub use pugh::PughChecksums;
pub use simhash::SimhashCandidates;
pub use supershingles::{band_key, Supershingles, MAX_MEGASHINGLE_PASSES};

use crate::error::Result;
use crate::sketch::{SketchRef, Sketches};
use rayon::prelude::*;
use serde::Serialize;

/// Counters of a candidate generation run.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct CandidateStats {
    /// Bucketing passes made.
    pub passes: u64,
    /// Keys bucketed (documents × passes).
    pub keys: u64,
    /// Pairs enumerated from buckets before de-duplication and checks (the work done).
    pub pairs_enumerated: u64,
    /// Buckets larger than `max_bucket`, handled by the star-and-window rule.
    pub big_buckets: u64,
    /// Members of those buckets.
    pub big_bucket_members: u64,
    /// Distinct candidate pairs returned.
    pub candidates: u64,
}

impl CandidateStats {
    /// Adds the work counted in `other` (passes, keys, pairs enumerated, big buckets);
    /// `candidates`, counted once on the merged pairs, is left alone.
    fn add_work(&mut self, other: &CandidateStats) {
        self.passes += other.passes;
        self.keys += other.keys;
        self.pairs_enumerated += other.pairs_enumerated;
        self.big_buckets += other.big_buckets;
        self.big_bucket_members += other.big_bucket_members;
    }
}

/// Stage one of the pipeline: candidate pairs from sketches.
pub trait CandidateGenerator: Send + Sync + std::fmt::Debug {
    /// A short name for reports.
    fn name(&self) -> String;

    /// Candidate pairs among the documents `active` (ordinals into `sketches`, sorted
    /// ascending): `(a, b)` with `a < b`, each pair once, sorted.
    fn candidates(
        &self,
        sketches: &Sketches,
        active: &[u32],
        stats: &mut CandidateStats,
    ) -> Result<Vec<(u32, u32)>>;

    /// Whether `a` and `b` are a candidate pair by this generator's definition, without
    /// the big-bucket rule (which may leave such a pair out of a batch run). The
    /// pairwise verdict ([`crate::verify::Rule::judge`]) asks this.
    fn is_candidate(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool;

    /// This generator as Broder's supershingles, when it is: what needs its settings
    /// (the online deduper's postings of supershingles, the distributed jobs' buckets)
    /// asks this.
    fn as_supershingles(&self) -> Option<&Supershingles> {
        None
    }

    /// Whether the generator reads the sketches' 64-bit simhash: sketches made without
    /// it ([`crate::sketch::SketchConfig::simhash`] off) are refused for such a
    /// generator. By default true (a generator that does not say is assumed to).
    fn reads_simhash(&self) -> bool {
        true
    }
}

/// Bucketing limits shared by the generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BucketLimits {
    /// Buckets with more members than this use the star-and-window rule. Default 1000.
    pub max_bucket: usize,
    /// Neighbours each member of a big bucket is paired with. Default 8.
    pub window: usize,
}

impl Default for BucketLimits {
    fn default() -> Self {
        BucketLimits {
            max_bucket: 1000,
            window: 8,
        }
    }
}

/// Work counters and pairs of one chunk of buckets: (enumerated, big, big members, pairs).
type BucketWork = (u64, u64, u64, Vec<(u32, u32)>);

/// Sorts `(key, doc)` and appends the pairs of each bucket to `out` (big buckets by the
/// star-and-window rule). `keep(a, b)` filters pairs as they are enumerated.
fn bucket_pairs(
    keys: &mut [(u64, u32)],
    limits: BucketLimits,
    stats: &mut CandidateStats,
    out: &mut Vec<(u32, u32)>,
    keep: impl Fn(u32, u32) -> bool + Sync,
) {
    stats.passes += 1;
    stats.keys += keys.len() as u64;
    // Only keys that occur twice or more make pairs: the others are set aside before
    // the sort, which then orders only the keys that may repeat (on the Rust docs
    // corpus, by the tables' size, about one key in ten).
    let may_repeat = repeated_first(keys, |k| k.0);
    let keys = &mut keys[..may_repeat];
    sort_hashed(keys, |k| k.0);
    let mut runs = Vec::new();
    let mut i = 0;
    while i < keys.len() {
        let mut j = i + 1;
        while j < keys.len() && keys[j].0 == keys[i].0 {
            j += 1;
        }
        if j - i > 1 {
            runs.push((i, j));
        }
        i = j;
    }
    let keys = &*keys;
    let found: Vec<BucketWork> = runs
        .par_chunks(256)
        .map(|chunk| {
            let (mut enumerated, mut big, mut big_members) = (0u64, 0u64, 0u64);
            let mut pairs = Vec::new();
            for &(s, e) in chunk {
                let m = &keys[s..e];
                let n = m.len();
                if n > limits.max_bucket {
                    big += 1;
                    big_members += n as u64;
                }
                for_each_bucket_pair(n, limits, |x, y| {
                    enumerated += 1;
                    let (a, b) = (m[x].1, m[y].1);
                    if a != b && keep(a.min(b), a.max(b)) {
                        pairs.push((a.min(b), a.max(b)));
                    }
                });
            }
            (enumerated, big, big_members, pairs)
        })
        .collect();
    for (e, b, bm, p) in found {
        stats.pairs_enumerated += e;
        stats.big_buckets += b;
        stats.big_bucket_members += bm;
        out.extend(p);
    }
}

/// Moves to the front every element of `v` whose `key` (the leading 64 bits of what
/// elements are grouped by) may occur more than once in `v`, and returns how many there
/// are: every element of a repeated key is among them, with a few of unique keys (those
/// whose key shares its leading bits with another key's); the elements after them have
/// keys no other element has. Two bit tables indexed by the key's leading bits, one
/// pass to mark the indexes seen once and twice, one to gather; about eight bits of
/// table per element, so about one unique key in eight stays (for keys spread like
/// hashes; skewed keys only keep more). A short slice is left whole.
pub fn repeated_first<T>(v: &mut [T], key: impl Fn(&T) -> u64) -> usize {
    let n = v.len();
    if n < 4096 {
        return n;
    }
    let bits = (n * 8).next_power_of_two().trailing_zeros();
    let shift = 64 - bits;
    let index = |x: &T| (key(x) >> shift) as usize;
    let mut seen = vec![0u64; 1 << (bits - 6)];
    let mut twice = vec![0u64; 1 << (bits - 6)];
    for x in v.iter() {
        let i = index(x);
        let (w, b) = (i >> 6, 1u64 << (i & 63));
        twice[w] |= seen[w] & b;
        seen[w] |= b;
    }
    let mut kept = 0;
    for r in 0..n {
        let i = index(&v[r]);
        if twice[i >> 6] >> (i & 63) & 1 != 0 {
            v.swap(kept, r);
            kept += 1;
        }
    }
    kept
}

/// The big-bucket rule, the one definition every front end uses: calls `f(x, y)`
/// (`x < y`) for the pairs of positions of a bucket of `n` members sorted in input
/// order. A bucket of at most `limits.max_bucket` members yields every pair; a bigger
/// one the star around its first member, `(0, y)` for every `y ≥ 1`, and each member
/// `x ≥ 1` with its next `limits.window` members, `(x, y)` for `x < y ≤ x + window`
/// (see the module docs). Pairs come in ascending order of `x`, then `y`.
pub fn for_each_bucket_pair(n: usize, limits: BucketLimits, mut f: impl FnMut(usize, usize)) {
    if n <= limits.max_bucket {
        for x in 0..n {
            for y in x + 1..n {
                f(x, y);
            }
        }
        return;
    }
    for y in 1..n {
        f(0, y);
    }
    for x in 1..n {
        for y in x + 1..n.min(x + 1 + limits.window) {
            f(x, y);
        }
    }
}

/// The candidate pairs of one bucket under the big-bucket rule
/// ([`for_each_bucket_pair`]): `members` are input ordinals in any order (repeats are
/// ignored); pairs `(a, b)` with `a < b`, in the rule's order. Any ordinal type: the
/// Spark job's are 64-bit.
pub fn bucket_pairs_of<T: Copy + Ord>(members: &[T], limits: BucketLimits) -> Vec<(T, T)> {
    let mut m = members.to_vec();
    m.sort_unstable();
    m.dedup();
    let mut out = Vec::new();
    for_each_bucket_pair(m.len(), limits, |x, y| out.push((m[x], m[y])));
    out
}

/// Sorts `v` (ascending, as `sort_unstable` would) when `top(x)`, the leading 64 bits
/// of each element's first field, is spread evenly — a hash: one counting pass on the
/// leading bits puts every element into its bucket (about two per bucket), then each
/// bucket is sorted on its own. Linear time, against `n log n` for a comparison sort.
/// Skewed keys only make some buckets big (a big bucket is sorted by `sort_unstable`),
/// never the result different. `top` must not decrease along the order of `T`.
pub fn sort_hashed<T: Copy + Ord + Send>(v: &mut [T], top: impl Fn(&T) -> u64) {
    let n = v.len();
    if n < 1024 {
        v.sort_unstable();
        return;
    }
    let bits = (usize::BITS - (n / 2).leading_zeros()).min(24);
    let shift = 64 - bits;
    let bucket = |x: &T| (top(x) >> shift) as usize;
    let mut start = vec![0u32; (1 << bits) + 1];
    for x in v.iter() {
        start[bucket(x) + 1] += 1;
    }
    for b in 1..start.len() {
        start[b] += start[b - 1];
    }
    let mut out: Vec<T> = Vec::with_capacity(n);
    out.extend_from_slice(v);
    let mut next = start.clone();
    for x in out.iter() {
        let b = bucket(x);
        v[next[b] as usize] = *x;
        next[b] += 1;
    }
    for w in start.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if b - a > 1 {
            v[a..b].sort_unstable();
        }
    }
}

/// The bucketing passes `0..passes` of one generator run, run side by side: each pass
/// buckets one key per document (`keys(pass)`), enumerates the pairs of each bucket that
/// `keep(pass, a, b)` accepts, and merges them into its thread's sorted, de-duplicated pairs; the
/// threads' pairs are merged at the end. The result is the same sorted, de-duplicated
/// set (and the same statistics, which are sums) whatever the threads and their order.
fn run_passes(
    passes: usize,
    limits: BucketLimits,
    stats: &mut CandidateStats,
    keys: impl Fn(usize) -> Vec<(u64, u32)> + Sync,
    keep: impl Fn(usize, u32, u32) -> bool + Sync,
) -> Vec<(u32, u32)> {
    let (st, pairs) = (0..passes)
        .into_par_iter()
        .fold(
            || (CandidateStats::default(), Vec::new()),
            |(mut st, mut out), pass| {
                let mut k = keys(pass);
                bucket_pairs(&mut k, limits, &mut st, &mut out, |a, b| keep(pass, a, b));
                out.sort_unstable();
                out.dedup();
                (st, out)
            },
        )
        .reduce(
            || (CandidateStats::default(), Vec::new()),
            |(mut a, mut x), (b, y)| {
                a.add_work(&b);
                x.extend(y);
                x.sort_unstable();
                x.dedup();
                (a, x)
            },
        );
    stats.add_work(&st);
    finish(pairs, stats)
}

/// Sorts and removes repeated pairs (a pair can share several buckets).
fn dedup(pairs: &mut Vec<(u32, u32)>) {
    pairs.par_sort_unstable();
    pairs.dedup();
}

fn finish(mut pairs: Vec<(u32, u32)>, stats: &mut CandidateStats) -> Vec<(u32, u32)> {
    dedup(&mut pairs);
    stats.candidates += pairs.len() as u64;
    pairs
}

#[cfg(test)]
mod tests {
    use super::{repeated_first, sort_hashed};
    use rand::RngExt;
    use rand_chacha::rand_core::SeedableRng;

    type KeyGen = Box<dyn Fn(&mut rand_chacha::ChaCha8Rng) -> u64>;

    #[test]
    fn sort_hashed_sorts_like_sort_unstable() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for n in [0usize, 1, 2, 1023, 1024, 1025, 5000, 100_000] {
            // Hashes, a few distinct keys (skewed: huge buckets), keys differing only in
            // the low bits (all in one bucket), and duplicates of whole elements.
            let kinds: [KeyGen; 4] = [
                Box::new(|r| r.random()),
                Box::new(|r| r.random_range(0..3u64) << 62),
                Box::new(|r| r.random_range(0..1000u64)),
                Box::new(|r| r.random_range(0..50u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            ];
            for key in &kinds {
                let mut v: Vec<(u64, u32)> = (0..n)
                    .map(|_| (key(&mut rng), rng.random_range(0..100u32)))
                    .collect();
                let mut want = v.clone();
                want.sort_unstable();
                sort_hashed(&mut v, |x| x.0);
                assert_eq!(v, want, "n = {n}");
            }
        }
    }

    /// `repeated_first` against counting each key: the front holds every entry of every
    /// key that occurs twice or more, the rest only keys that occur once, and the
    /// entries are the same ones; for hashes most unique keys are set aside.
    #[test]
    fn repeated_first_keeps_every_repeated_key_in_front() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for n in [0usize, 1, 4095, 4096, 5000, 100_000] {
            // Hashes, one in seven of them from a set of 500 (repeated), keys differing
            // only in the low bits (one index for all), and a few distinct keys.
            let kinds: [KeyGen; 3] = [
                Box::new(|r| {
                    if r.random_range(0..7u32) == 0 {
                        r.random_range(0..500u64)
                            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    } else {
                        r.random()
                    }
                }),
                Box::new(|r| r.random_range(0..1_000_000u64)),
                Box::new(|r| r.random_range(0..50u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            ];
            for (kind, key) in kinds.iter().enumerate() {
                let mut v: Vec<(u64, u32)> = (0..n).map(|i| (key(&mut rng), i as u32)).collect();
                let mut count = std::collections::HashMap::new();
                for &(k, _) in &v {
                    *count.entry(k).or_insert(0usize) += 1;
                }
                let mut before = v.clone();
                let front = repeated_first(&mut v, |x| x.0);
                let (kept, rest) = v.split_at(front);
                for &(k, d) in rest {
                    assert_eq!(
                        count[&k], 1,
                        "n = {n}, kind {kind}: doc {d}'s repeated key set aside"
                    );
                }
                let repeated = count.values().filter(|&&c| c > 1).sum::<usize>();
                assert!(kept.len() >= repeated, "n = {n}, kind {kind}");
                if kind == 0 && n >= 4096 {
                    // About one unique key in eight stays with hashes.
                    let unique_kept = kept.len() - repeated;
                    assert!(
                        unique_kept * 4 < n,
                        "n = {n}: {unique_kept} unique keys kept"
                    );
                }
                before.sort_unstable();
                let mut after = v.clone();
                after.sort_unstable();
                assert_eq!(after, before, "n = {n}, kind {kind}: the same entries");
            }
        }
    }
}
