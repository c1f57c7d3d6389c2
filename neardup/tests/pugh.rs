//! Pugh's bucket checksums: the edit model, the bitmap join, the candidate generator.
use neardup::candidates::{
    bitmap_join, bitmap_join_partitioned, BucketLimits, CandidateGenerator, CandidateStats,
    PughChecksums,
};
use neardup::sketch::pugh::{all_lists_changed, detection_probability, Order, Pugh, PughConfig};
use neardup::synth::{generate, SynthConfig};
use neardup::{Pipeline, SketchConfig};
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

mod common;
use common::brute_pairs;

#[test]
fn formula_matches_the_slides() {
    assert!((all_lists_changed(4, 4) - 0.09375).abs() < 1e-9);
    assert!((all_lists_changed(4, 8) - 0.6229).abs() < 1e-3);
    assert_eq!(all_lists_changed(4, 3), 0.0);
    assert!((detection_probability(4, 2, 8) - (1.0 - 0.6229f64.powi(2))).abs() < 1e-3);
}

/// A document of `n` distinct words, then `e` edits of distinct words: remove every
/// occurrence of an existing word, or add occurrences of a new one.
fn edited(rng: &mut ChaCha8Rng, n: usize, e: usize) -> (Vec<u64>, Vec<u64>) {
    let words: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let mut doc: Vec<u64> = words
        .iter()
        .flat_map(|&w| std::iter::repeat_n(w, 1 + (w % 3) as usize))
        .collect();
    let base = doc.clone();
    let mut touched = BTreeSet::new();
    for _ in 0..e {
        if rng.random::<bool>() {
            let w = loop {
                let w = words[rng.random_range(0..n)];
                if touched.insert(w) {
                    break w;
                }
            };
            doc.retain(|&x| x != w);
        } else {
            let w: u64 = rng.random();
            for _ in 0..rng.random_range(1..4) {
                let p = rng.random_range(0..=doc.len());
                doc.insert(p, w);
            }
        }
    }
    (base, doc)
}

#[test]
fn empirical_detection_rate_matches_the_formula() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for &(lists, repeats, e) in &[
        (4usize, 1usize, 4usize),
        (4, 1, 8),
        (4, 2, 8),
        (8, 1, 12),
        (2, 3, 3),
    ] {
        for order in [Order::Insensitive, Order::Sensitive] {
            let p = Pugh::new(
                PughConfig {
                    lists,
                    repeats,
                    order,
                    shingles: false,
                },
                0,
            );
            let trials = 1500;
            let mut hit = 0;
            let (mut a, mut b) = (vec![0; lists * repeats], vec![0; lists * repeats]);
            for _ in 0..trials {
                let (x, y) = edited(&mut rng, 200, e);
                p.checksums(&x, &mut a);
                p.checksums(&y, &mut b);
                hit += (Pugh::shared(&a, &b) > 0) as usize;
            }
            let want = detection_probability(lists, repeats, e as u32);
            let got = hit as f64 / trials as f64;
            let tol = 4.0 * (want * (1.0 - want) / trials as f64).sqrt() + 0.005;
            assert!(
                (got - want).abs() <= tol,
                "L={lists} R={repeats} e={e} {order:?}: {got} vs {want} ± {tol}"
            );
        }
    }
}

#[test]
fn order_insensitive_lists_ignore_moved_text_and_empty_lists_never_match() {
    let p = Pugh::new(PughConfig::default(), 0);
    let (mut a, mut b) = ([0u64; 4], [0u64; 4]);
    let doc: Vec<u64> = (1..100).collect();
    let mut moved = doc[50..].to_vec();
    moved.extend_from_slice(&doc[..50]);
    p.checksums(&doc, &mut a);
    p.checksums(&moved, &mut b);
    assert_eq!(a, b);
    let s = Pugh::new(
        PughConfig {
            order: Order::Sensitive,
            ..PughConfig::default()
        },
        0,
    );
    s.checksums(&doc, &mut a);
    s.checksums(&moved, &mut b);
    assert_ne!(a, b);
    // One term: three empty lists, which match nothing.
    p.checksums(&[7], &mut a);
    p.checksums(&[8], &mut b);
    assert_eq!(a.iter().filter(|&&v| v == 0).count(), 3);
    assert_eq!(Pugh::shared(&a, &b), 0);
    p.checksums(&[], &mut a);
    assert_eq!(a, [0; 4]);
    assert_eq!(Pugh::shared(&a, &a), 0);
}

