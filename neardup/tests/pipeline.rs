//! The two-stage pipeline on generated corpora with known ground truth, against brute
//! force, across thread counts, and on the big-bucket trap.
use neardup::candidates::{
    BucketLimits, CandidateGenerator, CandidateStats, CharikarBlocks, Supershingles,
};
use neardup::cluster::{ClusterMode, Keep};
use neardup::pipeline::Fate;
use neardup::sketch::broder::shared_supershingles;
use neardup::sketch::charikar::agreement;
use neardup::sketch::{Sketch, SketchRef, Sketches};
use neardup::synth::{generate, SynthConfig};
use neardup::verify::filter::PairFilter;
use neardup::{Dedup, Document, Pipeline, RejectReason, SketchConfig};
use std::collections::{BTreeSet, HashMap};

mod common;
use common::{brute_pairs, near_pairs};
use std::sync::Arc;

/// Brute force of "≥ r supershingles and agreement ≥ t" over the exact-duplicate
/// representatives.
fn brute_force(d: &Dedup, r: usize, t: u32) -> BTreeSet<(u32, u32)> {
    brute_pairs(d, |a, b| {
        let (sa, sb) = (d.sketches.get(a as usize), d.sketches.get(b as usize));
        shared_supershingles(sa.supershingles, sb.supershingles) >= r
            && agreement(sa.charikar, sb.charikar) >= t
    })
}

#[test]
fn pairs_equal_brute_force_of_the_same_definition() {
    let corpus = generate(&SynthConfig {
        base_documents: 250,
        words: (30, 120),
        vocabulary: 300,
        duplicate_rate: 0.5,
        edit_words: (1, 4),
        ..SynthConfig::default()
    });
    for &(r, t) in &[(2usize, 372u32), (1, 340), (3, 300), (1, 0)] {
        let d = Pipeline::builder()
            .min_shared(r)
            .charikar_threshold(t)
            .build()
            .unwrap()
            .run(corpus.documents.clone())
            .unwrap();
        let want = brute_force(&d, r, t);
        assert!(
            !want.is_empty(),
            "r={r} t={t}: the corpus should have pairs"
        );
        assert_eq!(near_pairs(&d), want, "r={r} t={t}");
        assert_eq!(d.stats.candidates.big_buckets, 0);
    }
}

#[test]
fn many_slots_use_pigeonhole_groups_and_stay_exact() {
    // 84 supershingles of 2 min-values: C(84, 2) megashingle passes would be too many,
    // so stage one buckets by groups of slots; it must still find every pair with ≥ r.
    let corpus = generate(&SynthConfig {
        base_documents: 200,
        words: (30, 120),
        vocabulary: 300,
        duplicate_rate: 0.5,
        edit_words: (1, 6),
        seed: 21,
        ..SynthConfig::default()
    });
    let cfg = SketchConfig::builder()
        .shingle_size(3)
        .minhashes(168)
        .supershingles(84)
        .build()
        .unwrap();
    for &r in &[20usize, 35, 60] {
        let d = Pipeline::builder()
            .sketch_config(cfg.clone())
            .min_shared(r)
            .charikar_threshold(0)
            .build()
            .unwrap()
            .run(corpus.documents.clone())
            .unwrap();
        let want = brute_force(&d, r, 0);
        assert!(!want.is_empty(), "r={r}");
        assert_eq!(near_pairs(&d), want, "r={r}");
        assert_eq!(d.stats.candidates.passes as usize, 84 - r + 1);
    }
}

