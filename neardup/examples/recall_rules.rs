//! Scores candidate rules for the `recall` preset on labelled pairs (the development
//! set): every pair sketched with `m` single min-values (supershingles of width 1) and
//! a Charikar projection, then precision, recall and F1 of
//!
//! * the estimated resemblance alone (`agreeing min-values / m ≥ t`);
//! * LSH bands of `r` rows as stage one, and the estimate as stage two;
//! * the same with "or the projection agrees in ≥ c bits".
//!
//!     cargo run --release --example recall_rules -- PAIRS.jsonl
//!
//! Used to choose the recall preset's settings (the guide's accuracy page).
use neardup::eval::read_pairs;
use neardup::sketch::Features;
use neardup::{SketchConfig, Sketcher};

struct Scored {
    agree: Vec<bool>,
    charikar: u32,
    positive: bool,
}

fn f1(outcomes: impl Iterator<Item = (bool, bool)>) -> (f64, f64, f64) {
    let (mut tp, mut fp, mut fneg) = (0f64, 0f64, 0f64);
    for (said, truth) in outcomes {
        match (said, truth) {
            (true, true) => tp += 1.0,
            (true, false) => fp += 1.0,
            (false, true) => fneg += 1.0,
            _ => {}
        }
    }
    let p = if tp + fp > 0.0 { tp / (tp + fp) } else { 0.0 };
    let r = tp / (tp + fneg).max(1.0);
    let f = if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    (p, r, f)
}

fn banded(agree: &[bool], rows: usize) -> bool {
    agree.chunks_exact(rows).any(|b| b.iter().all(|&x| x))
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: recall_rules PAIRS.jsonl");
    let pairs = read_pairs(std::path::Path::new(&path)).expect("read pairs");
    let ms: Vec<usize> = std::env::var("M")
        .unwrap_or("96".into())
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    for &m in &ms {
        for k in [3usize] {
            for (bits, feat) in [
                (384usize, Features::Terms),
                (256, Features::Shingles),
                (512, Features::Shingles),
                (1024, Features::Shingles),
            ] {
                let cfg = SketchConfig::builder()
                    .shingle_size(k)
                    .minhashes(m)
                    .supershingles(m)
                    .charikar_bits(bits)
                    .charikar_features(feat)
                    .build()
                    .expect("config");
                let sk = Sketcher::new(cfg).expect("sketcher");
                let scored: Vec<Scored> = pairs
                    .iter()
                    .map(|p| {
                        let (a, b) = (sk.sketch(&p.a), sk.sketch(&p.b));
                        Scored {
                            agree: a
                                .supershingles
                                .iter()
                                .zip(&b.supershingles)
                                .map(|(x, y)| x == y)
                                .collect(),
                            charikar: neardup::sketch::charikar::agreement(
                                &a.charikar,
                                &b.charikar,
                            ),
                            positive: p.label >= 1.0,
                        }
                    })
                    .collect();
                let est = |s: &Scored| s.agree.iter().filter(|&&x| x).count() as f64 / m as f64;
                let mut best = (0.0, String::new());
                let mut note = |f: (f64, f64, f64), what: String| {
                    if f.2 > best.0 {
                        best = (
                            f.2,
                            format!("{what}: P {:.3} R {:.3} F1 {:.3}", f.0, f.1, f.2),
                        );
                    }
                };
                let pairs2 = |s: &Scored| s.agree.chunks_exact(2).filter(|c| c[0] && c[1]).count();
                for s1 in 28..44 {
                    for s2 in 44..62 {
                        for c in (bits / 2..=bits).step_by((bits / 128).max(1)) {
                            for rows in [1usize, 2, 3] {
                                note(
                                    f1(scored.iter().map(|s| {
                                        let p2 = pairs2(s);
                                        (
                                            banded(&s.agree, 2 * rows)
                                                && p2 >= s1
                                                && (p2 >= s2 || s.charikar >= c as u32),
                                            s.positive,
                                        )
                                    })),
                                    format!(
                                        "band{} & ss2>={s1} & (ss2>={s2} | charikar>={c})",
                                        2 * rows
                                    ),
                                );
                            }
                        }
                    }
                }
                for t in 20..=90 {
                    let t = t as f64 / 100.0;
                    note(
                        f1(scored.iter().map(|s| (est(s) >= t, s.positive))),
                        format!("est>={t}"),
                    );
                    for rows in [2usize, 3, 4, 6, 8] {
                        note(
                            f1(scored
                                .iter()
                                .map(|s| (banded(&s.agree, rows) && est(s) >= t, s.positive))),
                            format!("band{rows} & est>={t}"),
                        );
                        for c in (bits / 2..=bits).step_by((bits / 64).max(1)) {
                            for t2 in [0.0, 0.3, 0.4, 0.5] {
                                if t2 >= t {
                                    continue;
                                }
                                note(
                                    f1(scored.iter().map(|s| {
                                        (
                                            banded(&s.agree, rows)
                                                && est(s) >= t2
                                                && (est(s) >= t || s.charikar >= c as u32),
                                            s.positive,
                                        )
                                    })),
                                    format!("band{rows} & est>={t2} & (est>={t} | charikar>={c})"),
                                );
                            }
                        }
                    }
                }
                println!("m={m} k={k} bits={bits} {feat:?}: {}", best.1);
            }
        }
    }
}
