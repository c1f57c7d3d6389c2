//! The simhash index against brute force, for every design and k.
use neardup::index::{
    all_pairs, batch_query, rotate_sort_pairs, CompressedIndex, Design, Match, SimhashIndex,
};
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn flip(rng: &mut ChaCha8Rng, fp: u64, bits: u32) -> u64 {
    let mut out = fp;
    let mut chosen = std::collections::BTreeSet::new();
    while chosen.len() < bits as usize {
        chosen.insert(rng.random_range(0..64u32));
    }
    for b in chosen {
        out ^= 1 << b;
    }
    out
}

/// Random fingerprints plus, for each base, neighbours at every distance 0..=k+1.
fn data(rng: &mut ChaCha8Rng, bases: usize, k: u32) -> Vec<u64> {
    let mut v = Vec::new();
    for _ in 0..bases {
        let b: u64 = rng.random();
        v.push(b);
        for d in 0..=k + 1 {
            v.push(flip(rng, b, d));
        }
    }
    v
}

fn brute(stored: &[u64], q: u64, k: u32) -> Vec<Match> {
    let mut m: Vec<Match> = stored
        .iter()
        .enumerate()
        .filter_map(|(i, &f)| {
            let d = (f ^ q).count_ones();
            (d <= k).then_some(Match {
                id: i as u64,
                distance: d,
            })
        })
        .collect();
    m.sort_unstable_by_key(|m| (m.distance, m.id));
    m
}

fn check(design: Design, seed: u64) {
    let k = design.k;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stored = data(&mut rng, 300, k);
    let idx = SimhashIndex::new(design.clone()).unwrap();
    // Half bulk-loaded, half inserted one by one (some still in the buffer).
    let half = stored.len() / 2;
    idx.extend(
        stored[..half]
            .iter()
            .enumerate()
            .map(|(i, &f)| (i as u64, f)),
    );
    for (i, &f) in stored.iter().enumerate().skip(half) {
        idx.insert(i as u64, f);
    }
    let mut queries: Vec<u64> = stored.iter().step_by(3).copied().collect();
    queries.extend(stored.iter().step_by(7).map(|&f| flip(&mut rng, f, k)));
    queries.extend(stored.iter().step_by(11).map(|&f| flip(&mut rng, f, k + 1)));
    let compressed = CompressedIndex::from_index(&idx);
    assert_eq!(compressed.fingerprints(), {
        let mut d = stored.clone();
        d.sort_unstable();
        d.dedup();
        d.len()
    });
    for q in queries {
        let want = brute(&stored, q, k);
        assert_eq!(idx.query(q), want, "design {design:?}");
        assert_eq!(compressed.query(q), want, "compressed, design {design:?}");
    }
}

#[test]
fn named_designs_have_the_papers_table_counts_and_prefixes() {
    let t = |d: Design| {
        let tables = d.tables();
        let p: Vec<u8> = tables.iter().map(|t| t.prefix).collect();
        (
            tables.len(),
            *p.iter().min().unwrap(),
            *p.iter().max().unwrap(),
        )
    };
    assert_eq!(t(Design::k3_20()), (20, 31, 33));
    assert_eq!(t(Design::k3_10()), (10, 25, 26));
    assert_eq!(t(Design::k3_4()), (4, 16, 16));
    assert_eq!(t(Design::k3_16()), (16, 28, 28));
    assert_eq!(Design::named("k3-16").unwrap(), Design::k3_16());
    assert_eq!(Design::named("4:6,5").unwrap().levels, [6, 5]);
    assert!(Design::named("3:3").is_err());
    assert!(Design::named("nope").is_err());
    // About 6·10^10 tables: refused at once, before any table is made.
    let t = std::time::Instant::now();
    let err = Design::named("16:40").unwrap_err().to_string();
    assert!(err.contains("62852101650 tables"), "{err}");
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(Design::named("k3-20").unwrap().table_count(), 20);
    assert!(
        Design::named("3:4,4,4,4,4,4,4,4,4").is_err(),
        "more than 8 levels"
    );
}

#[test]
fn every_named_design_equals_brute_force() {
    for (i, d) in [
        Design::k3_20(),
        Design::k3_16(),
        Design::k3_10(),
        Design::k3_4(),
    ]
    .into_iter()
    .enumerate()
    {
        check(d, i as u64);
    }
}