#[test]
fn recall_preset_keeps_candidates_by_charikar_or_many_shared_supershingles() {
    let corpus = generate(&SynthConfig {
        base_documents: 150,
        words: (40, 150),
        vocabulary: 400,
        duplicate_rate: 0.6,
        edit_words: (2, 8),
        seed: 5,
        ..SynthConfig::default()
    });
    let p = Pipeline::builder()
        .preset(neardup::Preset::Recall)
        .build()
        .unwrap();
    assert_eq!(
        (p.min_shared(), p.charikar_threshold(), p.accept_shared()),
        (35, 815, Some(51))
    );
    let d = p.run(corpus.documents.clone()).unwrap();
    let want = brute_pairs(&d, |a, b| {
        let (sa, sb) = (d.sketches.get(a as usize), d.sketches.get(b as usize));
        let shared = shared_supershingles(sa.supershingles, sb.supershingles);
        shared >= 35 && (agreement(sa.charikar, sb.charikar) >= 815 || shared >= 51)
    });
    assert!(want.len() > 20);
    assert_eq!(near_pairs(&d), want);
    // The recall preset finds more of the planted variants than the paper preset.
    let paper = Pipeline::builder()
        .build()
        .unwrap()
        .run(corpus.documents)
        .unwrap();
    assert!(d.stats.near_duplicates > paper.stats.near_duplicates);
}

#[test]
fn finds_planted_near_duplicates_and_nothing_unrelated() {
    let corpus = generate(&SynthConfig {
        base_documents: 400,
        words: (1500, 2500),
        duplicate_rate: 0.4,
        edit_words: (1, 1),
        seed: 42,
        ..SynthConfig::default()
    });
    let ids: HashMap<&str, u32> = corpus
        .documents
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i as u32))
        .collect();
    let d = Pipeline::builder()
        .build()
        .unwrap()
        .run(corpus.documents.clone())
        .unwrap();
    d.reconcile(corpus.documents.len() as u64).unwrap();
    // Cluster of each record.
    let mut cluster_of = vec![u32::MAX; d.ids.len()];
    for (k, c) in d.clusters.iter().enumerate() {
        for &m in &c.members {
            cluster_of[m as usize] = k as u32;
        }
    }
    let base_of = |id: &str| id.split("-v").next().unwrap_or(id).to_string();
    // Precision: every pair joins records of the same base document.
    for p in &d.pairs {
        assert_eq!(
            base_of(&d.ids[p.a as usize]),
            base_of(&d.ids[p.b as usize]),
            "unrelated pair {p:?}"
        );
    }
    // Recall: variants that stay near-identical must be found (not rebranded pages,
    // whose every occurrence of a frequent word changed, nor pages embedded in a larger
    // one, whose resemblance is about 0.87: the paper preset is a precision instrument).
    let mut must = 0;
    for t in corpus
        .truth
        .iter()
        .filter(|t| t.kind != "rebrand" && t.kind != "embed")
    {
        must += 1;
        let (a, b) = (ids[t.base.as_str()], ids[t.variant.as_str()]);
        assert!(
            cluster_of[a as usize] != u32::MAX && cluster_of[a as usize] == cluster_of[b as usize],
            "missed {t:?}"
        );
    }
    assert!(must > 100);
    // Exact and mirror copies are exact duplicates.
    for t in corpus
        .truth
        .iter()
        .filter(|t| t.kind == "exact" || t.kind == "mirror")
    {
        let v = ids[t.variant.as_str()] as usize;
        assert!(
            matches!(d.fates[v], Fate::ExactDuplicate { .. }) || ids[t.base.as_str()] as usize > v
        );
    }
}

#[test]
fn same_output_for_any_thread_count_and_run() {
    let corpus = generate(&SynthConfig {
        base_documents: 300,
        words: (40, 200),
        vocabulary: 500,
        seed: 9,
        ..SynthConfig::default()
    });
    let run = |threads: usize, chunk: usize| {
        let d = Pipeline::builder()
            .threads(Some(threads))
            .chunk_records(chunk)
            .min_shared(1)
            .charikar_threshold(330)
            .high_recall(Some(360))
            .build()
            .unwrap()
            .run(corpus.documents.clone())
            .unwrap();
        (d.fates, d.pairs, d.clusters, d.kept)
    };
    let one = run(1, 4096);
    assert!(!one.1.is_empty());
    assert_eq!(one, run(2, 7));
    assert_eq!(one, run(4, 100));
    assert_eq!(one, run(1, 4096));
}

