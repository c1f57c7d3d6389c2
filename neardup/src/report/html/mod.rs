//! The pages a person opens in a browser: `neardup dedup --html FILE` and `neardup
//! report` ([`run`]: look before you delete), and `neardup eval --html FILE` ([`eval`]:
//! every algorithm's precision and recall with its errors side by side). Each page is
//! one self-contained file: inline CSS, SVG and a few lines of script, and a content
//! security policy that forbids every request. Every figure taken from a JSON report
//! carries `data-key="PATH"` (its path in the file) and `data-value` (the file's
//! value; fractions are shown to three places), so a test can check the page against
//! the file.

pub mod eval;
pub mod run;

pub use eval::eval_page;
pub use run::{Facts, Page};

use crate::error::Result;
use crate::persist::AtomicFile;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Terms of a document kept for its diff (the rest is counted, not shown).
pub const MAX_TERMS: usize = 4000;
/// Equal terms between differences shown in full; longer stretches are folded.
const CONTEXT: usize = 12;

/// The page's opening: the document head (style, the policy) and its `<h1>`.
fn head(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>",
        esc(title),
        esc(title)
    )
}

/// The page's closing: the script (folds) and the end tags.
fn tail() -> String {
    format!("<script>{SCRIPT}</script></body></html>\n")
}

/// Writes a page to `path` atomically; returns its size in bytes.
pub fn write(path: &Path, html: &str) -> Result<u64> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(html.as_bytes())?;
    f.commit()?;
    Ok(html.len() as u64)
}

/// HTML-escapes `s`.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    esc_into(&mut o, s);
    o
}

/// HTML-escapes `s` onto `o`.
fn esc_into(o: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
}