#[test]
fn automatic_designs_for_k_1_to_7_equal_brute_force() {
    for k in 1..=7 {
        let d = Design::auto(k, 30, 10).unwrap();
        // 2^30 fingerprints, probes of about 2^10: every prefix at least 20 bits.
        assert!(d.tables().iter().all(|t| t.prefix >= 20), "{d:?}");
        check(d, 100 + k as u64);
    }
    // More data, smaller probes: at least as many tables.
    assert!(
        Design::auto(3, 34, 4).unwrap().tables().len()
            >= Design::auto(3, 20, 4).unwrap().tables().len()
    );
}

#[test]
fn insert_remove_and_the_crawler_loop() {
    let idx = SimhashIndex::new(Design::k3_10()).unwrap();
    assert!(idx.query_or_insert(1, 0xdead_beef).is_empty());
    assert_eq!(
        idx.query_or_insert(2, 0xdead_beef ^ 0b101),
        vec![Match { id: 1, distance: 2 }]
    );
    assert_eq!(idx.len(), 1, "a near-duplicate is not inserted");
    idx.insert(3, 0xdead_beef);
    assert_eq!(
        idx.query(0xdead_beef),
        vec![Match { id: 1, distance: 0 }, Match { id: 3, distance: 0 }]
    );
    idx.remove(1);
    assert_eq!(idx.query(0xdead_beef), vec![Match { id: 3, distance: 0 }]);
    idx.compact();
    assert_eq!(idx.query(0xdead_beef), vec![Match { id: 3, distance: 0 }]);
    assert_eq!(idx.len(), 1);
    // Many threads query at once.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert_eq!(idx.query(0xdead_beef ^ 1).len(), 1));
        }
    });
}

#[test]
fn batch_and_all_pairs_equal_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let stored = data(&mut rng, 200, 3);
    let queries: Vec<u64> = stored
        .iter()
        .step_by(5)
        .map(|&f| flip(&mut rng, f, 2))
        .collect();
    let got = batch_query(
        &Design::k3_10(),
        &queries,
        stored.iter().enumerate().map(|(i, &f)| Ok((i as u64, f))),
        97,
    )
    .unwrap();
    let mut want = Vec::new();
    for (qi, &q) in queries.iter().enumerate() {
        for m in brute(&stored, q, 3) {
            want.push((qi as u32, m.id, m.distance));
        }
    }
    want.sort_unstable();
    assert_eq!(got, want);
    let brute_pairs = |fps: &[u64], k: u32| {
        let mut want = Vec::new();
        for i in 0..fps.len() {
            for j in i + 1..fps.len() {
                let d = (fps[i] ^ fps[j]).count_ones();
                if d <= k {
                    want.push((i as u32, j as u32, d));
                }
            }
        }
        want
    };
    let want = brute_pairs(&stored, 3);
    assert_eq!(all_pairs(&Design::k3_20(), &stored).unwrap(), want);
    // Every design, and the one chosen for the size, gives the same pairs; so do
    // fingerprints crowded into a few prefixes (groups of more than 32, sorted).
    let mut crowded = stored.clone();
    for i in 0..300u64 {
        let base = 0xabcd_ef01_2345_0000u64 ^ ((i % 3) << 62);
        crowded.push(base | (rng.random::<u64>() & 0x0fff) | ((i & 1) << 20));
    }
    for fps in [&stored, &crowded] {
        for k in [2, 3] {
            let want = brute_pairs(fps, k);
            let auto = Design::for_all_pairs(fps.len(), k);
            for d in [
                Design::named(&format!("{k}:{}", k + 1)).unwrap(),
                Design::named(&format!("{k}:6")).unwrap(),
                auto,
            ] {
                assert_eq!(all_pairs(&d, fps).unwrap(), want, "{d:?}");
            }
        }
    }
    assert!(brute_pairs(&crowded, 3).len() > brute_pairs(&stored, 3).len() + 50);
    assert_eq!(Design::for_all_pairs(1_000_000, 3), Design::k3_4());
    assert_eq!(Design::for_all_pairs(10_000_000, 3), Design::k3_10());
    // The rotate-sort baseline is approximate: a subset of the exact pairs.
    let approx = rotate_sort_pairs(&stored, 3, 4, 4);
    assert!(approx.iter().all(|p| want.binary_search(p).is_ok()));
    assert!(!approx.is_empty());
}