#[test]
fn runs_inside_rayon_workers_give_the_same_output() {
    use rayon::prelude::*;
    let corpus = generate(&SynthConfig {
        base_documents: 60,
        seed: 4,
        ..SynthConfig::default()
    });
    let run = |threads: Option<usize>| {
        let d = Pipeline::builder()
            .threads(threads)
            .chunk_records(16)
            .build()
            .unwrap()
            .run(corpus.documents.clone())
            .unwrap();
        (d.fates, d.pairs)
    };
    let alone = run(None);
    assert!(!alone.1.is_empty());
    // Called from threads of the global pool, on the global pool (the waiting thread
    // must run the jobs itself rather than block a worker) and on pools of their own.
    let nested: Vec<_> = (0..4)
        .into_par_iter()
        .map(|i| run(if i % 2 == 0 { None } else { Some(1) }))
        .collect();
    for n in nested {
        assert_eq!(n, alone);
    }
    // A one-thread pool whose only worker makes the call.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| run(None)), alone);
}

#[test]
fn a_panic_in_the_parse_function_reaches_the_caller() {
    let p = Pipeline::builder()
        .threads(Some(2))
        .chunk_records(8)
        .build()
        .unwrap();
    // A record type of the caller's own says what it holds (nothing worth counting).
    struct Number(u32);
    impl neardup::RecordBytes for Number {
        fn record_bytes(&self) -> usize {
            0
        }
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.run_with((0..100u32).map(Number), |Number(i)| {
            assert!(i != 57, "record 57");
            Ok(Document::text(
                i.to_string(),
                format!("words of record {i}"),
            ))
        })
    }));
    let payload = outcome.expect_err("the panic must propagate");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("record 57"), "{msg}");
}

#[test]
fn empty_and_oversized_documents_are_rejected_and_accounted() {
    let docs = vec![
        Document::text("a", "some words here and there"),
        Document::text("empty", "  ...  "),
        Document::text("big", "x ".repeat(100)),
        Document::text("a2", "some words here and there"),
    ];
    let d = Pipeline::builder()
        .max_document_bytes(100)
        .build()
        .unwrap()
        .run(docs)
        .unwrap();
    assert_eq!(
        d.fates[1],
        Fate::Rejected {
            reason: RejectReason::Empty
        }
    );
    let Fate::Rejected { reason } = &d.fates[2] else {
        panic!("record 2 is too large: {:?}", d.fates[2])
    };
    assert!(matches!(reason, RejectReason::TooLarge { max: 100, .. }));
    assert_eq!(reason.code(), "too_large");
    assert!(reason.to_string().starts_with("document too large: "));
    assert_eq!(d.fates[3], Fate::ExactDuplicate { of: 0 });
    assert_eq!(
        (
            d.stats.read,
            d.stats.kept,
            d.stats.exact_duplicates,
            d.stats.rejected
        ),
        (4, 1, 1, 2)
    );
    d.reconcile(4).unwrap();
}

/// Candidates: every pair (for tests of clustering).
#[derive(Debug)]
struct AllPairs;
impl CandidateGenerator for AllPairs {
    fn name(&self) -> String {
        "all".into()
    }
    fn candidates(
        &self,
        _: &Sketches,
        active: &[u32],
        _: &mut CandidateStats,
    ) -> neardup::Result<Vec<(u32, u32)>> {
        let mut v = Vec::new();
        for (i, &a) in active.iter().enumerate() {
            for &b in &active[i + 1..] {
                v.push((a, b));
            }
        }
        Ok(v)
    }
    fn is_candidate(&self, _: neardup::SketchRef<'_>, _: neardup::SketchRef<'_>) -> bool {
        true
    }
}

/// Accepts documents whose term counts differ by at most one: a chain 10 ~ 11 ~ 12.
#[derive(Debug)]
struct CloseLength;
impl PairFilter for CloseLength {
    fn name(&self) -> String {
        "close-length".into()
    }
    fn accept(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        a.terms.abs_diff(b.terms) <= 1
    }
}

