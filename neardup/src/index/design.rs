//! Table designs: how the 64 bits are split into blocks, which blocks lead each table,
//! and the bounds a design must respect.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// A bit permutation of a 64-bit value as contiguous runs: output bits
/// `[dst, dst+len)` (counted from the most significant bit) come from input bits
/// `[src, src+len)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Runs", into = "Runs")]
pub struct Permutation {
    pub(super) runs: Vec<(u8, u8, u8)>,
    /// Per run: right shift, mask, left shift (branch-free application).
    ops: Vec<(u32, u64, u32)>,
}

/// The serialized form of a [`Permutation`]: its runs `(src, dst, len)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Runs {
    pub(super) runs: Vec<(u8, u8, u8)>,
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
    pub(super) fn from_runs(runs: Vec<(u8, u8, u8)>) -> Self {
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
    pub(super) fn from_positions(pos: &[u8]) -> Self {
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

    /// The one-level design that finds all pairs within `k` among `n` fingerprints
    /// fastest ([`all_pairs`](super::all_pairs)); every valid design gives the same
    /// pairs. A table costs a pass over the fingerprints (about 25 ns each, measured)
    /// plus a distance check for every pair sharing its prefix (about `n² / 2^(p+1)`
    /// checks of 1.5 ns for a prefix of `p` bits): few long-prefix tables win for big
    /// `n`, few short-prefix ones for small (1 M at k = 3: 4 tables of 16 bits, `k3-4`).
    pub fn for_all_pairs(n: usize, k: u32) -> Design {
        let k = k.clamp(1, 16);
        let n = n as f64;
        let cost = |r: usize| -> Option<f64> {
            let d = Design { k, levels: vec![r] };
            d.validate().ok()?;
            let tables = d.table_count() as f64;
            let prefix = (r - k as usize) * (64 / r);
            Some(tables * (n * 25e-9 + n * n / 2f64.powi(prefix as i32 + 1) * 1.5e-9))
        };
        let r = (k as usize + 1..=64)
            .filter_map(|r| cost(r).map(|c| (r, c)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(k as usize + 1, |(r, _)| r);
        Design { k, levels: vec![r] }
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

/// Most tables a design may have (the automatic designs of seed 002 need at most a few
/// hundred).
pub const MAX_TABLES: usize = 4096;
/// Most levels of blocks a design may have.
pub const MAX_LEVELS: usize = 8;

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
