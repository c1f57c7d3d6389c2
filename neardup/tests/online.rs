//! The online deduper against a brute-force scan with the same rule, from one thread and
//! many, and under racing inserts.

use neardup::synth::{generate, SynthConfig};
use neardup::verify::PairClass;
use neardup::{Deduper, Document, Pipeline, Sketch, Verdict};

fn corpus(seed: u64) -> Vec<Document> {
    generate(&SynthConfig {
        base_documents: 220,
        words: (60, 300),
        duplicate_rate: 0.6,
        hosts: 5,
        edit_words: (1, 8),
        template_sites: 2,
        html_share: 0.2,
        seed,
        ..Default::default()
    })
    .documents
}

fn pipeline(recall: bool) -> Pipeline {
    let mut b = Pipeline::builder();
    if recall {
        b.preset(neardup::Preset::Recall)
            .strategy(neardup::verify::Strategy::Henzinger {
                same_site: None,
                cross_site: None,
            });
    }
    b.build().unwrap()
}

/// A verdict, the stored id it names, and the class of sites of a near-duplicate.
type Labelled = (String, Option<String>, Option<PairClass>);

/// The documented semantics, scanned: each document against every stored one (the new
/// ones so far) in insertion order; an equal exact fingerprint first, then the first
/// stored document the rule calls a near-duplicate (with the pair's class of sites). No
/// postings, no bucket keys.
fn brute_force(p: &Pipeline, docs: &[Document]) -> Vec<Labelled> {
    let mut stored: Vec<(String, Sketch, Option<String>)> = Vec::new();
    let mut out = Vec::new();
    for d in docs {
        let Ok((s, site)) = p.sketch_record(d) else {
            out.push(("rejected".into(), None, None));
            continue;
        };
        if let Some((id, ..)) = stored.iter().find(|(_, o, _)| o.exact == s.exact) {
            out.push(("exact".into(), Some(id.clone()), None));
            continue;
        }
        let class = |osite: &Option<String>| PairClass::of(osite.as_deref(), site.as_deref());
        let near = stored.iter().find(|(_, o, osite)| {
            p.rule()
                .judge(class(osite), o.as_ref(), s.as_ref())
                .near_duplicate
        });
        match near {
            Some((id, _, osite)) => out.push(("near".into(), Some(id.clone()), Some(class(osite)))),
            None => {
                out.push(("new".into(), None, None));
                stored.push((d.id.clone(), s, site));
            }
        }
    }
    out
}

fn label(v: &Verdict) -> (String, Option<String>) {
    (v.as_str().to_string(), v.of().map(str::to_string))
}

/// [`label`] with the class of sites the rule judged a near-duplicate in.
fn label_class(v: &Verdict) -> Labelled {
    let class = match v {
        Verdict::Near { judgement, .. } => Some(judgement.class),
        _ => None,
    };
    (v.as_str().to_string(), v.of().map(str::to_string), class)
}

#[test]
fn verdicts_equal_a_brute_force_scan_with_the_same_rule() {
    // The third run reserves room first and again halfway (rebuilding the tables with
    // documents stored): the same verdicts.
    for (recall, seed, reserve) in [(false, 1, false), (true, 2, false), (false, 1, true)] {
        // Every fifth page without a URL, so without a site.
        let mut docs = corpus(seed);
        for d in docs.iter_mut().step_by(5) {
            d.url = None;
        }
        let p = pipeline(recall);
        let want = brute_force(&p, &docs);
        let d = Deduper::new(p).unwrap();
        if reserve {
            d.reserve(100).unwrap();
        }
        let got: Vec<_> = docs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                if reserve && i == docs.len() / 2 {
                    d.reserve(100_000).unwrap();
                }
                label_class(&d.check_and_insert(x).unwrap())
            })
            .collect();
        assert_eq!(got, want, "recall preset: {recall}, reserve: {reserve}");
        let count = |k: &str| got.iter().filter(|(v, ..)| v == k).count();
        // Near-duplicates judged in every class of sites.
        for class in [
            PairClass::SameSite,
            PairClass::CrossSite,
            PairClass::Unknown,
        ] {
            assert!(got.iter().any(|(.., c)| *c == Some(class)), "{class:?}");
        }
        assert!(count("near") > 10 && count("exact") > 5 && count("new") > 100);
        assert_eq!(d.len(), count("new"));
    }
}