fn words(n: usize, tag: &str) -> String {
    (0..n)
        .map(|i| format!("{tag}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn verified_mode_stops_chaining_and_keep_policies_pick_representatives() {
    let docs = vec![
        Document::text("c", words(12, "c")),
        Document::text("a", words(10, "a")),
        Document::text("b", words(11, "b")),
    ];
    let run = |mode, keep| {
        Pipeline::builder()
            .candidates(Arc::new(AllPairs))
            .filter(Arc::new(CloseLength))
            .cluster_mode(mode)
            .keep(keep)
            .build()
            .unwrap()
            .run(docs.clone())
            .unwrap()
    };
    let t = run(ClusterMode::Transitive, Keep::First);
    assert_eq!(t.clusters.len(), 1);
    assert_eq!(t.clusters[0].members, [0, 1, 2]);
    assert_eq!(t.clusters[0].representative, 0);
    assert_eq!(t.kept.iter().collect::<Vec<_>>(), [0]);
    // Verified: the representative "c" (12 terms) does not accept "a" (10 terms).
    let v = run(ClusterMode::Verified, Keep::First);
    assert_eq!(v.clusters[0].members, [0, 2]);
    assert_eq!(v.stats.unchained, 1);
    assert_eq!(v.kept.iter().collect::<Vec<_>>(), [0, 1]);
    // Longest keeps "c"; with First and Longest both 0 here, try Priority.
    let l = run(ClusterMode::Transitive, Keep::Longest);
    assert_eq!(l.clusters[0].representative, 0);
    let mut pdocs = docs.clone();
    pdocs[2].priority = Some(5.0);
    pdocs[1].priority = Some(1.0);
    let p = Pipeline::builder()
        .candidates(Arc::new(AllPairs))
        .filter(Arc::new(CloseLength))
        .keep(Keep::Priority)
        .build()
        .unwrap()
        .run(pdocs)
        .unwrap();
    assert_eq!(p.clusters[0].representative, 2);
    assert_eq!(p.fates[0], Fate::NearDuplicate { of: 2 });
}

fn sketches_sharing_one_bucket(n: usize) -> Sketches {
    let cfg = SketchConfig::default();
    let mut s = Sketches::new(&cfg);
    for i in 0..n as u64 {
        let h = neardup::sketch::hash::mix64(i + 1);
        s.push(&Sketch {
            // Slots 0 and 1 shared by all: one megashingle bucket of n documents.
            supershingles: vec![7, 9, h, h ^ 1, h ^ 2, h ^ 3],
            charikar: (0..6)
                .map(|j| neardup::sketch::hash::mix64(h ^ j))
                .collect(),
            simhash: h,
            exact: i as u128,
            terms: 10,
            pugh: Vec::new(),
        });
    }
    s
}

#[test]
fn a_bucket_of_100000_documents_costs_linear_work() {
    let n = 100_000;
    let s = sketches_sharing_one_bucket(n);
    let active: Vec<u32> = (0..n as u32).collect();
    let limits = BucketLimits {
        max_bucket: 1000,
        window: 8,
    };
    let mut stats = CandidateStats::default();
    let pairs = Supershingles::new(2, limits)
        .candidates(&s, &active, &mut stats)
        .unwrap();
    assert_eq!(stats.big_buckets, 1);
    assert_eq!(stats.big_bucket_members, n as u64);
    // Star (n − 1) plus window pairs (≤ 8 per member): linear, not n²/2 = 5·10⁹.
    assert!(
        stats.pairs_enumerated <= 9 * n as u64,
        "{}",
        stats.pairs_enumerated
    );
    assert!(pairs.len() <= 9 * n);
    // Every member is paired with the bucket's first member.
    let star = pairs.iter().filter(|p| p.0 == 0).count();
    assert_eq!(star, n - 1);
}

#[test]
fn charikar_blocks_find_every_pair_within_distance() {
    // Random 384-bit vectors, with planted neighbours at distance 0..=h+1.
    let cfg = SketchConfig::default();
    let mut s = Sketches::new(&cfg);
    let mut truth = BTreeSet::new();
    let h = 8u32;
    for i in 0..400u64 {
        let base: Vec<u64> = (0..6)
            .map(|j| neardup::sketch::hash::mix64(i * 7 + j + 1))
            .collect();
        let idx = s.len() as u32;
        let sk = |c: Vec<u64>, e: u128| Sketch {
            supershingles: vec![e as u64; 6],
            charikar: c,
            simhash: 0,
            exact: e,
            terms: 1,
            pugh: Vec::new(),
        };
        s.push(&sk(base.clone(), idx as u128));
        let flips = (i % (h as u64 + 2)) as usize;
        let mut near = base.clone();
        for f in 0..flips {
            let bit = (f * 47 + i as usize) % 384;
            near[bit / 64] ^= 1 << (bit % 64);
        }
        s.push(&sk(near, idx as u128 + 1));
        if flips as u32 <= h {
            truth.insert((idx, idx + 1));
        }
    }
    let active: Vec<u32> = (0..s.len() as u32).collect();
    let got = CharikarBlocks {
        max_distance: h,
        limits: BucketLimits::default(),
    }
    .candidates(&s, &active, &mut CandidateStats::default())
    .unwrap();
    let mut brute = BTreeSet::new();
    for a in 0..s.len() {
        for b in a + 1..s.len() {
            if neardup::sketch::charikar::hamming(s.get(a).charikar, s.get(b).charikar) <= h {
                brute.insert((a as u32, b as u32));
            }
        }
    }
    assert_eq!(brute, truth);
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), brute);
}

