//! One verdict: the pipeline, `eval::compare` (what `neardup pair` prints) and `eval`'s
//! configured-rule row agree on every pair, for every preset × strategy × stage-one
//! generator, on a generated corpus spread over several sites.
//!
//! The reference is a brute force over every pair of the records left after the exact
//! pre-pass, asking the rule's definition written out here (not the pipeline's code
//! path): exact, or candidate by the generator's definition and accepted by the filter
//! of the pair's class, or agreement at least the high-recall threshold.
use neardup::candidates::{BucketLimits, CharikarBlocks, PughChecksums, SimhashCandidates};
use neardup::eval::{compare, evaluate, score_pairs, EvalConfig, LabelledPair};
use neardup::index::Design;
use neardup::sketch::broder::shared_supershingles;
use neardup::sketch::charikar::{agreement, hamming};
use neardup::sketch::pugh::PughConfig;
use neardup::synth::{generate, SynthConfig};
use neardup::verify::{PairClass, Strategy};
use neardup::{Document, Fate, PairKind, Pipeline, Preset, SketchRef};
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Gen {
    Broder,
    Pugh,
    Simhash,
    Blocks,
}

fn corpus() -> Vec<Document> {
    let c = generate(&SynthConfig {
        base_documents: 160,
        words: (80, 400),
        duplicate_rate: 0.6,
        hosts: 4,
        edit_words: (1, 6),
        template_sites: 2,
        html_share: 0.3,
        seed: 23,
        ..Default::default()
    });
    c.documents
}

fn pipeline(preset: Preset, henzinger: bool, gen: Gen, high_recall: bool) -> Pipeline {
    let mut b = Pipeline::builder();
    b.preset(preset);
    if henzinger {
        b.strategy(Strategy::Henzinger {
            same_site: None,
            cross_site: None,
        });
    }
    let limits = BucketLimits::default();
    match gen {
        Gen::Broder => {}
        Gen::Pugh => {
            b.sketch_config_mut().pugh = Some(PughConfig::default());
            b.candidates(Arc::new(PughChecksums { limits }));
        }
        Gen::Simhash => {
            b.candidates(Arc::new(SimhashCandidates {
                design: Design::named("k3-10").unwrap(),
            }));
        }
        Gen::Blocks => {
            // 12 of 384 bits (the CLI's default), 32 of the recall preset's 1024.
            let bits = b.sketch_config_mut().charikar_bits as u32;
            b.candidates(Arc::new(CharikarBlocks {
                max_distance: bits / 32,
                limits,
            }));
        }
    }
    if high_recall {
        let bits = b.sketch_config_mut().charikar_bits as u32;
        b.high_recall(Some(bits - bits / 64));
    }
    b.build().unwrap()
}

/// The rule as documented, written out independently of `Rule::judge`.
#[allow(clippy::too_many_arguments)]
fn definition(
    preset: Preset,
    henzinger: bool,
    gen: Gen,
    high_recall: Option<u32>,
    class: PairClass,
    a: SketchRef<'_>,
    b: SketchRef<'_>,
) -> bool {
    let bits = (a.charikar.len() * 64) as u32;
    let (r, t, or_shared) = match preset {
        Preset::Paper => (2, 372, None),
        _ => (35, 815, Some(51)),
    };
    let shared = shared_supershingles(a.supershingles, b.supershingles);
    let agree = agreement(a.charikar, b.charikar);
    let candidate = match gen {
        Gen::Broder => shared >= r,
        Gen::Pugh => a.pugh.iter().zip(b.pugh).any(|(x, y)| x == y && *x != 0),
        Gen::Simhash => (a.simhash ^ b.simhash).count_ones() <= 3,
        Gen::Blocks => hamming(a.charikar, b.charikar) <= bits / 32,
    };
    // Henzinger: same site t + round(8/384 · b), everything else t.
    let need = if henzinger && class == PairClass::SameSite {
        t + (8 * bits + 192) / 384
    } else {
        t
    };
    let accepted = agree >= need || or_shared.is_some_and(|s| shared >= s);
    a.exact == b.exact || (candidate && accepted) || high_recall.is_some_and(|h| agree >= h)
}

