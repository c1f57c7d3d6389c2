//! `neardup dedup --html FILE`: the report a person opens in a browser before deleting
//! anything. One self-contained page (inline CSS, SVG and a few lines of script; a
//! content security policy that forbids every request), made from the run's report,
//! its result and the terms of a sample of clusters read back from the inputs in a
//! second pass (memory bounded by the sample, not the corpus); and `neardup eval
//! --html FILE`, every algorithm's precision and recall with its errors side by side.
//!
//! It shows the accounting per input and in total, the rejects by code with examples,
//! the cluster sizes and the largest clusters, how close stage two's decisions were
//! (Charikar agreement and shared supershingles of accepted and rejected candidates,
//! per class of pair, the threshold marked), the site classes and the top site pairs,
//! a sample of clusters — the largest, those closest to the threshold, and a seeded
//! random few — each member beside its representative with a word diff of the terms
//! the algorithm compared, and the settings. Every figure taken from the report carries
//! `data-key="PATH"` (its path in `report.json`) and `data-value` (the file's value;
//! fractions are shown to three places), so a test can check the page against the
//! file.

use crate::report::Report;
use anyhow::Result;
use neardup::io::{Fields, Input, Reader};
use neardup::persist::AtomicFile;
use neardup::pipeline::{ClassDecisions, Fate, PairKind};
use neardup::verify::PairClass;
use neardup::{Dedup, Pipeline};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Clusters shown in each part of the sample (largest, closest, random).
pub const SAMPLE_CLUSTERS: usize = 6;
/// Members shown per sampled cluster, besides its representative.
pub const SAMPLE_MEMBERS: usize = 8;
/// Terms of a document kept for its diff (the rest is counted, not shown).
pub const MAX_TERMS: usize = 4000;
/// Equal terms between differences shown in full; longer stretches are folded.
const CONTEXT: usize = 12;
/// The seed of the random part of the sample.
pub const SAMPLE_SEED: u64 = 0x6e65_6172_6475_7021;

/// The sampled clusters: `(part, cluster index)`, each cluster once.
pub fn sample(d: &Dedup) -> Vec<(&'static str, usize)> {
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    let mut taken = BTreeSet::new();
    let mut by_size: Vec<usize> = (0..d.clusters.len()).collect();
    by_size.sort_by_key(|&i| (std::cmp::Reverse(d.clusters[i].members.len()), i));
    for i in by_size.into_iter().take(SAMPLE_CLUSTERS) {
        taken.insert(i);
        out.push(("largest", i));
    }
    // Closest to the threshold: the near pair with the lowest agreement, per cluster.
    let mut cluster_of: HashMap<u32, usize> = HashMap::new();
    for (i, c) in d.clusters.iter().enumerate() {
        for &m in &c.members {
            cluster_of.insert(m, i);
        }
    }
    let mut lowest: BTreeMap<usize, u32> = BTreeMap::new();
    for p in d.pairs.iter().filter(|p| p.kind != PairKind::Exact) {
        if let Some(&c) = cluster_of.get(&p.a) {
            let e = lowest.entry(c).or_insert(u32::MAX);
            *e = (*e).min(p.agreement);
        }
    }
    let mut close: Vec<(u32, usize)> = lowest.into_iter().map(|(c, a)| (a, c)).collect();
    close.sort();
    let close: Vec<usize> = close
        .into_iter()
        .map(|(_, i)| i)
        .filter(|i| !taken.contains(i))
        .take(SAMPLE_CLUSTERS)
        .collect();
    for i in close {
        taken.insert(i);
        out.push(("closest to the threshold", i));
    }
    // Seeded random: the clusters ranked by a hash of their index and the seed.
    let mut rest: Vec<(u64, usize)> = (0..d.clusters.len())
        .filter(|i| !taken.contains(i))
        .map(|i| (mix(SAMPLE_SEED ^ i as u64), i))
        .collect();
    rest.sort();
    for (_, i) in rest.into_iter().take(SAMPLE_CLUSTERS) {
        out.push(("random", i));
    }
    out
}