mod union_find {
    use neardup::cluster::UnionFind;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn groups_are_the_connected_components(n in 1usize..60, edges in proptest::collection::vec((0u32..60, 0u32..60), 0..80)) {
            let edges: Vec<(u32, u32)> = edges.into_iter().filter(|(a, b)| (*a as usize) < n && (*b as usize) < n).collect();
            let mut uf = UnionFind::new(n);
            for &(a, b) in &edges { uf.union(a, b); }
            let groups = uf.groups();
            // Reference: label propagation to a fixed point.
            let mut label: Vec<u32> = (0..n as u32).collect();
            loop {
                let mut changed = false;
                for &(a, b) in &edges {
                    let m = label[a as usize].min(label[b as usize]);
                    for x in [a, b] { if label[x as usize] != m { label[x as usize] = m; changed = true; } }
                }
                if !changed { break; }
            }
            let mut want: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
            for x in 0..n as u32 { want.entry(label[x as usize]).or_default().push(x); }
            let want: Vec<Vec<u32>> = want.into_values().filter(|g| g.len() > 1).collect();
            prop_assert_eq!(groups.clone(), want);
            // Invariants: disjoint, sorted, ordered by first member.
            for g in &groups { prop_assert!(g.windows(2).all(|w| w[0] < w[1])); }
            prop_assert!(groups.windows(2).all(|w| w[0][0] < w[1][0]));
        }
    }
}

#[test]
fn simhash_stage_one_equals_brute_force() {
    let corpus = generate(&SynthConfig {
        base_documents: 200,
        words: (30, 200),
        vocabulary: 400,
        duplicate_rate: 0.5,
        seed: 13,
        ..SynthConfig::default()
    });
    let d = Pipeline::builder()
        .candidates(Arc::new(neardup::candidates::SimhashCandidates {
            design: neardup::index::Design::k3_10(),
        }))
        .filter(Arc::new(neardup::verify::filter::AcceptAll))
        .build()
        .unwrap()
        .run(corpus.documents)
        .unwrap();
    let want = brute_pairs(&d, |a, b| {
        (d.sketches.get(a as usize).simhash ^ d.sketches.get(b as usize).simhash).count_ones() <= 3
    });
    assert!(!want.is_empty());
    assert_eq!(near_pairs(&d), want);
}