#[test]
fn bitmap_join_equals_a_plain_hash_join() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for n in [10usize, 1000, 20000] {
        // Mostly unique fingerprints, some shared by 2–5 documents, some empty.
        let mut entries: Vec<(u64, u32)> = Vec::new();
        let mut doc = 0u32;
        while entries.len() < n {
            let fp: u64 = rng.random::<u64>() | 1;
            let k = if rng.random_range(0..10) == 0 {
                rng.random_range(2..6)
            } else {
                1
            };
            for _ in 0..k {
                entries.push((fp, doc));
                doc += 1;
            }
            if rng.random_range(0..50) == 0 {
                entries.push((0, doc));
                doc += 1;
            }
        }
        let mut want = BTreeSet::new();
        let mut by_fp: std::collections::HashMap<u64, Vec<u32>> = Default::default();
        for &(fp, d) in &entries {
            if fp != 0 {
                by_fp.entry(fp).or_default().push(d);
            }
        }
        for ds in by_fp.values() {
            for i in 0..ds.len() {
                for j in i + 1..ds.len() {
                    want.insert((ds[i].min(ds[j]), ds[i].max(ds[j])));
                }
            }
        }
        let (got, stats) = bitmap_join(&entries, 2, 8, false);
        assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want, "n={n}");
        // Partitioned when the bitmap would exceed 1 KiB: the same pairs.
        let (parted, pstats, parts) = bitmap_join_partitioned(&entries, 2, 8, false, 1024);
        assert_eq!(
            parted.into_iter().collect::<BTreeSet<_>>(),
            want,
            "n={n} partitioned"
        );
        assert!(n < 1000 || parts > 1, "n={n}: {parts} partitions");
        assert_eq!(pstats.input, stats.input);
        // Clusters: the connected components of the plain join.
        let (clusters, _) = neardup::candidates::bitmap_clusters(&entries, doc as usize, 4096);
        let mut uf = neardup::cluster::UnionFind::new(doc as usize);
        for &(a, b) in &want {
            uf.union(a, b);
        }
        assert_eq!(clusters, uf.groups());
        // Uniques removed by the bitmaps except those that collided (counted).
        let uniques = by_fp.values().filter(|d| d.len() == 1).count() as u64;
        let shared_entries: u64 = by_fp
            .values()
            .filter(|d| d.len() > 1)
            .map(|d| d.len() as u64)
            .sum();
        assert_eq!(stats.survivors, shared_entries + stats.collided_uniques);
        assert!(stats.collided_uniques <= uniques / 10 + 2, "{stats:?}");
        assert_eq!(
            stats.removed_per_pass.iter().sum::<u64>() + stats.survivors,
            stats.input - entries.iter().filter(|e| e.0 == 0).count() as u64
        );
    }
}

#[test]
fn generator_returns_every_pair_sharing_a_checksum() {
    let corpus = generate(&SynthConfig {
        base_documents: 150,
        words: (20, 80),
        vocabulary: 200,
        duplicate_rate: 0.5,
        seed: 3,
        ..Default::default()
    });
    let cfg = SketchConfig::builder()
        .pugh(Some(PughConfig {
            lists: 8,
            repeats: 2,
            ..Default::default()
        }))
        .build()
        .unwrap();
    let d = Pipeline::builder()
        .sketch_config(cfg)
        .candidates(std::sync::Arc::new(PughChecksums {
            limits: BucketLimits::default(),
        }))
        .charikar_threshold(0)
        .build()
        .unwrap()
        .run(corpus.documents)
        .unwrap();
    let active: Vec<u32> = (0..d.fates.len() as u32)
        .filter(|&i| !matches!(d.fates[i as usize], neardup::Fate::ExactDuplicate { .. }))
        .collect();
    let want = brute_pairs(&d, |a, b| {
        Pugh::shared(
            d.sketches.get(a as usize).pugh,
            d.sketches.get(b as usize).pugh,
        ) > 0
    });
    assert!(!want.is_empty());
    let got = PughChecksums {
        limits: BucketLimits::default(),
    }
    .candidates(&d.sketches, &active, &mut CandidateStats::default())
    .unwrap();
    assert_eq!(got.iter().copied().collect::<BTreeSet<_>>(), want);
    let near: BTreeSet<(u32, u32)> = d
        .pairs
        .iter()
        .filter(|p| p.kind == neardup::PairKind::Near)
        .map(|p| (p.a, p.b))
        .collect();
    assert_eq!(near, want);
}