/// The deduper leaves the simhash out of its sketches only when its rule does not read
/// it. With a simhash filter for cross-site pairs it keeps it (left out, every simhash
/// would be 0 and every cross-site candidate would pass), and its verdicts are the
/// brute-force scan's. A state keeps what it holds: one made without simhashes is
/// refused by that rule; one made with them goes on with them under the default rule,
/// and its compacted snapshot holds the batch sketches whole.
#[test]
fn the_simhash_is_left_out_only_when_the_rule_does_not_read_it() {
    use neardup::online::SyncPolicy::Never;
    use neardup::verify::filter::SimhashFilter;
    let docs = corpus(3);
    let plain = pipeline(false);
    let rule = plain.rule().clone().with_class_filter(
        PairClass::CrossSite,
        std::sync::Arc::new(SimhashFilter { max_distance: 2 }),
    );
    let p = Pipeline::builder().rule(rule).build().unwrap();
    assert!(p.rule().reads_simhash() && !plain.rule().reads_simhash());
    let want = brute_force(&p, &docs);
    assert_ne!(
        want,
        brute_force(&plain, &docs),
        "the filter changes verdicts"
    );
    let d = Deduper::new(p.clone()).unwrap();
    assert!(d.pipeline().sketcher().config().simhash);
    let got: Vec<_> = docs
        .iter()
        .map(|x| label_class(&d.check_and_insert(x).unwrap()))
        .collect();
    assert_eq!(got, want);
    let d = Deduper::new(plain.clone()).unwrap();
    assert!(!d.pipeline().sketcher().config().simhash);

    let dir = tempfile::tempdir().unwrap();
    let without = dir.path().join("without");
    {
        let d = Deduper::open(&without, plain.clone(), Never).unwrap();
        for x in &docs[..20] {
            d.check_and_insert(x).unwrap();
        }
    }
    let err = Deduper::open(&without, p.clone(), Never)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"simhash\":false"), "{err}");
    let with = dir.path().join("with");
    {
        let d = Deduper::open(&with, p.clone(), Never).unwrap();
        for x in &docs[..20] {
            d.check_and_insert(x).unwrap();
        }
    }
    let d = Deduper::open(&with, plain.clone(), Never).unwrap();
    assert!(d.pipeline().sketcher().config().simhash);
    for x in &docs[20..40] {
        d.check_and_insert(x).unwrap();
    }
    d.compact().unwrap();
    let snap = neardup::persist::sketches::SavedSketches::load(&with.join("snapshot.1")).unwrap();
    assert!(snap.config.simhash && snap.len() > 10);
    for (i, id) in snap.ids.iter().enumerate() {
        let doc = docs.iter().find(|x| &x.id == id).unwrap();
        let want = plain.sketch_record(doc).unwrap().0;
        assert_ne!(want.simhash, 0);
        assert_eq!(snap.sketches.get(i).to_owned(), want, "{id}");
    }
}