/// Regression: an empty input (or one where every record is rejected) panicked in stage
/// one, which read the first sketch before checking that there was one.
#[test]
fn empty_and_all_rejected_inputs_with_every_generator() {
    let gens: Vec<Arc<dyn CandidateGenerator>> = vec![
        Arc::new(Supershingles::new(2, BucketLimits::default())),
        Arc::new(Supershingles::new(1, BucketLimits::default())),
        Arc::new(Supershingles {
            band: Some(2),
            ..Supershingles::new(2, BucketLimits::default())
        }),
        Arc::new(CharikarBlocks {
            max_distance: 8,
            limits: BucketLimits::default(),
        }),
        Arc::new(neardup::candidates::PughChecksums {
            limits: BucketLimits::default(),
        }),
        Arc::new(neardup::candidates::SimhashCandidates {
            design: neardup::index::Design::k3_10(),
        }),
    ];
    for g in gens {
        for docs in [
            Vec::new(),
            vec![Document::text("e1", ""), Document::text("e2", "...")],
        ] {
            let n = docs.len() as u64;
            let d = Pipeline::builder()
                .candidates(g.clone())
                .high_recall(Some(380))
                .build()
                .unwrap()
                .run(docs)
                .unwrap();
            assert_eq!((d.stats.read, d.stats.rejected, d.stats.kept), (n, n, 0));
            d.reconcile(n).unwrap();
        }
    }
}

