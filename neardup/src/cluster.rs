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
    /// Clusters around centres ([`centre_clusters`]): the best document by the keep
    /// policy is kept and takes every document verified as its near-duplicate; the
    /// next best not yet taken does the same, and so on. Every member is a verified
    /// near-duplicate of the member kept, so no cluster can grow by chaining; documents
    /// connected only through others start clusters of their own. The default of
    /// [`Preset::Recall`](crate::Preset::Recall).
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

/// The keep policy as an order of preference: `better(a, b)` is `Less` when `a` is
/// kept before `b`. Records before `old` (an incremental run's earlier records, never
/// dropped) come first, by ordinal; then [`Keep::First`] by ordinal, [`Keep::Longest`]
/// by most terms, [`Keep::Priority`] by highest priority (none ranks lowest), ties by
/// ordinal. A total order: [`representative`] is its least member.
pub fn preference<'a>(
    keep: Keep,
    terms: &'a [u32],
    priority: &'a [Option<f64>],
    old: usize,
) -> impl Fn(u32, u32) -> std::cmp::Ordering + 'a {
    use std::cmp::Ordering;
    move |a: u32, b: u32| {
        let (oa, ob) = ((a as usize) < old, (b as usize) < old);
        if oa || ob {
            return ob.cmp(&oa).then(a.cmp(&b));
        }
        let by_keep = match keep {
            Keep::First => Ordering::Equal,
            Keep::Longest => terms[b as usize].cmp(&terms[a as usize]),
            Keep::Priority => {
                let pa = priority.get(a as usize).copied().flatten();
                let pb = priority.get(b as usize).copied().flatten();
                match (pa, pb) {
                    (Some(x), Some(y)) => y.total_cmp(&x),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
            }
        };
        by_keep.then(a.cmp(&b))
    }
}

/// Picks the representative of `members` (sorted ascending) by `keep`: the least of
/// them in [`preference`] (with no old records).
pub fn representative(members: &[u32], keep: Keep, terms: &[u32], priority: &[Option<f64>]) -> u32 {
    let better = preference(keep, terms, priority, 0);
    members
        .iter()
        .copied()
        .min_by(|&a, &b| better(a, b))
        .unwrap_or(members[0])
}

/// Clusters around centres, the no-chaining clustering of [`ClusterMode::Verified`]:
/// the documents that have a verified pair (`edges`, over `0..n`) are taken in the
/// order of `better` (the keep policy: [`preference`]); each one not yet in a cluster
/// becomes a centre and takes every neighbour not yet in a cluster. Every member of a
/// cluster is thus a verified near-duplicate of its centre, the member kept; documents
/// only connected through others start clusters of their own. The result depends on
/// the set of edges only (not their order, nor the threads), and equals union-find's
/// components whenever every component is a clique. Returns the clusters of two or
/// more members (each sorted, its centre first in the pair), in order of their
/// centres.
pub fn centre_clusters(
    n: usize,
    edges: &[(u32, u32)],
    better: impl Fn(u32, u32) -> std::cmp::Ordering,
) -> Vec<(u32, Vec<u32>)> {
    // Adjacency in compressed rows.
    let mut start = vec![0u32; n + 1];
    for &(a, b) in edges {
        start[a as usize + 1] += 1;
        start[b as usize + 1] += 1;
    }
    for i in 1..=n {
        start[i] += start[i - 1];
    }
    let mut next = start.clone();
    let mut adj = vec![0u32; start[n] as usize];
    for &(a, b) in edges {
        adj[next[a as usize] as usize] = b;
        next[a as usize] += 1;
        adj[next[b as usize] as usize] = a;
        next[b as usize] += 1;
    }
    drop(next);
    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&d| start[d as usize + 1] > start[d as usize])
        .collect();
    order.sort_unstable_by(|&a, &b| better(a, b));
    let mut taken = vec![false; n];
    let mut out = Vec::new();
    for c in order {
        if taken[c as usize] {
            continue;
        }
        taken[c as usize] = true;
        let mut members = vec![c];
        for &m in &adj[start[c as usize] as usize..start[c as usize + 1] as usize] {
            if !taken[m as usize] {
                taken[m as usize] = true;
                members.push(m);
            }
        }
        if members.len() > 1 {
            members.sort_unstable();
            out.push((c, members));
        }
    }
    out
}