#[test]
fn saved_index_round_trips_and_rejects_damage() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let stored = data(&mut rng, 20, 3);
    let idx = SimhashIndex::new(Design::k3_16()).unwrap();
    idx.extend(stored.iter().enumerate().map(|(i, &f)| (i as u64 * 10, f)));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.idx");
    idx.save(&p).unwrap();
    let back = SimhashIndex::load(&p).unwrap();
    assert_eq!(back.design(), idx.design());
    assert_eq!(back.entries(), idx.entries());
    for &q in &stored {
        assert_eq!(back.query(q), idx.query(q));
    }
    let bytes = std::fs::read(&p).unwrap();
    for cut in 0..bytes.len() {
        assert!(SimhashIndex::from_bytes(&bytes[..cut]).is_err());
    }
    for i in (0..bytes.len()).step_by(3) {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        assert!(SimhashIndex::from_bytes(&b).is_err(), "flip at {i}");
    }
}

/// A batch whose shards are cut into several chunks per worker (shard 6000 on a pool
/// of 4 threads: chunks of 1500) finds exactly the brute-force pairs.
#[test]
fn batch_query_with_several_chunks_per_shard() {
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    let stored: Vec<u64> = (0..20_000).map(|_| rng.random()).collect();
    let queries: Vec<u64> = (0..300)
        .map(|i| {
            if i % 2 == 0 {
                flip(&mut rng, stored[i * 37], (i % 4) as u32 + 1)
            } else {
                rng.random()
            }
        })
        .collect();
    let design = Design::named("k3-10").unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let got = pool
        .install(|| {
            batch_query(
                &design,
                &queries,
                stored.iter().enumerate().map(|(i, &f)| Ok((i as u64, f))),
                6000,
            )
        })
        .unwrap();
    let mut want = Vec::new();
    for (q, &fq) in queries.iter().enumerate() {
        for (i, &fs) in stored.iter().enumerate() {
            let d = (fq ^ fs).count_ones();
            if d <= 3 {
                want.push((q as u32, i as u64, d));
            }
        }
    }
    assert!(want.len() >= 100);
    assert_eq!(got, want);
}

/// Eight threads race `query_or_insert` over fingerprints that come in near-duplicate
/// groups: every fingerprint is either stored or answered with a stored match, and no
/// two stored fingerprints are within distance k of each other (two racing
/// near-duplicates never both come back "new").
#[test]
fn concurrent_query_or_insert_never_stores_two_near_duplicates() {
    let mut rng = ChaCha8Rng::seed_from_u64(67);
    let mut fps = Vec::new();
    for _ in 0..300 {
        let base: u64 = rng.random();
        for j in 0..6 {
            fps.push(if j == 0 {
                base
            } else {
                flip(&mut rng, base, 1)
            });
        }
    }
    let idx = SimhashIndex::new(Design::named("k3-4").unwrap()).unwrap();
    let results: Vec<(u64, u64, Vec<Match>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let (idx, fps) = (&idx, &fps);
                s.spawn(move || {
                    let mut out = Vec::new();
                    // Each thread walks the groups in its own order, so they collide.
                    for k in 0..fps.len() {
                        let i = (k * 7 + t * 131) % fps.len();
                        if i % 8 == t {
                            out.push((i as u64, fps[i], idx.query_or_insert(i as u64, fps[i])));
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(results.len(), fps.len());
    let stored: Vec<(u64, u64)> = idx.entries();
    let inserted: Vec<u64> = results
        .iter()
        .filter(|r| r.2.is_empty())
        .map(|r| r.0)
        .collect();
    assert_eq!(stored.len(), inserted.len());
    for (x, &(_, a)) in stored.iter().enumerate() {
        for &(_, b) in &stored[x + 1..] {
            assert!((a ^ b).count_ones() > 3, "two stored near-duplicates");
        }
    }
    for (_, fp, m) in &results {
        for m in m {
            let f = stored
                .iter()
                .find(|s| s.0 == m.id)
                .expect("a match is stored")
                .1;
            assert_eq!((f ^ fp).count_ones(), m.distance);
        }
    }
}

#[test]
fn len_is_unchanged_by_removing_an_absent_id() {
    let idx = SimhashIndex::new(Design::named("k3-4").unwrap()).unwrap();
    idx.insert(1, 0xff);
    idx.insert(2, 0xff00);
    idx.remove(99);
    assert_eq!(idx.len(), 2);
    idx.remove(1);
    idx.remove(1);
    assert_eq!(idx.len(), 1);
    assert_eq!(idx.query(0xff).len(), 0);
}

/// Found by the `index_file_crc` fuzz target: a design whose blocks are fewer than k
/// (`{"k":6,"levels":[4]}`) is an error, and counting its tables does not overflow.
#[test]
fn a_level_with_fewer_blocks_than_k_is_an_error() {
    let d: Design = serde_json::from_str(r#"{"k":6,"levels":[4]}"#).unwrap();
    assert!(d.validate().is_err());
    assert_eq!(d.table_count(), 0);
}