/// The accounting is checked against what the reader counted, not against the fates: a
/// record lost between the reader and the pipeline is caught.
#[test]
fn a_record_lost_after_the_reader_fails_the_accounting() {
    use neardup::io::{Fields, Input, Reader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let c = generate(&SynthConfig {
        base_documents: 40,
        seed: 8,
        ..SynthConfig::default()
    });
    let mut text = String::new();
    for d in &c.documents {
        text.push_str(&serde_json::json!({"id": d.id, "text": d.body.as_str()}).to_string());
        text.push('\n');
    }
    text.push_str("{not json\n");
    std::fs::write(&path, text).unwrap();
    let n = c.documents.len() as u64 + 1;
    let run = |lose: Option<usize>| {
        let reader = Reader::new(
            vec![Input::detect(&path, "c.jsonl", None)],
            Fields::default(),
        );
        let counter = reader.counter();
        let records = reader
            .map(|r| r.unwrap().into_doc().unwrap())
            .enumerate()
            .filter(move |(i, _)| Some(*i) != lose)
            .map(|(_, r)| r);
        let d = Pipeline::builder()
            .build()
            .unwrap()
            .run_records(records)
            .unwrap();
        (d, counter)
    };
    let (d, counter) = run(None);
    assert_eq!(counter.records(), n);
    assert_eq!(counter.per_input().len(), 1);
    d.reconcile(counter.records()).unwrap();
    assert_eq!(d.stats.rejected, 1);
    let (d, counter) = run(Some(7));
    assert_eq!(counter.records(), n, "the reader yielded every record");
    let err = d.reconcile(counter.records()).unwrap_err().to_string();
    assert!(err.contains("accounting broken"), "{err}");
}

/// An exact duplicate whose representative is itself a near duplicate: C = B exactly,
/// B near A. C names B (its exact group's representative), B names A, all three are
/// one cluster kept by A, and the accounting holds.
#[test]
fn an_exact_duplicate_of_a_near_duplicate() {
    let words: Vec<String> = (0..300).map(|i| format!("w{}", i * 7919 % 1000)).collect();
    let a = words.join(" ");
    let b = format!("{a} appended");
    let docs = vec![
        Document::text("A", a),
        Document::text("B", b.clone()),
        Document::text("C", b),
        Document::text(
            "D",
            "something else entirely, with enough words to be a page",
        ),
    ];
    let d = Pipeline::builder().build().unwrap().run(docs).unwrap();
    assert_eq!(d.fates[0], Fate::Kept);
    assert_eq!(d.fates[1], Fate::NearDuplicate { of: 0 });
    assert_eq!(d.fates[2], Fate::ExactDuplicate { of: 1 });
    assert_eq!(d.fates[3], Fate::Kept);
    assert_eq!(d.clusters.len(), 1);
    assert_eq!(d.clusters[0].members, [0, 1, 2]);
    assert_eq!(d.clusters[0].representative, 0);
    d.reconcile(4).unwrap();
}

/// A batch run with the simhash left out: the same clusters as with it, every sketch's
/// simhash 0 and 8 bytes less per document; a rule that reads the simhash refuses such
/// settings when the pipeline is built.
#[test]
fn the_simhash_left_out_changes_nothing_else_and_is_refused_where_read() {
    let docs = generate(&SynthConfig {
        base_documents: 150,
        duplicate_rate: 0.5,
        seed: 12,
        ..Default::default()
    })
    .documents;
    let full = Pipeline::builder()
        .build()
        .unwrap()
        .run(docs.clone())
        .unwrap();
    let mut b = Pipeline::builder();
    b.sketch_config_mut().simhash = false;
    let without = b.build().unwrap().run(docs).unwrap();
    assert_eq!(without.clusters, full.clusters);
    assert_eq!(without.kept, full.kept);
    assert!(full.clusters.len() > 10);
    for i in 0..full.sketches.len() {
        let mut want = full.sketches.get(i).to_owned();
        want.simhash = 0;
        assert_eq!(without.sketches.get(i).to_owned(), want);
    }
    assert_eq!(
        without.sketches.bytes_per_document() + 8,
        full.sketches.bytes_per_document()
    );
    let mut b = Pipeline::builder();
    b.sketch_config_mut().simhash = false;
    b.filter(Arc::new(neardup::verify::filter::SimhashFilter {
        max_distance: 3,
    }));
    let err = b.build().unwrap_err().to_string();
    assert!(err.contains("reads the simhash"), "{err}");
}

/// A text of `n` words drawn from a seeded vocabulary, and its variants with the words
/// at the positions `at` replaced by words of another vocabulary.
fn chain_texts() -> [String; 3] {
    use rand::RngExt;
    use rand_chacha::rand_core::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let words: Vec<String> = (0..400)
        .map(|_| format!("w{}", rng.random_range(0..5000u32)))
        .collect();
    let changed = |every: usize, offset: usize| -> String {
        words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i % every == offset {
                    format!("x{i}")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    // B: every 20th word changed; C: B with every other 20th word changed as well.
    let b = changed(20, 0);
    let c = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i % 20 == 0 || i % 20 == 10 {
                format!("x{i}")
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    [words.join(" "), b, c]
}

/// The recall preset does not chain: with A–B and B–C near-duplicates by the verdict
/// and A–C not (checked first, on the pipeline's own rule), A and C are in no cluster
/// together, and every member of a cluster is a near-duplicate of the member kept.
/// `--cluster-mode transitive` merges all three, as union-find does.
#[test]
fn recall_preset_clusters_do_not_chain() {
    let [a, b, c] = chain_texts();
    let docs = || {
        vec![
            Document::text("a", a.clone()),
            Document::text("b", b.clone()),
            Document::text("c", c.clone()),
        ]
    };
    let p = Pipeline::builder()
        .preset(neardup::Preset::Recall)
        .build()
        .unwrap();
    assert_eq!(p.cluster_mode(), ClusterMode::Verified);
    let judge = |x: &Document, y: &Document| {
        let (sx, sy) = (p.sketcher().sketch(x), p.sketcher().sketch(y));
        p.rule()
            .judge(
                neardup::verify::PairClass::Unknown,
                sx.as_ref(),
                sy.as_ref(),
            )
            .near_duplicate
    };
    let d = docs();
    assert!(judge(&d[0], &d[1]), "premise: A ~ B");
    assert!(judge(&d[1], &d[2]), "premise: B ~ C");
    assert!(!judge(&d[0], &d[2]), "premise: A !~ C");
    for threads in [1, 2] {
        let p = Pipeline::builder()
            .preset(neardup::Preset::Recall)
            .threads(Some(threads))
            .build()
            .unwrap();
        let out = p.run(docs()).unwrap();
        assert_eq!(out.clusters.len(), 1, "{threads} threads");
        assert_eq!(out.clusters[0].members, vec![0, 1]);
        assert_eq!(
            out.fates[2],
            Fate::Kept,
            "C is kept: it is no near-duplicate of A"
        );
        assert_eq!(out.stats.unchained, 1);
    }
    let t = Pipeline::builder()
        .preset(neardup::Preset::Recall)
        .cluster_mode(ClusterMode::Transitive)
        .build()
        .unwrap()
        .run(docs())
        .unwrap();
    assert_eq!(t.clusters[0].members, vec![0, 1, 2], "union-find chains");
}