#[test]
fn batches_sketched_on_many_threads_give_the_brute_force_verdicts() {
    // Near-duplicates of one another inside one batch, an empty document and one over
    // the size cap among them: each batch gives what the scan gives one by one.
    let mut docs = corpus(4);
    docs[17].body = neardup::Body::Text(String::new());
    docs[40].body = neardup::Body::Text("word ".repeat(3000));
    for threads in [1, 4] {
        let mut b = Pipeline::builder();
        b.threads(Some(threads)).max_document_bytes(10_000);
        let p = b.build().unwrap();
        let want = brute_force(&p, &docs);
        assert_eq!(want[17].0, "rejected");
        assert_eq!(want[40].0, "rejected");
        for size in [1, 7, 64, docs.len()] {
            let d = Deduper::new(p.clone()).unwrap();
            let got: Vec<Labelled> = docs
                .chunks(size)
                .flat_map(|batch| d.check_and_insert_many(batch))
                .map(|v| label_class(&v.unwrap()))
                .collect();
            assert_eq!(got, want, "{threads} threads, batches of {size}");
            let stored = want.iter().filter(|(v, ..)| v == "new").count();
            assert_eq!(d.len(), stored);
        }
    }
}

#[test]
fn checks_from_eight_threads_equal_checks_from_one() {
    let docs = corpus(3);
    let (first, rest) = docs.split_at(docs.len() / 2);
    let d = Deduper::new(pipeline(false)).unwrap();
    for x in first {
        d.check_and_insert(x).unwrap();
    }
    let one: Vec<_> = rest.iter().map(|x| label(&d.check(x).unwrap())).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    let eight: Vec<_> = pool.install(|| {
        use rayon::prelude::*;
        rest.par_iter()
            .map(|x| label(&d.check(x).unwrap()))
            .collect()
    });
    assert_eq!(one, eight);
    assert!(one.iter().any(|(v, _)| v != "new"));
}

