//! `neardup eval --pairs FILE --html PAGE`: every algorithm's precision and recall, the
//! precision–recall curves, and each algorithm's errors side by side.

use super::{diff, esc, figure, head, tail, MAX_TERMS};
use crate::error::Result;
use crate::Pipeline;
use std::fmt::Write as _;

/// Pairs shown per algorithm and kind of error on the eval page.
pub const EVAL_EXAMPLES: usize = 8;

/// `neardup eval --pairs FILE --html PAGE`: every algorithm's precision and recall
/// (figures marked with their path in `--json`'s report), the precision–recall curves,
/// and for each algorithm its first false positives and false negatives, each pair's
/// two texts side by side as a word diff of their terms with its measures.
pub fn eval_page(
    pipeline: &Pipeline,
    report: &crate::eval::EvalReport,
    pairs: &[crate::eval::LabelledPair],
    scores: &[crate::eval::PairScores],
    positive_min: f64,
) -> Result<String> {
    let v = serde_json::to_value(report).map_err(|e| crate::Error::output("eval report", e))?;
    let mut h = head("neardup eval");
    let _ = write!(
        h,
        "<p>{} labelled pairs: {} near-duplicates (label ≥ {positive_min}), {} not.</p>",
        pairs.len(),
        figure(&v, "positives"),
        figure(&v, "negatives")
    );
    algorithms_table(&mut h, report, &v);
    h.push_str("</table>");
    if report.algorithms.iter().any(|a| a.sweep.is_some()) {
        h.push_str("<h2>Precision and recall at every threshold</h2>");
        h.push_str(&report.plot());
    }
    let tok = pipeline.sketcher().tokenizer();
    let terms = |d: &crate::Document| {
        let mut t = tok.terms(&d.body, d.url.as_deref());
        t.truncate(MAX_TERMS);
        t
    };
    h.push_str("<h2>Errors, side by side</h2><p>For each algorithm, its first false positives (judged near-duplicates, labelled not) and false negatives (labelled near-duplicates, judged not): the terms compared, <del>only in the first page</del>, <ins>only in the second</ins>.</p>");
    for a in &report.algorithms {
        let _ = write!(
            h,
            "<section class=\"algorithm\" data-algorithm=\"{}\"><h3>{}</h3>",
            esc(&a.name),
            esc(&a.name)
        );
        for (kind, want_predicted) in [("false positives", true), ("false negatives", false)] {
            let errors: Vec<usize> = (0..pairs.len())
                .filter(|&i| {
                    let actual = scores[i].label >= positive_min;
                    a.predicted.get(i) == Some(&want_predicted) && actual != want_predicted
                })
                .collect();
            let _ = write!(h, "<h4>{kind}: {}</h4>", errors.len());
            for &i in errors.iter().take(EVAL_EXAMPLES) {
                let (p, s) = (&pairs[i], &scores[i]);
                let _ = write!(
                    h,
                    "<div class=\"member\" data-pair=\"{}\"><b>{}</b> · label {} · Charikar agreement {} · shared supershingles {} · estimated resemblance {:.3} · Jaccard {:.3}{}</div>",
                    esc(&p.id),
                    esc(&p.id),
                    p.label,
                    s.agreement,
                    s.shared_supershingles,
                    s.estimated_resemblance,
                    s.jaccard,
                    diff(&terms(&p.a), &terms(&p.b))
                );
            }
        }
        h.push_str("</section>");
    }
    h.push_str(&tail());
    Ok(h)
}

/// The table of the algorithms' figures, each marked with its path in the report.
fn algorithms_table(h: &mut String, report: &crate::eval::EvalReport, v: &serde_json::Value) {
    h.push_str("<h2>Algorithms</h2><table id=\"algorithms\"><tr><th>algorithm</th><th>TP</th><th>FP</th><th>FN</th><th>TN</th><th>precision</th><th>recall</th><th>F1</th><th>best F1 (threshold)</th></tr>");
    for (i, a) in report.algorithms.iter().enumerate() {
        let f = |k: &str| figure(v, &format!("algorithms.{i}.{k}"));
        let best = a.best.as_ref().map_or("–".to_string(), |b| {
            format!("{:.3} (≥ {})", b.f1, b.threshold)
        });
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&a.name),
            f("tp"),
            f("fp"),
            f("fn"),
            f("tn"),
            f("precision"),
            f("recall"),
            f("f1"),
            esc(&best)
        );
    }
}