/// A number from the report, marked with its path in `report.json`.
fn figure(v: &Value, path: &str) -> String {
    let mut x = v;
    for k in path.split('.') {
        x = match k.parse::<usize>() {
            Ok(i) => &x[i],
            Err(_) => &x[k],
        };
    }
    let exact = match x {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let shown = match x {
        Value::Number(n) if n.is_f64() => format!("{:.3}", n.as_f64().unwrap_or(f64::NAN)),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "–".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!(
        "<span data-key=\"{}\" data-value=\"{}\">{}</span>",
        esc(path),
        esc(&exact),
        esc(&shown)
    )
}

/// A bar chart as inline SVG: `series` are `(label, css class, values)` stacked per
/// bin; `mark` draws a vertical line at that bin (the threshold).
fn bars(
    title: &str,
    series: &[(&str, &str, &[u64])],
    mark: Option<usize>,
    x_label: &str,
) -> String {
    let (lo, hi) = shown_bins(series, mark);
    let n = hi.saturating_sub(lo) + 1;
    let total = |i: usize| {
        series
            .iter()
            .map(|s| s.2.get(i).copied().unwrap_or(0))
            .sum::<u64>()
    };
    let max = (lo..=hi).map(total).max().unwrap_or(0).max(1) as f64;
    let (w, h) = (720.0, 160.0);
    let bw = w / n as f64;
    let mut svg = format!(
        "<figure><figcaption>{}</figcaption><svg viewBox=\"0 0 {w} {}\" width=\"{w}\" height=\"{}\" role=\"img\">",
        esc(title),
        h + 24.0,
        h + 24.0
    );
    for i in lo..=hi {
        let mut y = h;
        for (label, class, values) in series {
            let v = values.get(i).copied().unwrap_or(0);
            if v == 0 {
                continue;
            }
            let bh = (v as f64 / max * (h - 4.0)).max(1.0);
            y -= bh;
            let _ = write!(
                svg,
                "<rect class=\"{class}\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bh:.1}\"><title>{}: {v} at {i}</title></rect>",
                (i - lo) as f64 * bw,
                (bw - 1.0).max(0.5),
                esc(label)
            );
        }
    }
    if let Some(m) = mark.filter(|m| (lo..=hi).contains(m)) {
        let x = (m - lo) as f64 * bw;
        let _ = write!(
            svg,
            "<line class=\"mark\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"0\" y2=\"{h}\"/><text x=\"{:.1}\" y=\"12\">{m}</text>",
            x + 3.0
        );
    }
    let _ = write!(
        svg,
        "<text x=\"0\" y=\"{}\">{lo}</text><text x=\"{w}\" y=\"{}\" text-anchor=\"end\">{hi} {}</text></svg>",
        h + 18.0,
        h + 18.0,
        esc(x_label)
    );
    let _ = write!(
        svg,
        "<div class=\"legend\">{}</div></figure>",
        legend(series)
    );
    svg
}

/// The bins a chart shows: only the range that holds counts (and the mark), with a
/// margin of two.
fn shown_bins(series: &[(&str, &str, &[u64])], mark: Option<usize>) -> (usize, usize) {
    let bins = series.iter().map(|s| s.2.len()).max().unwrap_or(0);
    let used = |i: usize| series.iter().any(|s| s.2.get(i).copied().unwrap_or(0) > 0);
    let lo = (0..bins)
        .find(|&i| used(i))
        .unwrap_or(0)
        .min(mark.unwrap_or(usize::MAX));
    let hi = (0..bins)
        .rev()
        .find(|&i| used(i))
        .unwrap_or(0)
        .max(mark.unwrap_or(0));
    (lo.saturating_sub(2), (hi + 2).min(bins.saturating_sub(1)))
}

/// A chart's legend: each series' key, label and total.
fn legend(series: &[(&str, &str, &[u64])]) -> String {
    let keys: Vec<String> = series
        .iter()
        .map(|(label, class, values)| {
            format!(
                "<span class=\"key {class}\"></span>{} ({})",
                esc(label),
                values.iter().sum::<u64>()
            )
        })
        .collect();
    keys.join(" ")
}

/// A word diff of `rep`'s and `member`'s terms: `<del>` what only the representative
/// has, `<ins>` what only the member has, equal stretches longer than twice
/// [`CONTEXT`] folded (a click shows them).
fn diff(rep: &[String], member: &[String]) -> String {
    use similar::{capture_diff_slices_deadline, Algorithm, DiffTag};
    // The terms as numbers (equal terms, equal numbers): Myers' diff compares them
    // many times.
    let mut numbers: HashMap<&str, u32> = HashMap::new();
    let a = numbered(&mut numbers, rep);
    let b = numbered(&mut numbers, member);
    // Myers' diff costs (n + m) × d: texts that share few terms (a member chained to
    // its representative through others) are not diffed. The bags of terms bound d
    // from below; past a fifth of the longer text, the page says so instead.
    let mut bag = vec![0i64; numbers.len()];
    for &t in &a {
        bag[t as usize] += 1;
    }
    for &t in &b {
        bag[t as usize] -= 1;
    }
    let apart: i64 = bag.iter().map(|v| v.abs()).sum();
    if apart as usize > rep.len().max(member.len()) / 5 + 50 {
        return format!(
            "<p class=\"diff\">(not diffed: {apart} terms in one text and not the other)</p>"
        );
    }
    // A bound on time as a last resort (the output is then coarser, never wrong).
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    let mut out = String::from("<div class=\"diff\">");
    let words = |out: &mut String, s: &[String]| {
        for (i, w) in s.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            esc_into(out, w);
        }
    };
    for op in capture_diff_slices_deadline(Algorithm::Myers, &a, &b, Some(deadline)) {
        let (old, new) = (op.old_range(), op.new_range());
        match op.tag() {
            DiffTag::Equal => {
                let eq = &rep[old];
                if eq.len() > 2 * CONTEXT {
                    let hidden = &eq[CONTEXT..eq.len() - CONTEXT];
                    words(&mut out, &eq[..CONTEXT]);
                    let _ = write!(
                        out,
                        " <span class=\"fold\" title=\"show\">… {} equal words …</span><span class=\"folded\" hidden> ",
                        hidden.len()
                    );
                    words(&mut out, hidden);
                    out.push_str(" </span> ");
                    words(&mut out, &eq[eq.len() - CONTEXT..]);
                } else {
                    words(&mut out, eq);
                }
                out.push(' ');
            }
            DiffTag::Delete | DiffTag::Insert | DiffTag::Replace => {
                if !old.is_empty() {
                    out.push_str("<del>");
                    words(&mut out, &rep[old]);
                    out.push_str("</del> ");
                }
                if !new.is_empty() {
                    out.push_str("<ins>");
                    words(&mut out, &member[new]);
                    out.push_str("</ins> ");
                }
            }
        }
    }
    out.push_str("</div>");
    out
}

/// `terms` as numbers, a new number for each term `numbers` has not seen.
fn numbered<'a>(numbers: &mut HashMap<&'a str, u32>, terms: &'a [String]) -> Vec<u32> {
    terms
        .iter()
        .map(|t| {
            let n = numbers.len() as u32;
            *numbers.entry(t.as_str()).or_insert(n)
        })
        .collect()
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222}\
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child{text-align:left}.ok{color:#16794c}.bad{color:#b3261e}\
rect.acc{fill:#2e7d32}rect.rej{fill:#9e9e9e}rect.size{fill:#1565c0}line.mark{stroke:#b3261e;stroke-width:2}\
svg text{font-size:11px;fill:#555}.legend{font-size:12px}.key{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}\
.key.acc{background:#2e7d32}.key.rej{background:#9e9e9e}.key.size{background:#1565c0}\
figure{margin:12px 0}.cluster{border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:12px 0}\
.member{margin:8px 0 14px}.diff{font-family:ui-monospace,monospace;font-size:12px;background:#fafafa;padding:6px;max-height:260px;overflow:auto}\
del{background:#ffd7d5;text-decoration:line-through}ins{background:#c9f2d0;text-decoration:none}\
.fold{color:#1565c0;cursor:pointer}pre{background:#f5f5f5;padding:8px;overflow:auto;font-size:12px}";

const SCRIPT: &str = "for(const f of document.querySelectorAll('.fold')){f.addEventListener('click',()=>{const h=f.nextElementSibling;h.hidden=!h.hidden;});}\
document.body.dataset.ready='1';";