#[test]
fn racing_near_duplicates_are_never_both_new() {
    let base: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    let p = pipeline(false);
    for round in 0..20 {
        let d = Deduper::new(p.clone()).unwrap();
        // Sixteen near-duplicates (a different last word each; every pair is one the rule
        // accepts), inserted by 8 threads at once.
        let docs: Vec<Document> = (0..16)
            .map(|i| {
                let mut words = base.clone();
                words.push(format!("last{round}x{i}"));
                Document::text(format!("r{round}-{i}"), words.join(" "))
            })
            .collect();
        let sk: Vec<_> = docs.iter().map(|x| p.sketch_record(x).unwrap().0).collect();
        for a in &sk {
            for b in &sk {
                assert!(
                    p.rule()
                        .judge(PairClass::Unknown, a.as_ref(), b.as_ref())
                        .near_duplicate
                );
            }
        }
        let verdicts: Vec<Verdict> = std::thread::scope(|s| {
            let handles: Vec<_> = docs
                .chunks(2)
                .map(|c| {
                    let d = &d;
                    s.spawn(move || {
                        c.iter()
                            .map(|x| d.check_and_insert(x).unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let new = verdicts.iter().filter(|v| **v == Verdict::New).count();
        assert_eq!(new, 1, "round {round}: {verdicts:?}");
        assert_eq!(d.len(), 1);
    }
}

#[test]
fn remove_and_replace() {
    let d = Deduper::new(pipeline(false)).unwrap();
    let text: String = (0..200).map(|i| format!("t{i} ")).collect();
    let a = Document::text("a", text.clone());
    let b = Document::text("b", text.clone());
    assert_eq!(d.check_and_insert(&a).unwrap(), Verdict::New);
    // A retry of a stored document changes nothing.
    assert_eq!(d.check_and_insert(&a).unwrap(), Verdict::New);
    assert_eq!(d.len(), 1);
    assert_eq!(d.check(&b).unwrap(), Verdict::Exact { of: "a".into() });
    assert!(d.remove("a").unwrap());
    assert!(!d.remove("a").unwrap());
    assert_eq!(d.check(&b).unwrap(), Verdict::New);
    assert!(d.is_empty());
    // Inserting an id again replaces its document.
    assert_eq!(d.insert(&a).unwrap(), Verdict::New);
    d.insert(&Document::text(
        "a",
        "something else entirely, with other words",
    ))
    .unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d.check(&b).unwrap(), Verdict::New);
    assert!(matches!(
        d.check(&Document::text("e", "   ")).unwrap(),
        Verdict::Rejected { .. }
    ));
}

/// Every way in rejects what a batch run rejects, for the same reason, and stores
/// nothing: a document over `max_document_bytes` (not sketched) and one without terms.
#[test]
fn the_deduper_rejects_what_a_batch_run_rejects() {
    use neardup::RejectReason;
    let p = Pipeline::builder().max_document_bytes(100).build().unwrap();
    let d = Deduper::new(p).unwrap();
    let stored = Document::text("s", "some words here and there");
    assert_eq!(d.check_and_insert(&stored).unwrap(), Verdict::New);
    let too_large = Verdict::Rejected {
        reason: RejectReason::TooLarge {
            bytes: 200,
            max: 100,
        },
    };
    let empty = Verdict::Rejected {
        reason: RejectReason::Empty,
    };
    // The big one repeats a stored document's words: refused before any look at them.
    let big = Document::text(
        "big",
        "some words here and there ".repeat(8)[..200].to_string(),
    );
    let blank = Document::text("blank", "  ...  ");
    for (doc, want) in [(&big, &too_large), (&blank, &empty)] {
        assert_eq!(&d.check(doc).unwrap(), want, "check of {}", doc.id);
        assert_eq!(&d.check_and_insert(doc).unwrap(), want, "{}", doc.id);
        assert_eq!(&d.insert(doc).unwrap(), want, "insert of {}", doc.id);
        let many = d.check_and_insert_many(&[doc.clone(), stored.clone()]);
        assert_eq!(many.len(), 2);
        assert_eq!(many[0].as_ref().unwrap(), want, "many: {}", doc.id);
    }
    assert_eq!(d.len(), 1, "nothing rejected was stored");
}

/// `insert` stores a document whatever its verdict, in every table: an exact duplicate
/// stored by `insert` is found as a near-duplicate's match once its twin is removed (its
/// check stopped at the exact match, before the posting lists, so storing it walks them).
#[test]
fn an_exact_duplicate_stored_by_insert_is_in_the_posting_lists() {
    let d = Deduper::new(pipeline(false)).unwrap();
    // 2,000 distinct terms: one more is a near-duplicate (about 3 Charikar bits apart).
    let text: String = (0..2000).map(|i| format!("t{i} ")).collect();
    assert_eq!(
        d.insert(&Document::text("a1", text.clone())).unwrap(),
        Verdict::New
    );
    assert_eq!(
        d.insert(&Document::text("a2", text.clone())).unwrap(),
        Verdict::Exact { of: "a1".into() }
    );
    assert!(d.remove("a1").unwrap());
    let near = Document::text("n", format!("{text}one"));
    match d.check(&near).unwrap() {
        Verdict::Near { of, .. } => assert_eq!(of, "a2"),
        v => panic!("expected a near-duplicate of a2, got {v:?}"),
    }
}

#[test]
fn batch_only_settings_are_refused() {
    let mut b = Pipeline::builder();
    b.high_recall(Some(380));
    assert!(Deduper::new(b.build().unwrap()).is_err());
}

#[test]
fn state_survives_reopening_torn_tails_and_compaction() {
    let docs = corpus(4);
    let p = pipeline(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let one_pass: Vec<_> = {
        let d = Deduper::new(p.clone()).unwrap();
        docs.iter()
            .map(|x| label(&d.check_and_insert(x).unwrap()))
            .collect()
    };
    let (a, b) = docs.split_at(docs.len() / 2);
    let mut got = Vec::new();
    {
        let d = Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Always).unwrap();
        got.extend(a.iter().map(|x| label(&d.check_and_insert(x).unwrap())));
    }
    let log = path.join("log.0");
    let whole = std::fs::read(&log).unwrap();
    // A torn tail (the last entry cut short, then garbage) is dropped on opening.
    let mut torn = whole.clone();
    torn.extend_from_slice(&whole[12..40]);
    std::fs::write(&log, &torn).unwrap();
    {
        let d = Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Always).unwrap();
        assert_eq!(
            std::fs::read(&log).unwrap(),
            whole,
            "the torn tail is cut off"
        );
        let (b1, b2) = b.split_at(b.len() / 2);
        got.extend(b1.iter().map(|x| label(&d.check_and_insert(x).unwrap())));
        d.compact().unwrap();
        assert!(path.join("snapshot.1").exists() && !path.join("snapshot.0").exists());
        got.extend(b2.iter().map(|x| label(&d.check_and_insert(x).unwrap())));
    }
    assert_eq!(
        got, one_pass,
        "restarts, a torn tail and a compaction change no verdict"
    );
    let d = Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Never).unwrap();
    let stored = one_pass.iter().filter(|(v, _)| v == "new").count();
    assert_eq!(d.len(), stored);
    // Removals are logged too.
    let first = docs[0].id.clone();
    assert!(d.remove(&first).unwrap());
    drop(d);
    let d = Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Always).unwrap();
    assert_eq!(d.len(), stored - 1);
    assert_eq!(d.check(&docs[0]).unwrap(), Verdict::New);
    // A state made with other sketch settings is refused.
    let mut other = Pipeline::builder();
    other.preset(neardup::Preset::Recall);
    assert!(Deduper::open(&path, other.build().unwrap(), Default::default()).is_err());
}

/// `compact` writes the live documents, in the order they were stored (a replaced
/// document where its replacement was stored), each with its site and sketch: against
/// the documents' own sketches, removed and replaced ones left out by hand.
#[test]
fn a_compacted_snapshot_holds_the_live_documents_in_order() {
    let docs = corpus(6);
    let p = pipeline(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let d = Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Never).unwrap();
    // Every document stored (`insert` stores duplicates too), in order.
    let mut want: Vec<Document> = Vec::new();
    for x in &docs {
        d.insert(x).unwrap();
        want.retain(|w| w.id != x.id);
        want.push(x.clone());
    }
    // Every seventh removed; every eleventh replaced by other text under its id.
    for (i, x) in docs.iter().enumerate() {
        if i % 7 == 0 {
            assert!(d.remove(&x.id).unwrap());
            want.retain(|w| w.id != x.id);
        } else if i % 11 == 0 {
            let other = Document::text(x.id.clone(), format!("replaced {i} with new words"));
            d.insert(&other).unwrap();
            want.retain(|w| w.id != x.id);
            want.push(other);
        }
    }
    d.compact().unwrap();
    let snap = neardup::persist::sketches::SavedSketches::load(&path.join("snapshot.1")).unwrap();
    let ids: Vec<&str> = want.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(snap.ids, ids);
    // The paper preset's rule does not read the simhash: the deduper leaves it out, and
    // the snapshot says so. Every other part is the batch sketch's.
    assert!(!snap.config.simhash);
    for (i, w) in want.iter().enumerate() {
        let (mut sketch, site) = p.sketch_record(w).unwrap();
        sketch.simhash = 0;
        assert_eq!(snap.sketches.get(i).to_owned(), sketch, "{}", w.id);
        assert_eq!(snap.sites[i], site, "{}", w.id);
    }
}

/// A zeroed end (what a filesystem can show after a crash for blocks it had allocated
/// but not written, and what version 2 logs, grown ahead of their content, left):
/// reopening keeps every entry before it and cuts it off.
#[test]
fn a_zeroed_log_end_is_cut_off_on_opening() {
    let docs = corpus(4);
    let p = pipeline(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let d = Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Never).unwrap();
    for x in &docs {
        d.check_and_insert(x).unwrap();
    }
    let stored = d.len();
    drop(d);
    let log = path.join("log.0");
    let whole = std::fs::read(&log).unwrap();
    assert_eq!(&whole[8..12], &3u32.to_le_bytes());
    let mut zeroed = whole.clone();
    zeroed.resize(whole.len() + (1 << 20), 0);
    std::fs::write(&log, &zeroed).unwrap();
    let d = Deduper::open(&path, p, neardup::online::SyncPolicy::Never).unwrap();
    assert_eq!(d.len(), stored);
    assert_eq!(std::fs::read(&log).unwrap(), whole, "the zeros are cut off");
    for x in &docs {
        assert_ne!(d.check(x).unwrap(), Verdict::New, "{} is stored", x.id);
    }
}

/// A state is open in one deduper at a time: a second open of the directory fails
/// with `ResourceBusy` (and changes nothing) while the first is alive, and works once
/// it is dropped, with what the first stored.
#[test]
fn a_state_opens_in_one_deduper_at_a_time() {
    let docs = corpus(4);
    let p = pipeline(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let policy = neardup::online::SyncPolicy::Never;
    let first = Deduper::open(&path, p.clone(), policy).unwrap();
    for x in &docs[..10] {
        first.check_and_insert(x).unwrap();
    }
    let log = std::fs::read(path.join("log.0")).unwrap();
    match Deduper::open(&path, p.clone(), policy) {
        Err(neardup::Error::Io {
            path: Some(at),
            source,
        }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ResourceBusy, "{source}");
            assert_eq!(at, path.join("lock"));
        }
        other => panic!("a second open: {other:?}"),
    }
    assert_eq!(
        std::fs::read(path.join("log.0")).unwrap(),
        log,
        "the log is untouched"
    );
    let stored = first.len();
    drop(first);
    let again = Deduper::open(&path, p, policy).unwrap();
    assert_eq!(again.len(), stored);
}

/// A snapshot that holds an id twice (no compaction writes one) is refused with an
/// error naming the id, not opened with two live copies.
#[test]
fn a_snapshot_with_an_id_twice_is_refused() {
    let p = pipeline(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    drop(Deduper::open(&path, p.clone(), neardup::online::SyncPolicy::Always).unwrap());
    let docs = corpus(6);
    let cfg = p.sketcher().config().clone();
    let mut snap = neardup::persist::sketches::SavedSketches {
        config: cfg.clone(),
        ids: Vec::new(),
        sites: Vec::new(),
        sketches: neardup::Sketches::new(&cfg),
    };
    for (i, doc) in docs.iter().take(5).enumerate() {
        let (s, site) = p.sketch_record(doc).unwrap();
        snap.ids.push(if i == 3 {
            "dup".into()
        } else {
            format!("d{i}")
        });
        snap.sites.push(site);
        snap.sketches.push(&s);
    }
    snap.ids[1] = "dup".into();
    snap.save(&path.join("snapshot.0")).unwrap();
    let err = Deduper::open(&path, p, neardup::online::SyncPolicy::Always).unwrap_err();
    assert!(err.to_string().contains("\"dup\" twice"), "{err}");
}

/// What a deduper says it holds: at least each stored document's 124-byte sketch, and
/// far below the 692 bytes of the hash-map layout it replaced (vectors are counted at
/// their capacity, so up to twice what is used).
#[test]
fn memory_grows_by_about_two_hundred_bytes_per_document() {
    let p = pipeline(false);
    let d = Deduper::new(p).unwrap();
    let mut docs = Vec::new();
    for seed in 0..8 {
        docs.extend(corpus(100 + seed).into_iter().map(|mut x| {
            x.id = format!("{seed}/{}", x.id);
            x
        }));
    }
    for doc in &docs {
        d.insert(doc).unwrap();
    }
    let (n, bytes) = (d.len(), d.memory_bytes());
    assert!(n > 1000, "{n}");
    assert!(
        bytes >= 124 * n && bytes <= 450 * n,
        "{bytes} bytes for {n} documents"
    );
}
