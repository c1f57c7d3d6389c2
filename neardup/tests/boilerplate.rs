//! Boilerplate removal on a generated multi-site corpus where every page of a site
//! carries a large template: without removal distinct pages of one site merge; with it
//! they do not, while planted near-duplicates (within a site and on a mirror site) are
//! still found, and the mirror tops the mirror report.
use neardup::sketch::boilerplate::BoilerplateConfig;
use neardup::synth::{generate, parse_proportions, SynthConfig};
use neardup::{Dedup, Document, Pipeline, Preset};
use std::sync::Arc;

fn corpus() -> (Vec<Document>, Vec<(String, String)>) {
    let c = generate(&SynthConfig {
        base_documents: 360,
        words: (90, 160),
        duplicate_rate: 0.3,
        hosts: 3,
        template_sites: 3,
        template_words: 600,
        html_share: 0.3,
        variants: parse_proportions("exact=1,edit=1,timestamp=1,header=1,dynamic=1,format=1")
            .unwrap(),
        seed: 12,
        ..SynthConfig::default()
    });
    let mut truth: Vec<(String, String)> = c
        .truth
        .iter()
        .map(|t| (t.base.clone(), t.variant.clone()))
        .collect();
    let mut docs = c.documents;
    // A mirror of site0 (template included) on another host, each page slightly changed.
    let copies: Vec<Document> = docs
        .iter()
        .filter(|d| {
            d.url
                .as_deref()
                .is_some_and(|u| u.contains("//site0.example/"))
        })
        .map(|d| {
            let mut m = d.clone();
            m.id = format!("copy-{}", d.id);
            m.url = d
                .url
                .as_ref()
                .map(|u| u.replace("site0.example", "copy-of-site0.example"));
            m.body = match &d.body {
                neardup::Body::Text(t) => neardup::Body::Text(format!("{t} mirrored")),
                neardup::Body::Html(h) => neardup::Body::Html(format!("{h}<p>mirrored</p>")),
            };
            m
        })
        .collect();
    assert!(copies.len() > 100);
    truth.extend(copies.iter().map(|m| (m.id[5..].to_string(), m.id.clone())));
    docs.extend(copies);
    (docs, truth)
}

/// The base document a record was made from.
fn base(id: &str) -> &str {
    let id = id.strip_prefix("copy-").unwrap_or(id);
    id.split("-v").next().unwrap_or(id)
}

fn wrong_pairs(d: &Dedup) -> usize {
    d.pairs
        .iter()
        .filter(|p| base(&d.ids[p.a as usize]) != base(&d.ids[p.b as usize]))
        .count()
}

fn together(d: &Dedup, a: &str, b: &str) -> bool {
    let pos = |id: &str| d.ids.iter().position(|x| x == id).unwrap() as u32;
    let (a, b) = (pos(a), pos(b));
    d.clusters
        .iter()
        .any(|c| c.members.contains(&a) && c.members.contains(&b))
}

#[test]
fn template_pages_merge_without_removal_and_not_with_it() {
    let (docs, truth) = corpus();
    let mut b = Pipeline::builder();
    b.preset(Preset::Recall);
    let plain = b.build().unwrap();
    let without = plain.run(docs.clone()).unwrap();
    without.reconcile(docs.len() as u64).unwrap();
    // Distinct pages of one site merge through their shared template.
    let wrong = wrong_pairs(&without);
    assert!(
        wrong > 100,
        "the template should merge distinct pages: {wrong}"
    );
    assert!(without.clusters.iter().any(|c| {
        let mut bases: Vec<&str> = c
            .members
            .iter()
            .map(|&m| base(&without.ids[m as usize]))
            .collect();
        bases.sort();
        bases.dedup();
        bases.len() > 10
    }));

    let bp = plain
        .learn_boilerplate(
            docs.clone().into_iter().map(Ok),
            |r| r,
            BoilerplateConfig::default(),
        )
        .unwrap();
    // Every site (the mirror included) has its template found.
    assert_eq!(bp.sites_with_boilerplate(), 4, "{:?}", bp.report());
    for s in bp.report() {
        assert!(
            s.error <= 5,
            "Misra-Gries undercount stays small here: {s:?}"
        );
        assert!(s.shingles >= 590, "{s:?}");
    }
    let n = docs.len() as u64;
    let with = plain.with_boilerplate(Arc::new(bp)).run(docs).unwrap();
    with.reconcile(n).unwrap();
    assert_eq!(wrong_pairs(&with), 0, "no distinct pages merge");
    assert!(with.stats.boilerplate_pages > 400);
    // Planted near-duplicates are still found, within the site and across (mirror).
    let missed: Vec<&(String, String)> = truth
        .iter()
        .filter(|(a, b)| !together(&with, a, b))
        .collect();
    assert!(
        missed.is_empty(),
        "missed {} of {}: {:?}",
        missed.len(),
        truth.len(),
        &missed[..missed.len().min(5)]
    );
    // The mirror is the top host pair.
    let m = with.mirrors();
    assert_eq!(
        (m[0].site_a.as_str(), m[0].site_b.as_str()),
        ("copy-of-site0.example", "site0.example")
    );
}

#[test]
fn small_sites_and_pages_without_a_site_are_untouched() {
    let (docs, _) = corpus();
    // Only 5 pages of site1 and pages without URL: nothing is removed.
    let few: Vec<Document> = docs
        .iter()
        .filter(|d| d.url.as_deref().is_some_and(|u| u.contains("//site1.")))
        .take(5)
        .cloned()
        .chain(docs.iter().take(50).map(|d| Document {
            url: None,
            ..d.clone()
        }))
        .map(|d| Document {
            id: format!("{}-{}", d.id, d.url.is_some()),
            ..d
        })
        .collect();
    let p = Pipeline::builder().build().unwrap();
    let bp = p
        .learn_boilerplate(
            few.clone().into_iter().map(Ok),
            |r| r,
            BoilerplateConfig::default(),
        )
        .unwrap();
    assert_eq!(bp.sites_with_boilerplate(), 0);
    let a = p.run(few.clone()).unwrap();
    let b = p.with_boilerplate(Arc::new(bp)).run(few).unwrap();
    assert_eq!(b.stats.boilerplate_pages, 0);
    assert_eq!(a.pairs, b.pairs);
}