/// [`centre_clusters`] over a graph of any node numbers (a distributed job's 64-bit
/// ordinals), with the keep policy [`Keep::First`] (the smaller node is kept first):
/// `(node, centre)` for every member of a cluster of two or more, ascending by node;
/// nodes of edges left alone are not listed. Depends on the set of edges alone.
pub fn centre_labels(edges: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut nodes: Vec<i64> = edges.iter().flat_map(|&(x, y)| [x, y]).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let index = |x: i64| nodes.binary_search(&x).unwrap_or_default() as u32;
    let dense: Vec<(u32, u32)> = edges
        .iter()
        .filter(|(x, y)| x != y)
        .map(|&(x, y)| (index(x), index(y)))
        .collect();
    let mut out: Vec<(i64, i64)> = centre_clusters(nodes.len(), &dense, |a, b| a.cmp(&b))
        .into_iter()
        .flat_map(|(c, members)| {
            let centre = nodes[c as usize];
            members
                .into_iter()
                .map(move |m| (m, centre))
                .collect::<Vec<_>>()
        })
        .map(|(m, c)| (nodes[m as usize], c))
        .collect();
    out.sort_unstable();
    out
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
mod centre_tests {
    use super::{centre_clusters, centre_labels, UnionFind};
    use rand::RngExt;
    use rand_chacha::rand_core::SeedableRng;

    /// A–B and B–C verified, A–C not: A and C are not in one cluster, and C, only
    /// connected to A through B, is left alone (B went to A's cluster).
    #[test]
    fn a_chain_does_not_merge_its_ends() {
        let by_ordinal = |a: u32, b: u32| a.cmp(&b);
        assert_eq!(
            centre_clusters(3, &[(0, 1), (1, 2)], by_ordinal),
            vec![(0, vec![0, 1])]
        );
        // A longer chain 0–1–2–3–4: centres 0, 2, 4 take 1 and 3.
        assert_eq!(
            centre_clusters(5, &[(3, 4), (1, 2), (0, 1), (2, 3)], by_ordinal),
            vec![(0, vec![0, 1]), (2, vec![2, 3])]
        );
        // Preferring the middle (the keep policy says so): one cluster of three.
        let middle_first = |a: u32, b: u32| (a != 1).cmp(&(b != 1)).then(a.cmp(&b));
        assert_eq!(
            centre_clusters(3, &[(0, 1), (1, 2)], middle_first),
            vec![(1, vec![0, 1, 2])]
        );
        assert_eq!(
            centre_labels(&[(10, 20), (20, 30)]),
            vec![(10, 10), (20, 10)]
        );
    }

    /// On random graphs: every member has an edge to its centre, the clusters are
    /// disjoint, each centre is the best of its cluster, no document left alone has
    /// an edge to a centre that was free to take it, the result does not depend on
    /// the edges' order, and a graph of cliques gives its components.
    #[test]
    fn centres_hold_their_definition_on_random_graphs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        for _ in 0..200 {
            let n = rng.random_range(2..40usize);
            let mut edges: Vec<(u32, u32)> = (0..rng.random_range(0..80))
                .map(|_| (rng.random_range(0..n as u32), rng.random_range(0..n as u32)))
                .filter(|(a, b)| a != b)
                .collect();
            let has = |a: u32, b: u32| edges.contains(&(a, b)) || edges.contains(&(b, a));
            let got = centre_clusters(n, &edges, |a, b| a.cmp(&b));
            let mut owner = vec![None; n];
            for (c, members) in &got {
                assert!(members.contains(c) && members.len() > 1);
                for &m in members {
                    assert!(owner[m as usize].is_none(), "{m} in two clusters");
                    owner[m as usize] = Some(*c);
                    assert!(m == *c || has(*c, m), "{m} not verified against {c}");
                    assert!(m >= *c, "centre {c} is not the best of its cluster");
                }
            }
            // A document outside every cluster with an edge to a centre came before
            // that centre was chosen... impossible: the centre would have taken it.
            for d in 0..n as u32 {
                if owner[d as usize].is_none() {
                    for (c, _) in &got {
                        assert!(!has(*c, d), "{d} left alone beside centre {c}");
                    }
                }
            }
            let mut shuffled = edges.clone();
            shuffled.reverse();
            assert_eq!(centre_clusters(n, &shuffled, |a, b| a.cmp(&b)), got);
            // Cliques: the components of union-find.
            let mut uf = UnionFind::new(n);
            for &(a, b) in &edges {
                uf.union(a, b);
            }
            let groups = uf.groups();
            edges.clear();
            for g in &groups {
                for (i, &a) in g.iter().enumerate() {
                    for &b in &g[i + 1..] {
                        edges.push((a, b));
                    }
                }
            }
            let cliques: Vec<Vec<u32>> = centre_clusters(n, &edges, |a, b| a.cmp(&b))
                .into_iter()
                .map(|(_, m)| m)
                .collect();
            assert_eq!(cliques, groups);
        }
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