/// SplitMix64's finalizer: a fixed, documented mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The records of the sampled clusters that the page shows (representatives and up
/// to [`SAMPLE_MEMBERS`] members each), by ordinal.
pub fn wanted(d: &Dedup, sampled: &[(&'static str, usize)]) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for &(_, i) in sampled {
        let c = &d.clusters[i];
        out.insert(c.representative);
        out.extend(
            c.members
                .iter()
                .filter(|&&m| m != c.representative)
                .take(SAMPLE_MEMBERS),
        );
    }
    out
}

/// The terms of the records `wanted` names (ordinals of this run; saved sketches of an
/// earlier snapshot are not read again), read back from the inputs: where the first
/// pass noted each record's place (plain JSONL, `ranges`), those records alone are
/// read; otherwise a second pass over the inputs parses only them.
pub fn read_terms(
    pipeline: &Pipeline,
    inputs: &[Input],
    fields: &Fields,
    max_record: usize,
    previous: usize,
    wanted: &BTreeSet<u32>,
    ranges: &crate::kept_ranges::Ranges,
) -> Result<HashMap<u32, Vec<String>>> {
    let mut out = HashMap::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    let terms = |doc: &neardup::Document| {
        let mut t = pipeline
            .sketcher()
            .tokenizer()
            .terms(&doc.body, doc.url.as_deref());
        t.truncate(MAX_TERMS);
        t
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        // (ordinal, (input, start, length)) of each record wanted.
        type Located = Vec<(u32, (usize, u64, u32))>;
        let located: Option<Located> = wanted
            .iter()
            .map(|&o| {
                let k = (o as usize).checked_sub(previous)?;
                ranges.locate(k).map(|r| (o, r))
            })
            .collect();
        if let Some(located) = located {
            let mut files: HashMap<usize, std::fs::File> = HashMap::new();
            for (o, (input, start, len)) in located {
                if let std::collections::hash_map::Entry::Vacant(e) = files.entry(input) {
                    e.insert(std::fs::File::open(&inputs[input].path)?);
                }
                let mut buf = vec![0u8; len as usize];
                files[&input].read_exact_at(&mut buf, start)?;
                if let Ok(doc) =
                    neardup::io::parse_json_record(&buf, fields, &inputs[input].name, 0)
                {
                    out.insert(o, terms(&doc));
                }
            }
            return Ok(out);
        }
    }
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let reader = Reader::new(inputs.to_vec(), fields.clone(), false, false)
        .defer_parsing(true)
        .max_record_bytes(max_record);
    let last = *wanted.iter().next_back().unwrap_or(&0) as usize;
    for (k, rec) in reader.enumerate() {
        let ordinal = previous + k;
        if ordinal > last {
            break;
        }
        let Ok(rec) = rec else { break };
        if !wanted.contains(&(ordinal as u32)) {
            continue;
        }
        let source = names[rec.position.input].clone();
        if let Ok(doc) = rec.into_document(fields, &source) {
            out.insert(ordinal as u32, terms(&doc));
        }
    }
    Ok(out)
}

/// HTML-escapes `s`.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
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
    o
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
    let bins = series.iter().map(|s| s.2.len()).max().unwrap_or(0);
    // Only the range that holds counts (and the mark), with a margin.
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
    let (lo, hi) = (lo.saturating_sub(2), (hi + 2).min(bins.saturating_sub(1)));
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
    let legend: Vec<String> = series
        .iter()
        .map(|(label, class, values)| {
            format!(
                "<span class=\"key {class}\"></span>{} ({})",
                esc(label),
                values.iter().sum::<u64>()
            )
        })
        .collect();
    let _ = write!(
        svg,
        "<div class=\"legend\">{}</div></figure>",
        legend.join(" ")
    );
    svg
}

