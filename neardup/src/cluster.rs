//! Clustering verified pairs: union-find, deterministic representatives, and a mode
//! that forbids growth by chaining (Pugh's slides, seed 004; docs/algorithms.md).

use serde::{Deserialize, Serialize};

/// Union-find over `0..n` with path halving and union by size. The partition it
/// computes does not depend on the order of unions.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The root of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    /// Merges the sets of `a` and `b`; true if they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize]
            || (self.size[ra as usize] == self.size[rb as usize] && rb < ra)
        {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }

    /// The sets with more than one member, each sorted, in order of their smallest member.
    /// One pass in member order: a set's group is opened at its smallest member, sized
    /// from the root's count; singletons cost no allocation.
    pub fn groups(&mut self) -> Vec<Vec<u32>> {
        const NONE: u32 = u32::MAX;
        let n = self.parent.len();
        // The group of each root of a set of two or more, once opened.
        let mut group_of = vec![NONE; n];
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for x in 0..n as u32 {
            let r = self.find(x) as usize;
            if self.size[r] < 2 {
                continue;
            }
            if group_of[r] == NONE {
                group_of[r] = groups.len() as u32;
                groups.push(Vec::with_capacity(self.size[r] as usize));
            }
            groups[group_of[r] as usize].push(x);
        }
        groups
    }
}

/// Which member of a cluster is its representative (the one kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Keep {
    /// The first in input order. The default.
    #[default]
    First,
    /// The one with the most terms; ties go to the first in input order.
    Longest,
    /// The highest [`Document::priority`](crate::Document::priority); documents without
    /// one rank lowest; ties go to the first in input order.
    Priority,
}

/// Which member is kept, as settings spell it: `first`, `longest` or
/// `priority:FIELD` (the record field holding the priority).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeepRule {
    /// [`Keep::First`].
    First,
    /// [`Keep::Longest`].
    Longest,
    /// [`Keep::Priority`], read from the record field of this name.
    Priority(String),
}

impl std::str::FromStr for KeepRule {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        Ok(match s {
            "first" => KeepRule::First,
            "longest" => KeepRule::Longest,
            _ => match s.strip_prefix("priority:").filter(|f| !f.is_empty()) {
                Some(f) => KeepRule::Priority(f.to_string()),
                None => {
                    return Err(crate::error::Error::Config(format!(
                        "--keep {s:?}: expected first, longest or priority:FIELD"
                    )))
                }
            },
        })
    }
}

impl KeepRule {
    /// The rule the clusters apply.
    pub fn keep(&self) -> Keep {
        match self {
            KeepRule::First => Keep::First,
            KeepRule::Longest => Keep::Longest,
            KeepRule::Priority(_) => Keep::Priority,
        }
    }

    /// The record field holding the priority, when it is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            KeepRule::Priority(f) => Some(f),
            _ => None,
        }
    }
}

/// How verified pairs become clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ClusterMode {
    /// Connected components of the verified pairs (similarity taken as transitive, as
    /// in seed 004). The default.
    #[default]
    Transitive,
    /// Connected components, then every member must itself pass the stage-two filter
    /// against the representative; a member that does not leaves the cluster and is
    /// kept on its own. No cluster can grow by chaining.
    Verified,
}

/// One cluster of near-duplicates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The member kept.
    pub representative: u32,
    /// All members (representative included), ascending.
    pub members: Vec<u32>,
}

/// Picks the representative of `members` (sorted ascending) by `keep`.
pub fn representative(members: &[u32], keep: Keep, terms: &[u32], priority: &[Option<f64>]) -> u32 {
    match keep {
        Keep::First => members[0],
        Keep::Longest => *members
            .iter()
            .max_by(|&&a, &&b| terms[a as usize].cmp(&terms[b as usize]).then(b.cmp(&a)))
            .unwrap_or(&members[0]),
        Keep::Priority => *members
            .iter()
            .max_by(|&&a, &&b| {
                let pa = priority.get(a as usize).copied().flatten();
                let pb = priority.get(b as usize).copied().flatten();
                let ord = match (pa, pb) {
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    (Some(_), None) => std::cmp::Ordering::Greater,
                    (None, Some(_)) => std::cmp::Ordering::Less,
                    (None, None) => std::cmp::Ordering::Equal,
                };
                ord.then(b.cmp(&a))
            })
            .unwrap_or(&members[0]),
    }
}

/// Size statistics of a clustering.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterStats {
    /// Clusters with at least two members.
    pub clusters: u64,
    /// Documents in those clusters.
    pub clustered_documents: u64,
    /// The largest cluster's size.
    pub max_size: u64,
    /// `histogram[k]` = clusters of size in `2^k ..< 2^(k+1)` (k ≥ 1).
    pub size_histogram: Vec<u64>,
}

impl ClusterStats {
    /// Statistics of `clusters`.
    pub fn of(clusters: &[Cluster]) -> Self {
        let mut s = ClusterStats::default();
        for c in clusters {
            let n = c.members.len() as u64;
            s.clusters += 1;
            s.clustered_documents += n;
            s.max_size = s.max_size.max(n);
            let k = 63 - n.leading_zeros() as usize;
            if s.size_histogram.len() <= k {
                s.size_histogram.resize(k + 1, 0);
            }
            s.size_histogram[k] += 1;
        }
        s
    }
}

#[cfg(test)]
mod rule_tests {
    use super::{Keep, KeepRule};

    /// The spellings of `--keep` (and the Python and TOML keyword): each name, a
    /// priority field, and the refusals with the accepted spellings named.
    #[test]
    fn keep_rules_parse_as_documented() {
        let r: KeepRule = "first".parse().unwrap();
        assert_eq!((r.keep(), r.field()), (Keep::First, None));
        let r: KeepRule = "longest".parse().unwrap();
        assert_eq!((r.keep(), r.field()), (Keep::Longest, None));
        let r: KeepRule = "priority:rank".parse().unwrap();
        assert_eq!((r.keep(), r.field()), (Keep::Priority, Some("rank")));
        for bad in ["priority:", "Priority:x", "last", ""] {
            let e = bad.parse::<KeepRule>().unwrap_err().to_string();
            assert!(e.contains("first, longest or priority:FIELD"), "{bad}: {e}");
        }
    }
}
