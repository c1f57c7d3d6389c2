//! The corpus generator: reproducible, variants as asked, truth = exactly the planted
//! pairs, each variant kind doing what its name says, bounded memory while streaming.
use neardup::synth::{generate, parse_proportions, Generator, Kind, SynthConfig};
use neardup::{Body, Document, Sketcher};
use std::collections::{HashMap, HashSet};

fn small(seed: u64) -> SynthConfig {
    SynthConfig {
        base_documents: 300,
        words: (40, 120),
        duplicate_rate: 0.5,
        html_share: 0.3,
        template_sites: 2,
        template_words: 30,
        hosts: 4,
        seed,
        ..SynthConfig::default()
    }
}

#[test]
fn same_seed_same_corpus_other_seed_other_corpus() {
    let (a, b, c) = (
        generate(&small(3)),
        generate(&small(3)),
        generate(&small(4)),
    );
    assert_eq!(a.documents, b.documents);
    assert_eq!(a.truth, b.truth);
    assert_ne!(a.documents, c.documents);
}

#[test]
fn truth_lists_exactly_the_planted_pairs() {
    let c = generate(&small(5));
    let pos: HashMap<&str, usize> = c
        .documents
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    assert_eq!(pos.len(), c.documents.len(), "ids are unique");
    let variants: HashSet<&str> = c.truth.iter().map(|t| t.variant.as_str()).collect();
    assert_eq!(variants.len(), c.truth.len());
    for t in &c.truth {
        assert!(pos[t.base.as_str()] < pos[t.variant.as_str()], "{t:?}");
        assert_eq!(t.variant.split("-v").next(), Some(t.base.as_str()));
    }
    // Every document that is not a base document is a planted variant.
    let bases = c.documents.iter().filter(|d| !d.id.contains("-v")).count();
    assert_eq!(bases, 300);
    assert_eq!(bases + c.truth.len(), c.documents.len());
    // Hard negatives: template pages of one site share the template but no truth pair
    // joins two base documents.
    let on_site0 = c
        .documents
        .iter()
        .filter(|d| !d.id.contains("-v") && d.url.as_deref().unwrap_or("").contains("//site0."))
        .count();
    assert!(on_site0 > 30);
}

#[test]
fn variant_kinds_appear_in_the_proportions_asked_for() {
    let cfg = SynthConfig {
        base_documents: 6000,
        words: (5, 10),
        duplicate_rate: 1.0,
        max_variants: 1,
        variants: parse_proportions("exact=1, edit=2,format=1,dynamic=0").unwrap(),
        seed: 11,
        ..SynthConfig::default()
    };
    let c = generate(&cfg);
    assert_eq!(c.truth.len(), 6000);
    let mut count: HashMap<&str, usize> = HashMap::new();
    for t in &c.truth {
        *count.entry(t.kind).or_default() += 1;
    }
    assert_eq!(count.len(), 3, "{count:?}");
    for (kind, p) in [("exact", 0.25f64), ("edit", 0.5), ("format", 0.25)] {
        let n: f64 = 6000.0;
        let sigma = (n * p * (1.0 - p)).sqrt();
        let got = count[kind] as f64;
        assert!(
            (got - n * p).abs() < 4.0 * sigma,
            "{kind}: {got} vs {}",
            n * p
        );
    }
    assert!(parse_proportions("exact").is_err());
    assert!(parse_proportions("nope=1").is_err());
    assert!(Generator::new(SynthConfig {
        variants: vec![(Kind::Exact, 0.0)],
        ..SynthConfig::default()
    })
    .is_err());
}

fn terms(s: &Sketcher, d: &Document) -> Vec<u64> {
    s.analyze(d).terms
}