/// A word diff of `rep`'s and `member`'s terms: `<del>` what only the representative
/// has, `<ins>` what only the member has, equal stretches longer than twice
/// [`CONTEXT`] folded (a click shows them).
fn diff(rep: &[String], member: &[String]) -> String {
    use similar::{capture_diff_slices_deadline, Algorithm, DiffTag};
    // Myers' diff costs (n + m) × d: texts that share few terms (a member chained to
    // its representative through others) are not diffed. The bags of terms bound d
    // from below; past a fifth of the longer text, the page says so instead.
    let mut bag: HashMap<&str, i64> = HashMap::new();
    for t in rep {
        *bag.entry(t).or_default() += 1;
    }
    for t in member {
        *bag.entry(t).or_default() -= 1;
    }
    let apart: i64 = bag.values().map(|v| v.abs()).sum();
    if apart as usize > rep.len().max(member.len()) / 5 + 50 {
        return format!(
            "<p class=\"diff\">(not diffed: {apart} terms in one text and not the other)</p>"
        );
    }
    // A bound on time as a last resort (the output is then coarser, never wrong).
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    let mut out = String::from("<div class=\"diff\">");
    let words = |s: &[String]| s.iter().map(|w| esc(w)).collect::<Vec<_>>().join(" ");
    for op in capture_diff_slices_deadline(Algorithm::Myers, rep, member, Some(deadline)) {
        let (old, new) = (op.old_range(), op.new_range());
        match op.tag() {
            DiffTag::Equal => {
                let eq = &rep[old];
                if eq.len() > 2 * CONTEXT {
                    let hidden = &eq[CONTEXT..eq.len() - CONTEXT];
                    let _ = write!(
                        out,
                        "{} <span class=\"fold\" title=\"show\">… {} equal words …</span><span class=\"folded\" hidden> {} </span> {} ",
                        words(&eq[..CONTEXT]),
                        hidden.len(),
                        words(hidden),
                        words(&eq[eq.len() - CONTEXT..])
                    );
                } else {
                    let _ = write!(out, "{} ", words(eq));
                }
            }
            DiffTag::Delete => {
                let _ = write!(out, "<del>{}</del> ", words(&rep[old]));
            }
            DiffTag::Insert => {
                let _ = write!(out, "<ins>{}</ins> ", words(&member[new]));
            }
            DiffTag::Replace => {
                let _ = write!(
                    out,
                    "<del>{}</del> <ins>{}</ins> ",
                    words(&rep[old]),
                    words(&member[new])
                );
            }
        }
    }
    out.push_str("</div>");
    out
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

/// Everything the page is made of.
pub struct Page<'a> {
    /// The run's report (what `--report` writes).
    pub report: &'a Report<'a>,
    /// The run's result.
    pub dedup: &'a Dedup,
    /// The pipeline that made it (its rule and tokenizer).
    pub pipeline: &'a Pipeline,
    /// The sampled clusters ([`sample`]).
    pub sampled: &'a [(&'static str, usize)],
    /// Their records' terms ([`read_terms`]).
    pub terms: &'a HashMap<u32, Vec<String>>,
}

