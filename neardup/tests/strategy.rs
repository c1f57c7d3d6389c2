//! Sites, same-site / cross-site strategies, the mirror report.
use neardup::sketch::broder::shared_supershingles;
use neardup::sketch::charikar::agreement;
use neardup::synth::{generate, SynthConfig};
use neardup::verify::{site_of, PairClass, SiteMode, Strategy};
use neardup::{Document, PairKind, Pipeline};
use std::collections::BTreeSet;

mod common;
use common::brute_pairs;

#[test]
fn site_of_a_page() {
    let d = |u: &str| Document::text("x", "t").with_url(u);
    assert_eq!(
        site_of(&d("HTTP://WWW.Example.COM:8080/a?b"), SiteMode::Host).as_deref(),
        Some("www.example.com")
    );
    assert_eq!(
        site_of(&d("https://www.example.com./"), SiteMode::HostNoWww).as_deref(),
        Some("example.com")
    );
    assert_eq!(
        site_of(&d("http://news.bbc.co.uk/x"), SiteMode::Domain).as_deref(),
        Some("bbc.co.uk")
    );
    assert_eq!(
        site_of(&d("http://user:pw@a.b.example.org/"), SiteMode::Domain).as_deref(),
        Some("example.org")
    );
    assert_eq!(site_of(&d("not a url"), SiteMode::Host), None);
    assert_eq!(site_of(&Document::text("x", "t"), SiteMode::Host), None);
    let mut given = d("http://a.com/");
    given.site = Some("my-site".into());
    assert_eq!(
        site_of(&given, SiteMode::Domain).as_deref(),
        Some("my-site")
    );
    assert_eq!(PairClass::of(Some(1), Some(1)), PairClass::SameSite);
    assert_eq!(PairClass::of(Some(1), Some(2)), PairClass::CrossSite);
    assert_eq!(PairClass::of(None, Some(2)), PairClass::Unknown);
}

/// A corpus on a few sites, plus a mirror of site0 on another host with small changes.
fn corpus_with_mirror() -> Vec<Document> {
    let c = generate(&SynthConfig {
        base_documents: 300,
        words: (300, 900),
        duplicate_rate: 0.3,
        hosts: 5,
        edit_words: (1, 2),
        seed: 31,
        ..Default::default()
    });
    let mut docs = c.documents;
    let mirrored: Vec<Document> = docs
        .iter()
        .filter(|d| {
            d.url
                .as_deref()
                .is_some_and(|u| u.contains("//site0.example/"))
                && !d.id.contains("-v")
        })
        .map(|d| {
            let url = d
                .url
                .as_deref()
                .unwrap_or("")
                .replace("site0.example", "copy-of-site0.example");
            Document::text(
                format!("mirror-{}", d.id),
                format!("{} mirrored copy", d.body.as_str()),
            )
            .with_url(url)
        })
        .collect();
    assert!(mirrored.len() > 10);
    docs.extend(mirrored);
    docs
}

#[test]
fn mirror_comes_first_and_pairs_carry_their_class() {
    let d = Pipeline::builder()
        .build()
        .unwrap()
        .run(corpus_with_mirror())
        .unwrap();
    let m = d.mirrors();
    assert!(!m.is_empty());
    let top = &m[0];
    let names = [top.site_a.as_str(), top.site_b.as_str()];
    assert!(
        names.contains(&"site0.example") && names.contains(&"copy-of-site0.example"),
        "{m:?}"
    );
    assert!(top.share_b > 0.8, "{top:?}");
    for p in &d.pairs {
        assert_eq!(
            p.class,
            PairClass::of(d.site_of[p.a as usize], d.site_of[p.b as usize])
        );
    }
    assert_eq!(
        d.stats.same_site_pairs + d.stats.cross_site_pairs + d.stats.unknown_site_pairs,
        d.pairs.len() as u64
    );
    assert!(d.stats.cross_site_pairs > 10 && d.stats.same_site_pairs > 10);
}

#[test]
fn henzinger_strategy_applies_its_threshold_per_class() {
    let docs = corpus_with_mirror();
    let d = Pipeline::builder()
        .strategy(Strategy::Henzinger {
            same_site: Some(383),
            cross_site: Some(370),
        })
        .build()
        .unwrap()
        .run(docs.clone())
        .unwrap();
    let want = brute_pairs(&d, |a, b| {
        let (sa, sb) = (d.sketches.get(a as usize), d.sketches.get(b as usize));
        let class = PairClass::of(d.site_of[a as usize], d.site_of[b as usize]);
        let t = if class == PairClass::SameSite {
            383
        } else {
            370
        };
        shared_supershingles(sa.supershingles, sb.supershingles) >= 2
            && agreement(sa.charikar, sb.charikar) >= t
    });
    let got: BTreeSet<(u32, u32)> = d
        .pairs
        .iter()
        .filter(|p| p.kind == PairKind::Near)
        .map(|p| (p.a, p.b))
        .collect();
    assert_eq!(got, want);
    // Stricter within sites than the uniform rule: fewer same-site near pairs.
    let u = Pipeline::builder().build().unwrap().run(docs).unwrap();
    let same = |d: &neardup::Dedup| {
        d.pairs
            .iter()
            .filter(|p| p.kind == PairKind::Near && p.class == PairClass::SameSite)
            .count()
    };
    assert!(same(&d) < same(&u), "{} vs {}", same(&d), same(&u));
}
