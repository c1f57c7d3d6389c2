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

//!
//! | module | question |
//! |---|---|
//! | `design` | Which tables? ([`Design`], [`Permutation`], [`Table`], bounds) |
//! | `online` | Is anything within `k` of this fingerprint, now? ([`SimhashIndex`]) |
//! | `batch` | Which pairs within `k`, for a whole batch or a whole set? ([`batch_query`], [`all_pairs`]) |
//! | `file` | How is an index saved? (the container format, [`INDEX_VERSION`]) |
//! | [`compressed`] | How small can the tables be? ([`CompressedIndex`]) |

mod batch;
pub mod compressed;
mod design;
mod file;
mod online;

pub use batch::{all_pairs, batch_query, rotate_sort_pairs};
pub use compressed::{CompressedIndex, CompressedTable};
pub use design::{Design, Permutation, Table, MAX_LEVELS, MAX_TABLES};
pub use file::{INDEX_END, INDEX_MAGIC, INDEX_VERSION};
pub use online::{Match, SimhashIndex};