impl Page<'_> {
    /// The page, as one HTML document.
    pub fn render(&self) -> Result<String> {
        let v = serde_json::to_value(self.report)?;
        let d = self.dedup;
        let mut h = String::new();
        let _ = write!(
            h,
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
             <title>neardup report</title><style>{STYLE}</style></head><body>\
             <h1>neardup report</h1><p>neardup {} · inputs: {}</p>",
            esc(self.report.neardup_version),
            esc(&self.report.inputs.join(", "))
        );
        self.accounting(&mut h, &v);
        self.rejects(&mut h);
        self.clusters(&mut h, &v);
        self.decisions(&mut h);
        self.sites(&mut h, &v);
        self.samples(&mut h);
        let _ = write!(
            h,
            "<h2>Settings</h2><p>stage one: {} · stage two: {}</p><pre>{}</pre>",
            figure(&v, "parameters.stage_one"),
            figure(&v, "parameters.stage_two"),
            esc(&serde_json::to_string_pretty(&v["parameters"])?)
        );
        let _ = writeln!(h, "<script>{SCRIPT}</script></body></html>");
        let _ = d;
        Ok(h)
    }

    fn accounting(&self, h: &mut String, v: &Value) {
        let holds = self.report.accounting.holds;
        let _ = write!(
            h,
            "<h2>Accounting</h2><p class=\"{}\">read = kept + exact + near + rejected: {}</p>\
             <table id=\"accounting\"><tr><th>input</th><th>read</th><th>kept</th><th>exact duplicates</th><th>near duplicates</th><th>rejected</th></tr>",
            if holds { "ok" } else { "bad" },
            figure(v, "accounting.holds")
        );
        for (i, c) in self.report.accounting.per_input.iter().enumerate() {
            let p = |k: &str| figure(v, &format!("accounting.per_input.{i}.{k}"));
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(c.input),
                p("records"),
                p("kept"),
                p("exact_duplicates"),
                p("near_duplicates"),
                p("rejected")
            );
        }
        let t = |k: &str| figure(v, &format!("accounting.{k}"));
        let _ = write!(
            h,
            "<tr><th>total</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></table>",
            t("read"),
            t("kept"),
            t("exact_duplicates"),
            t("near_duplicates"),
            t("rejected")
        );
        if self.report.accounting.previous_snapshot > 0 {
            let _ = write!(
                h,
                "<p>Against the saved sketches of an earlier snapshot: {} records.</p>",
                t("previous_snapshot")
            );
        }
    }

    fn rejects(&self, h: &mut String) {
        let d = self.dedup;
        // Per code: its records, and the first few (record number, reason).
        type Examples = Vec<(usize, String)>;
        let mut by_code: BTreeMap<&str, (u64, Examples)> = BTreeMap::new();
        for (i, f) in d.fates.iter().enumerate().skip(d.previous) {
            if let Fate::Rejected { reason } = f {
                let e = by_code.entry(reason.code()).or_default();
                e.0 += 1;
                if e.1.len() < 3 {
                    e.1.push((i - d.previous, reason.to_string()));
                }
            }
        }
        let _ = write!(h, "<h2>Rejected records</h2>");
        if by_code.is_empty() {
            h.push_str("<p>None.</p>");
            return;
        }
        h.push_str("<table id=\"rejects\"><tr><th>code</th><th>records</th><th>examples (record number: reason)</th></tr>");
        for (code, (n, ex)) in by_code {
            let ex: Vec<String> = ex.iter().map(|(i, r)| format!("{i}: {}", esc(r))).collect();
            let _ = write!(
                h,
                "<tr><td>{}</td><td data-code=\"{}\">{n}</td><td style=\"text-align:left\">{}</td></tr>",
                esc(code),
                esc(code),
                ex.join("<br>")
            );
        }
        h.push_str("</table>");
    }

    fn clusters(&self, h: &mut String, v: &Value) {
        let s = &self.dedup.stats.clusters;
        let _ = write!(
            h,
            "<h2>Clusters</h2><p>{} clusters of two or more records, {} records in them, the largest of {}.</p>",
            figure(v, "stats.clusters.clusters"),
            figure(v, "stats.clusters.clustered_documents"),
            figure(v, "stats.clusters.max_size")
        );
        let hist: Vec<u64> = s.size_histogram.to_vec();
        h.push_str(&bars(
            "Cluster sizes (bin k holds sizes 2^k to 2^(k+1) − 1)",
            &[("clusters", "size", &hist)],
            None,
            "log2 size",
        ));
        let d = self.dedup;
        let mut largest: Vec<&neardup::cluster::Cluster> = d.clusters.iter().collect();
        largest.sort_by_key(|c| (std::cmp::Reverse(c.members.len()), c.representative));
        h.push_str("<table id=\"largest\"><tr><th>representative (kept)</th><th>size</th></tr>");
        for c in largest.iter().take(10) {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&d.ids[c.representative as usize]),
                c.members.len()
            );
        }
        h.push_str("</table>");
    }

    fn decisions(&self, h: &mut String) {
        let dec = &self.dedup.decisions;
        let _ = write!(
            h,
            "<h2>How close the decisions were</h2><p>Stage two on {} candidate pairs: the Charikar \
             agreement and the shared supershingles of those it accepted and those it rejected, \
             by class of pair, the class's filter marked.</p>",
            dec.total()
        );
        let rule = self.pipeline.rule();
        for (name, class, c) in [
            ("same site", PairClass::SameSite, &dec.same_site),
            ("cross site", PairClass::CrossSite, &dec.cross_site),
            ("unknown site", PairClass::Unknown, &dec.unknown_site),
        ] {
            if c.total() == 0 {
                continue;
            }
            let filter = rule.filter(class).name();
            let mark = filter
                .split("agreement>=")
                .nth(1)
                .and_then(|t| t.split(|ch: char| !ch.is_ascii_digit()).next())
                .and_then(|t| t.parse::<usize>().ok());
            let _ = write!(
                h,
                "<h3>{name}: {} candidates, {} accepted ({})</h3>",
                c.total(),
                c.accepted(),
                esc(&filter)
            );
            h.push_str(&agreement_charts(c, mark));
        }
    }

    fn sites(&self, h: &mut String, v: &Value) {
        let _ = write!(
            h,
            "<h2>Sites</h2><table id=\"sites\"><tr><th>reported pairs</th><th>pairs</th></tr>\
             <tr><td>within a site</td><td>{}</td></tr><tr><td>between sites</td><td>{}</td></tr>\
             <tr><td>without a site</td><td>{}</td></tr></table>",
            figure(v, "stats.same_site_pairs"),
            figure(v, "stats.cross_site_pairs"),
            figure(v, "stats.unknown_site_pairs")
        );
        let mirrors = self.dedup.mirrors();
        if mirrors.is_empty() {
            return;
        }
        let top = serde_json::to_value(mirrors.iter().take(10).collect::<Vec<_>>())
            .unwrap_or(Value::Null);
        h.push_str("<p>Site pairs with the most duplicate pairs between them (the mirror report):</p><table id=\"mirrors\">");
        if let Some(rows) = top.as_array() {
            if let Some(Value::Object(first)) = rows.first() {
                h.push_str("<tr>");
                for k in first.keys() {
                    let _ = write!(h, "<th>{}</th>", esc(k));
                }
                h.push_str("</tr>");
            }
            for r in rows {
                if let Value::Object(m) = r {
                    h.push_str("<tr>");
                    for x in m.values() {
                        let s = match x {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => match n.as_f64() {
                                Some(f) if n.is_f64() => format!("{f:.3}"),
                                _ => n.to_string(),
                            },
                            o => o.to_string(),
                        };
                        let _ = write!(h, "<td>{}</td>", esc(&s));
                    }
                    h.push_str("</tr>");
                }
            }
        }
        h.push_str("</table>");
    }

    fn samples(&self, h: &mut String) {
        let d = self.dedup;
        let _ = write!(
            h,
            "<h2>A sample of clusters</h2><p>The {SAMPLE_CLUSTERS} largest clusters, the \
             {SAMPLE_CLUSTERS} whose weakest near pair is closest to the threshold, and \
             {SAMPLE_CLUSTERS} at random (seeded); up to {SAMPLE_MEMBERS} members each beside the \
             kept representative: the terms the algorithm compared, <del>only in the \
             representative</del>, <ins>only in the member</ins>.</p>"
        );
        let sk = &d.sketches;
        for &(part, i) in self.sampled {
            let c = &d.clusters[i];
            let rep = c.representative;
            let _ = write!(
                h,
                "<section class=\"cluster\" data-cluster=\"{i}\"><h3>{} · {} members · kept: {}</h3>",
                esc(part),
                c.members.len(),
                esc(&d.ids[rep as usize])
            );
            for &m in c.members.iter().filter(|&&m| m != rep).take(SAMPLE_MEMBERS) {
                let (x, y) = (sk.get(rep as usize), sk.get(m as usize));
                let agree = neardup::sketch::charikar::agreement(x.charikar, y.charikar);
                let shared =
                    neardup::sketch::broder::shared_supershingles(x.supershingles, y.supershingles);
                let rule = match &d.fates[m as usize] {
                    Fate::ExactDuplicate { .. } => "exact copy",
                    Fate::NearDuplicate { .. } => {
                        let (a, b) = (rep.min(m), rep.max(m));
                        match d.pairs.binary_search_by_key(&(a, b), |p| (p.a, p.b)) {
                            Ok(k) if d.pairs[k].kind == PairKind::HighRecall => "high recall",
                            Ok(_) => "candidate + filter",
                            Err(_) => "candidate + filter, through other members",
                        }
                    }
                    _ => "kept",
                };
                let _ = write!(
                    h,
                    "<div class=\"member\" data-member=\"{}\"><b>{}</b> · {rule} · Charikar agreement {agree} · shared supershingles {shared}",
                    esc(&d.ids[m as usize]),
                    esc(&d.ids[m as usize])
                );
                match (self.terms.get(&rep), self.terms.get(&m)) {
                    (Some(a), Some(b)) => h.push_str(&diff(a, b)),
                    _ => {
                        h.push_str("<p>(texts not read: a saved sketch of an earlier snapshot)</p>")
                    }
                }
                h.push_str("</div>");
            }
            h.push_str("</section>");
        }
    }
}