#[test]
fn each_kind_does_what_its_name_says() {
    let c = generate(&SynthConfig {
        base_documents: 400,
        words: (60, 100),
        duplicate_rate: 1.0,
        html_share: 0.5,
        template_sites: 2,
        template_words: 20,
        hosts: 4,
        seed: 8,
        ..SynthConfig::default()
    });
    let by_id: HashMap<&str, &Document> = c.documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let s = Sketcher::new(Default::default()).unwrap();
    let host = |d: &Document| {
        neardup::document::url_host(d.url.as_deref().unwrap())
            .unwrap()
            .to_string()
    };
    let mut seen = HashSet::new();
    for t in &c.truth {
        let (b, v) = (by_id[t.base.as_str()], by_id[t.variant.as_str()]);
        let (tb, tv) = (terms(&s, b), terms(&s, v));
        seen.insert(t.kind);
        match t.kind {
            "exact" => assert_eq!((&b.body, &b.url), (&v.body, &v.url)),
            "mirror" => {
                assert_eq!(b.body, v.body);
                assert!(host(v).starts_with("mirror"));
            }
            "edit" => {
                assert_eq!(tb.len(), tv.len());
                let diff = tb.iter().zip(&tv).filter(|(x, y)| x != y).count();
                assert!(diff <= 3, "{diff}");
            }
            "timestamp" | "header" | "dynamic" => {
                assert!(tv.len() > tb.len() && tv.len() <= tb.len() + 12, "{t:?}");
            }
            "rebrand" => {
                assert_eq!(tb.len(), tv.len());
                let changed: HashSet<u64> = tb
                    .iter()
                    .zip(&tv)
                    .filter(|(x, y)| x != y)
                    .map(|(x, _)| *x)
                    .collect();
                assert_eq!(changed.len(), 1, "one word replaced everywhere");
            }
            "format" => {
                // The HTML version has the title (the first five words) in front.
                let (html, text) = match (&b.body, &v.body) {
                    (Body::Html(_), Body::Text(_)) => (&tb, &tv),
                    (Body::Text(_), Body::Html(_)) => (&tv, &tb),
                    _ => panic!("format variant must switch formats: {t:?}"),
                };
                assert_eq!(&html[5..], &text[..]);
            }
            "embed" => {
                assert!(host(v).starts_with("embed"));
                // The base page (without its own title) is inside.
                let inner = if matches!(b.body, Body::Html(_)) {
                    &tb[5..]
                } else {
                    &tb[..]
                };
                assert!(tv.windows(inner.len()).any(|w| w == inner), "base inside");
                assert!(tv.len() > tb.len() + tb.len() / 10);
            }
            k => panic!("unknown kind {k}"),
        }
    }
    assert_eq!(seen.len(), Kind::ALL.len());
}

#[test]
fn streams_with_bounded_waiting_variants() {
    let cfg = SynthConfig {
        base_documents: 50_000,
        words: (3, 6),
        duplicate_rate: 1.0,
        max_variants: 3,
        seed: 2,
        ..SynthConfig::default()
    };
    let bound = 2 * cfg.window * cfg.max_variants;
    let mut g = Generator::new(cfg).unwrap();
    let (mut docs, mut max_waiting, mut planted) = (0usize, 0usize, 0usize);
    while let Some((_, t)) = g.next() {
        docs += 1;
        planted += t.is_some() as usize;
        max_waiting = max_waiting.max(g.waiting());
    }
    assert_eq!(docs, 50_000 + planted);
    assert!(max_waiting <= bound, "{max_waiting} > {bound}");
}

#[test]
fn real_documents_as_seeds() {
    let seeds: Vec<Document> = (0..50)
        .map(|i| {
            Document::text(
                format!("real-{i}"),
                format!(
                    "Page {i}: the quick brown fox, number {i}, jumps over {} lazy dogs; fin.",
                    i * 7
                ),
            )
        })
        .collect();
    let c = generate(&SynthConfig {
        base_documents: 1000,
        seeds: Some(std::sync::Arc::new(seeds.clone())),
        duplicate_rate: 0.5,
        seed: 3,
        ..SynthConfig::default()
    });
    let bases: Vec<&Document> = c
        .documents
        .iter()
        .filter(|d| !d.id.contains("-v"))
        .collect();
    assert_eq!(bases.len(), 50, "at most the number of seeds");
    for (b, s) in bases.iter().zip(&seeds) {
        assert_eq!(b.id, s.id);
        assert_eq!(b.body.as_str(), s.body.as_str(), "seed text kept as is");
    }
    assert!(!c.truth.is_empty());
    let html_seed = vec![Document::html("h", "<p>x</p>")];
    assert!(Generator::new(SynthConfig {
        seeds: Some(std::sync::Arc::new(html_seed)),
        ..SynthConfig::default()
    })
    .is_err());
}
