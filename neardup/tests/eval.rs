//! The evaluation harness against hand-computed values.
use neardup::eval::{evaluate, read_pairs, score_pairs, sweep, Confusion, EvalConfig};
use neardup::Pipeline;

#[test]
fn confusion_and_sweep_match_hand_computation() {
    // predicted, actual
    let c = Confusion::of([
        (true, true),
        (true, false),
        (false, true),
        (false, false),
        (true, true),
    ]);
    assert_eq!((c.tp, c.fp, c.fn_, c.tn), (2, 1, 1, 1));
    assert!((c.precision - 2.0 / 3.0).abs() < 1e-12);
    assert!((c.recall - 2.0 / 3.0).abs() < 1e-12);
    assert!((c.f1 - 2.0 / 3.0).abs() < 1e-12);
    let empty = Confusion::of([(false, true)]);
    assert_eq!((empty.precision, empty.recall, empty.f1), (0.0, 0.0, 0.0));
    // Scores 0.9 (pos), 0.8 (neg), 0.8 (pos), 0.1 (neg): thresholds 0.9, 0.8, 0.1.
    let s = sweep(&[(0.9, true), (0.8, false), (0.8, true), (0.1, false)]);
    assert_eq!(s.len(), 3);
    assert_eq!(
        (s[0].threshold, s[0].precision, s[0].recall),
        (0.9, 1.0, 0.5)
    );
    assert_eq!(
        (s[1].threshold, s[1].precision, s[1].recall),
        (0.8, 2.0 / 3.0, 1.0)
    );
    assert_eq!(
        (s[2].threshold, s[2].precision, s[2].recall),
        (0.1, 0.5, 1.0)
    );
    assert!((s[1].f1 - 0.8).abs() < 1e-12);
}

#[test]
fn labelled_pairs_are_read_and_scored() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pairs.jsonl");
    let long: String = (0..200).map(|i| format!("word{i} ")).collect();
    let lines = [
        serde_json::json!({"id": "same", "text_a": long, "text_b": long, "label": 3}),
        serde_json::json!({"id": "near", "text_a": long, "text_b": format!("{long} extra"), "label": 2}),
        serde_json::json!({"id": "far", "text_a": long, "html_b": "<p>completely different words here</p>", "label": 0.5, "url": "http://x.org/"}),
    ];
    std::fs::write(
        &p,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let pairs = read_pairs(&p).unwrap();
    assert_eq!(pairs.len(), 3);
    assert_eq!(pairs[2].b.url.as_deref(), Some("http://x.org/"));
    let pipeline = Pipeline::builder().build().unwrap();
    let scores = score_pairs(&pipeline, &pairs);
    assert!(scores[0].exact && scores[0].jaccard == 1.0 && scores[0].agreement == 384);
    assert!(!scores[1].exact && scores[1].jaccard > 0.9);
    assert!(scores[2].jaccard == 0.0);
    let report = evaluate(&pipeline, &scores, &EvalConfig::default(), true);
    assert_eq!((report.positives, report.negatives), (2, 1));
    let get = |n: &str| report.algorithms.iter().find(|a| a.name == n).unwrap();
    let exact = get("exact").confusion;
    assert_eq!((exact.tp, exact.fp, exact.fn_, exact.tn), (1, 0, 1, 1));
    let j = get("jaccard").confusion;
    assert_eq!((j.tp, j.fp, j.fn_, j.tn), (2, 0, 0, 1));
    assert_eq!(get("combined").confusion.tp, 2);
    assert!(get("jaccard").best.as_ref().unwrap().f1 == 1.0);
    // A bad line names the file and line.
    std::fs::write(&p, "{\"text_a\": \"x\", \"label\": 1}\n").unwrap();
    let err = read_pairs(&p).unwrap_err().to_string();
    assert!(err.contains("record 1") && err.contains("text_b"), "{err}");
}

#[test]
fn corpus_evaluation_counts_pairs_against_the_truth() {
    use neardup::eval::evaluate_corpus;
    use neardup::Document;
    let long: String = (0..300)
        .map(|i| format!("term{} ", i % 97 + i / 7))
        .collect();
    let other: String = (0..300).map(|i| format!("word{i} ")).collect();
    let docs = vec![
        Document::text("a", long.clone()).with_url("http://one.example/a"),
        Document::text("a-copy", long.clone()).with_url("http://two.example/a"),
        Document::text("b", other.clone()).with_url("http://one.example/b"),
        Document::text("b-variant", format!("{other} plus")).with_url("http://one.example/b2"),
        Document::text("c", "something else entirely, short").with_url("http://one.example/c"),
    ];
    let truth = vec![
        neardup::eval::Planted {
            kind: "mirror".into(),
            ..neardup::eval::Planted::new("a", "a-copy")
        },
        neardup::eval::Planted::new("b", "b-variant"),
    ];
    let algos = vec![
        ("combined".to_string(), Pipeline::builder().build().unwrap()),
        (
            "exact".to_string(),
            Pipeline::builder()
                .charikar_threshold(384)
                .min_shared(6)
                .build()
                .unwrap(),
        ),
    ];
    let r = evaluate_corpus(&docs, &truth, &algos).unwrap();
    assert_eq!((r[0].all.tp, r[0].all.reported, r[0].all.truth), (2, 2, 2));
    assert_eq!(
        (r[0].all.precision, r[0].all.recall, r[0].f1),
        (1.0, 1.0, 1.0)
    );
    // One same-site truth pair (b), one cross-site (a).
    assert_eq!((r[0].same_site.truth, r[0].cross_site.truth), (1, 1));
    assert_eq!(r[0].near_duplicates_per_document, vec![(1, 4)]);
    // Term differences: 0 for the exact copy, 1 for the variant.
    assert_eq!(r[0].term_differences, vec![(0, 1), (1, 1)]);
    assert_eq!((r[1].all.tp, r[1].all.reported), (1, 1));
    assert_eq!(r[1].all.recall, 0.5);
    // Recall per planted kind: the strict run finds only the exact mirror copy.
    assert_eq!(
        r[1].recall_by_kind,
        vec![("".to_string(), 1, 0), ("mirror".to_string(), 1, 1)]
    );
}