fn agreement_charts(c: &ClassDecisions, mark: Option<usize>) -> String {
    let mut out = bars(
        "Charikar agreement (bits)",
        &[
            ("accepted", "acc", &c.accepted_by_agreement),
            ("rejected", "rej", &c.rejected_by_agreement),
        ],
        mark,
        "bits",
    );
    out.push_str(&bars(
        "Shared supershingles",
        &[
            ("accepted", "acc", &c.accepted_by_shared),
            ("rejected", "rej", &c.rejected_by_shared),
        ],
        None,
        "supershingles",
    ));
    out
}

/// Writes `page` to `path` atomically.
pub fn write(path: &Path, page: &Page<'_>) -> Result<u64> {
    let html = page.render()?;
    let mut f = AtomicFile::create(path)?;
    f.write_all(html.as_bytes())?;
    f.commit()?;
    Ok(html.len() as u64)
}

/// Pairs shown per algorithm and kind of error on the eval page.
pub const EVAL_EXAMPLES: usize = 8;

/// `neardup eval --pairs FILE --html PAGE`: every algorithm's precision and recall
/// (figures marked with their path in `--json`'s report), the precision–recall curves,
/// and for each algorithm its first false positives and false negatives, each pair's
/// two texts side by side as a word diff of their terms with its measures.
pub fn eval_page(
    pipeline: &Pipeline,
    report: &neardup::eval::EvalReport,
    pairs: &[neardup::eval::LabelledPair],
    scores: &[neardup::eval::PairScores],
    positive_min: f64,
) -> Result<String> {
    let v = serde_json::to_value(report)?;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
         <title>neardup eval</title><style>{STYLE}</style></head><body>\
         <h1>neardup eval</h1><p>{} labelled pairs: {} near-duplicates (label ≥ {positive_min}), {} not.</p>",
        pairs.len(),
        figure(&v, "positives"),
        figure(&v, "negatives")
    );
    h.push_str("<h2>Algorithms</h2><table id=\"algorithms\"><tr><th>algorithm</th><th>TP</th><th>FP</th><th>FN</th><th>TN</th><th>precision</th><th>recall</th><th>F1</th><th>best F1 (threshold)</th></tr>");
    for (i, a) in report.algorithms.iter().enumerate() {
        let f = |k: &str| figure(&v, &format!("algorithms.{i}.{k}"));
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
    h.push_str("</table>");
    let curves: Vec<(String, Vec<(f64, f64)>)> = report
        .algorithms
        .iter()
        .filter_map(|a| {
            a.sweep.as_ref().map(|s| {
                (
                    a.name.clone(),
                    s.iter().map(|p| (p.recall, p.precision)).collect(),
                )
            })
        })
        .collect();
    if !curves.is_empty() {
        h.push_str("<h2>Precision and recall at every threshold</h2>");
        h.push_str(&neardup::eval::plot::pr_curves(
            "Precision–recall on labelled pairs",
            &curves,
        ));
    }
    let tok = pipeline.sketcher().tokenizer();
    let terms = |d: &neardup::Document| {
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
    let _ = writeln!(h, "<script>{SCRIPT}</script></body></html>");
    Ok(h)
}