#[test]
fn pipeline_pair_and_eval_give_one_verdict() {
    let docs = corpus();
    let mut checked_configs = 0;
    for preset in [Preset::Paper, Preset::Recall] {
        for henzinger in [false, true] {
            for gen in [Gen::Broder, Gen::Pugh, Gen::Simhash, Gen::Blocks] {
                for high_recall in [false, true] {
                    if high_recall && gen != Gen::Broder {
                        continue;
                    }
                    let p = pipeline(preset, henzinger, gen, high_recall);
                    let hr = p.high_recall_threshold();
                    let d = p.run(docs.clone()).unwrap();
                    let what = format!("{preset:?} henzinger={henzinger} {gen:?} hr={hr:?}");
                    let reported: BTreeSet<(u32, u32)> = d
                        .pairs
                        .iter()
                        .filter(|p| p.kind != PairKind::Exact)
                        .map(|p| (p.a, p.b))
                        .collect();
                    let active: Vec<u32> = (0..d.fates.len() as u32)
                        .filter(|&i| {
                            !matches!(
                                d.fates[i as usize],
                                Fate::ExactDuplicate { .. } | Fate::Rejected { .. }
                            )
                        })
                        .collect();
                    let class = |a: u32, b: u32| {
                        PairClass::of(d.site_of[a as usize], d.site_of[b as usize])
                    };
                    let mut want = BTreeSet::new();
                    let mut rejected_candidates = Vec::new();
                    let mut classes = [0usize; 3];
                    for (x, &a) in active.iter().enumerate() {
                        for &b in &active[x + 1..] {
                            let (sa, sb) = (d.sketches.get(a as usize), d.sketches.get(b as usize));
                            let c = class(a, b);
                            let yes = definition(preset, henzinger, gen, hr, c, sa, sb);
                            let j = p.rule().judge(c, sa, sb);
                            assert_eq!(
                                j.near_duplicate, yes,
                                "{what}: rule vs definition on {a},{b}"
                            );
                            if yes {
                                want.insert((a, b));
                                classes[match c {
                                    PairClass::SameSite => 0,
                                    PairClass::CrossSite => 1,
                                    _ => 2,
                                }] += 1;
                            } else if j.candidate {
                                rejected_candidates.push((a, b));
                            }
                        }
                    }
                    assert_eq!(reported, want, "{what}: pipeline vs brute force");
                    assert!(!want.is_empty(), "{what}: some near pairs");
                    // The document-level path (`neardup pair`): sketched again from the
                    // documents, class from their URLs.
                    let sample: Vec<(u32, u32, bool)> = want
                        .iter()
                        .take(25)
                        .map(|&(a, b)| (a, b, true))
                        .chain(
                            rejected_candidates
                                .iter()
                                .take(25)
                                .map(|&(a, b)| (a, b, false)),
                        )
                        .collect();
                    for &(a, b, yes) in &sample {
                        let c = compare(&p, &docs[a as usize], &docs[b as usize]);
                        assert_eq!(
                            c.scores.judgement.near_duplicate, yes,
                            "{what}: compare {a},{b}"
                        );
                        assert_eq!(
                            c.scores.judgement.class,
                            class(a, b),
                            "{what}: class {a},{b}"
                        );
                    }
                    // eval's configured-rule row on the same pairs, labelled by the pipeline.
                    let labelled: Vec<LabelledPair> = sample
                        .iter()
                        .map(|&(a, b, yes)| LabelledPair {
                            id: format!("{a}-{b}"),
                            a: docs[a as usize].clone(),
                            b: docs[b as usize].clone(),
                            label: if yes { 1.0 } else { 0.0 },
                        })
                        .collect();
                    let scores = score_pairs(&p, &labelled);
                    let report = evaluate(&p, &scores, &EvalConfig::default(), false);
                    let row = report
                        .algorithms
                        .iter()
                        .find(|r| r.name == "configured")
                        .expect("a configured-rule row");
                    let c = &row.confusion;
                    assert_eq!((c.fp, c.fn_), (0, 0), "{what}: eval's configured row");
                    assert_eq!(c.tp as usize, sample.iter().filter(|s| s.2).count());
                    checked_configs += 1;
                    if henzinger {
                        assert!(
                            classes[0] > 0 || classes[1] > 0,
                            "{what}: pairs with a site"
                        );
                    }
                }
            }
        }
    }
    assert_eq!(checked_configs, 20);
}

#[test]
fn recall_preset_keeps_its_thresholds_under_the_henzinger_strategy() {
    // The strategy used to re-derive its thresholds from the bit count (1013 / 992 of
    // 1024) and drop the preset's "or ≥ 51 supershingles" rule.
    let p = pipeline(Preset::Recall, true, Gen::Broder, false);
    let rule = p.rule();
    let name = rule.name();
    assert!(name.contains("agreement>=836"), "{name}");
    assert!(name.contains("agreement>=815"), "{name}");
    assert!(name.contains("shared>=51"), "{name}");
    let paper = pipeline(Preset::Paper, true, Gen::Broder, false);
    let name = paper.rule().name();
    assert!(
        name.contains("agreement>=380") && name.contains("agreement>=372"),
        "{name}"
    );
}
