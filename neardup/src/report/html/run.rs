//! The page of a run, to look at before deleting anything: made by `neardup dedup
//! --html FILE` from the run in memory, and by `neardup report` from a finished run's
//! saved outputs (`report.json`, clusters, pairs, rejects, mirrors) plus its inputs.
//! Both go through [`Facts`], what the page is made of, so the two pages are the same.
//!
//! It shows the accounting per input and in total, the rejects by code with examples,
//! the cluster sizes and the largest clusters, how close stage two's decisions were
//! (Charikar agreement and shared supershingles of accepted and rejected candidates,
//! per class of pair, the threshold marked), the site classes and the top site pairs,
//! a sample of clusters — the largest, those closest to the threshold, and a seeded
//! random few — each member beside its representative with a word diff of the terms
//! the algorithm compared and the pair's measures (Charikar agreement, shared
//! supershingles, the min-hash estimate of resemblance and the exact Jaccard of the
//! shingle sets, computed again from the texts read back), and the settings. The
//! texts of the sample are read back from the inputs in a second pass: memory is
//! bounded by the sample, not the corpus.

use super::{bars, diff, esc, figure, head, tail, MAX_TERMS};
use crate::error::{Error, Result};
use crate::eval::Scorer;
use crate::io::{Fields, Input, Reader};
use crate::pipeline::{Decisions, Fate, PairKind};
use crate::sketch::Analysis;
use crate::verify::PairClass;
use crate::{Dedup, Document, Pipeline};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::BufRead;
use std::path::Path;

/// Clusters shown in each part of the sample (largest, closest, random).
pub const SAMPLE_CLUSTERS: usize = 6;
/// Members shown per sampled cluster, besides its representative.
pub const SAMPLE_MEMBERS: usize = 8;
/// Examples shown per reject code.
pub const REJECT_EXAMPLES: usize = 3;
/// Site pairs shown from the mirror report.
pub const TOP_MIRRORS: usize = 10;
/// Clusters listed by size.
pub const TOP_CLUSTERS: usize = 10;
/// The seed of the random part of the sample.
pub const SAMPLE_SEED: u64 = 0x6e65_6172_6475_7021;

/// A cluster: indices into [`Facts::ids`], members in input order.
#[derive(Debug, Clone)]
pub struct ClusterFact {
    /// The kept member.
    pub representative: u32,
    /// All members, the representative included.
    pub members: Vec<u32>,
}

/// A verified pair: how it was found, its Charikar agreement, and its later member.
#[derive(Debug, Clone, Copy)]
pub struct PairFact {
    /// `exact`, `near` or `high_recall` ([`PairKind::as_str`]).
    pub kind: PairKind,
    /// Agreeing Charikar bits.
    pub agreement: u32,
    /// The later member in input order (the pair's `b`).
    pub b: u32,
}

/// Rejects per code: how many, and the first few `(record number, reason)`.
pub type RejectTally = BTreeMap<String, (u64, Vec<(u64, String)>)>;

/// Everything the page shows, whichever way the run is known. Records are named by
/// their index in [`ids`](Self::ids): the records of the clusters, in the order the
/// clusters first name them.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The run's report (what `--report` writes).
    pub report: Value,
    /// The ids of the records in clusters.
    pub ids: Vec<String>,
    /// The clusters, in the run's order.
    pub clusters: Vec<ClusterFact>,
    /// The verified pairs between records in clusters, by `(min, max)` index.
    pub pairs: HashMap<(u32, u32), PairFact>,
    /// Rejects by code, when known (the rejects file was given).
    pub rejects: Option<RejectTally>,
    /// The first site pairs of the mirror report, when known.
    pub mirrors: Option<Vec<Value>>,
}

/// Counts a reject in `tally`, keeping the first few examples.
fn tally(t: &mut RejectTally, code: &str, record: u64, reason: String) {
    let e = t.entry(code.to_string()).or_default();
    e.0 += 1;
    if e.1.len() < REJECT_EXAMPLES {
        e.1.push((record, reason));
    }
}

/// Names records by index as the clusters first name them.
#[derive(Default)]
struct Index<K> {
    of: HashMap<K, u32>,
}

impl<K: std::hash::Hash + Eq> Index<K> {
    fn add(&mut self, k: K) -> u32 {
        let n = self.of.len() as u32;
        *self.of.entry(k).or_insert(n)
    }
}

impl Facts {
    /// The facts of a run in memory (its report still [`Value::Null`]: it is made
    /// once the outputs are written), and the ordinal of each indexed record.
    pub fn of_run(d: &Dedup) -> (Facts, Vec<u32>) {
        let mut index = Index::default();
        let clusters: Vec<ClusterFact> = d
            .clusters
            .iter()
            .map(|c| ClusterFact {
                members: c.members.iter().map(|&m| index.add(m)).collect(),
                representative: index.add(c.representative),
            })
            .collect();
        let mut ordinals = vec![0u32; index.of.len()];
        for (&o, &i) in &index.of {
            ordinals[i as usize] = o;
        }
        let ids = ordinals
            .iter()
            .map(|&o| d.ids[o as usize].clone())
            .collect();
        let mut pairs = HashMap::new();
        for p in &d.pairs {
            if let (Some(&a), Some(&b)) = (index.of.get(&p.a), index.of.get(&p.b)) {
                let f = PairFact {
                    kind: p.kind,
                    agreement: p.agreement,
                    b,
                };
                pairs.insert((a.min(b), a.max(b)), f);
            }
        }
        let mut rejects = RejectTally::new();
        for (i, f) in d.fates.iter().enumerate().skip(d.previous) {
            if let Fate::Rejected { reason } = f {
                let record = (i - d.previous) as u64;
                tally(&mut rejects, reason.code(), record, reason.to_string());
            }
        }
        let mirrors = d
            .mirrors()
            .iter()
            .take(TOP_MIRRORS)
            .filter_map(|m| serde_json::to_value(m).ok())
            .collect();
        let facts = Facts {
            report: Value::Null,
            ids,
            clusters,
            pairs,
            rejects: Some(rejects),
            mirrors: Some(mirrors),
        };
        (facts, ordinals)
    }

    /// The facts of a finished run: its report, clusters (required), and the pairs,
    /// rejects and mirror files when given.
    pub fn of_files(
        report: Value,
        clusters: &Path,
        pairs: Option<&Path>,
        rejects: Option<&Path>,
        mirrors: Option<&Path>,
    ) -> Result<Facts> {
        let mut index = Index::default();
        let mut out = Vec::new();
        for_lines(clusters, |v, _| {
            let members = v["members"]
                .as_array()
                .ok_or("no `members` array")?
                .iter()
                .map(|m| m.as_str().map(|s| index.add(s.to_string())))
                .collect::<Option<Vec<u32>>>()
                .ok_or("a member that is not a string")?;
            let rep = v["representative"].as_str().ok_or("no `representative`")?;
            out.push(ClusterFact {
                members,
                representative: index.add(rep.to_string()),
            });
            Ok(())
        })?;
        let mut facts = Facts {
            report,
            ids: Vec::new(),
            clusters: out,
            pairs: HashMap::new(),
            rejects: None,
            mirrors: None,
        };
        if let Some(path) = pairs {
            for_lines(path, |v, _| {
                let (a, b) = (v["a"].as_str(), v["b"].as_str());
                let (a, b) = (a.ok_or("no `a`")?, b.ok_or("no `b`")?);
                let kind = match v["kind"].as_str() {
                    Some("exact") => PairKind::Exact,
                    Some("high_recall") => PairKind::HighRecall,
                    Some("near") => PairKind::Near,
                    other => return Err(format!("unknown pair kind {other:?}")),
                };
                let agreement = v["charikar_agreement"].as_u64().ok_or("no agreement")?;
                if let (Some(&a), Some(&b)) = (index.of.get(a), index.of.get(b)) {
                    let f = PairFact {
                        kind,
                        agreement: agreement as u32,
                        b,
                    };
                    facts.pairs.insert((a.min(b), a.max(b)), f);
                }
                Ok(())
            })?;
        }
        if let Some(path) = rejects {
            let mut t = RejectTally::new();
            for_lines(path, |v, _| {
                let code = v["code"].as_str().ok_or("no `code`")?;
                let record = v["record"].as_u64().ok_or("no `record`")?;
                let reason = v["reason"].as_str().unwrap_or_default().to_string();
                tally(&mut t, code, record, reason);
                Ok(())
            })?;
            facts.rejects = Some(t);
        }
        if let Some(path) = mirrors {
            let mut m = Vec::new();
            for_lines(path, |v, _| {
                if m.len() < TOP_MIRRORS {
                    m.push(v);
                }
                Ok(())
            })?;
            facts.mirrors = Some(m);
        }
        let mut ids = vec![String::new(); index.of.len()];
        for (id, i) in index.of {
            ids[i as usize] = id;
        }
        facts.ids = ids;
        Ok(facts)
    }

    /// The ids of records, by index, that the sample shows.
    pub fn wanted_ids(&self, wanted: &BTreeSet<u32>) -> HashMap<&str, u32> {
        wanted
            .iter()
            .map(|&i| (self.ids[i as usize].as_str(), i))
            .collect()
    }

    /// The run's settings for a page rebuilt from its files: `settings` in the
    /// report (the flags and fields the run was given), if it has them.
    pub fn settings(&self) -> Option<&Value> {
        self.report.get("settings").filter(|s| !s.is_null())
    }

    fn decisions(&self) -> Option<Decisions> {
        serde_json::from_value(self.report.get("decisions")?.clone()).ok()
    }
}

/// Calls `f` with each JSON line of `path` and its line number; an error names the
/// file and the line.
fn for_lines(
    path: &Path,
    mut f: impl FnMut(Value, u64) -> std::result::Result<(), String>,
) -> Result<()> {
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let n = n as u64 + 1;
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(&line).map_err(|e| corrupt(format!("line {n}: not JSON: {e}")))?;
        f(v, n).map_err(|e| corrupt(format!("line {n}: {e}")))?;
    }
    Ok(())
}

/// The sampled clusters: `(part, cluster index)`, each cluster once.
pub fn sample(f: &Facts) -> Vec<(&'static str, usize)> {
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    let mut taken = BTreeSet::new();
    for i in largest(f).into_iter().take(SAMPLE_CLUSTERS) {
        taken.insert(i);
        out.push(("largest", i));
    }
    // Closest to the threshold: the near pair with the lowest agreement, per cluster.
    let mut cluster_of: HashMap<u32, usize> = HashMap::new();
    for (i, c) in f.clusters.iter().enumerate() {
        for &m in &c.members {
            cluster_of.insert(m, i);
        }
    }
    let mut lowest: BTreeMap<usize, u32> = BTreeMap::new();
    for (&(a, _), p) in f.pairs.iter().filter(|(_, p)| p.kind != PairKind::Exact) {
        if let Some(&c) = cluster_of.get(&a) {
            let e = lowest.entry(c).or_insert(u32::MAX);
            *e = (*e).min(p.agreement);
        }
    }
    let mut close: Vec<(u32, usize)> = lowest.into_iter().map(|(c, a)| (a, c)).collect();
    close.sort_unstable();
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
    let mut rest: Vec<(u64, usize)> = (0..f.clusters.len())
        .filter(|i| !taken.contains(i))
        .map(|i| (mix(SAMPLE_SEED ^ i as u64), i))
        .collect();
    rest.sort_unstable();
    for (_, i) in rest.into_iter().take(SAMPLE_CLUSTERS) {
        out.push(("random", i));
    }
    out
}

/// The clusters from the largest, ties in the run's order.
fn largest(f: &Facts) -> Vec<usize> {
    let mut by_size: Vec<usize> = (0..f.clusters.len()).collect();
    by_size.sort_by_key(|&i| (std::cmp::Reverse(f.clusters[i].members.len()), i));
    by_size
}

/// SplitMix64's finalizer: a fixed, documented mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The members of a cluster the page shows besides its representative.
fn shown(c: &ClusterFact) -> impl Iterator<Item = u32> + '_ {
    c.members
        .iter()
        .copied()
        .filter(|&m| m != c.representative)
        .take(SAMPLE_MEMBERS)
}

/// The records of the sampled clusters that the page shows (representatives and up
/// to [`SAMPLE_MEMBERS`] members each), by index.
pub fn wanted(f: &Facts, sampled: &[(&'static str, usize)]) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for &(_, i) in sampled {
        let c = &f.clusters[i];
        out.insert(c.representative);
        out.extend(shown(c));
    }
    out
}

/// The documents of the records `wanted` names by ordinal (of this run; saved
/// sketches of an earlier snapshot are not read again), read back from the inputs:
/// where the first pass noted each record's place (plain JSONL: `locate` gives a
/// record's input, byte offset and length by its index in this run, as the job's
/// `kept_ranges::Ranges::locate` does), those records alone are read; otherwise a
/// second pass over the inputs parses only them.
pub fn read_by_ordinal(
    inputs: &[Input],
    fields: &Fields,
    max_record: usize,
    previous: usize,
    wanted: &BTreeSet<u32>,
    locate: impl Fn(usize) -> Option<(usize, u64, u32)>,
) -> Result<HashMap<u32, Document>> {
    let mut out = HashMap::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        // (ordinal, (input, start, length)) of each record wanted.
        type Located = Vec<(u32, (usize, u64, u32))>;
        let located: Option<Located> = wanted
            .iter()
            .map(|&o| {
                let k = (o as usize).checked_sub(previous)?;
                locate(k).map(|r| (o, r))
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
                let name = &inputs[input].name;
                if let Ok(doc) = crate::io::parse_json_record(&buf, fields, name, 0) {
                    out.insert(o, doc);
                }
            }
            return Ok(out);
        }
    }
    let last = *wanted.iter().next_back().unwrap_or(&0) as usize;
    for_records(inputs, fields, max_record, |k, rec, source| {
        let ordinal = previous + k;
        if wanted.contains(&(ordinal as u32)) {
            if let Ok(doc) = rec.into_document(fields, source) {
                out.insert(ordinal as u32, doc);
            }
        }
        ordinal < last
    })?;
    Ok(out)
}

/// The documents whose ids `wanted` names (the first record with each id), read from
/// the inputs, by index.
pub fn read_by_id(
    inputs: &[Input],
    fields: &Fields,
    max_record: usize,
    wanted: &HashMap<&str, u32>,
) -> Result<HashMap<u32, Document>> {
    let mut out = HashMap::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    for_records(inputs, fields, max_record, |_, rec, source| {
        if let Ok(doc) = rec.into_document(fields, source) {
            if let Some(&i) = wanted.get(doc.id.as_str()) {
                out.entry(i).or_insert(doc);
            }
        }
        out.len() < wanted.len()
    })?;
    Ok(out)
}

/// Reads the inputs' records in order, calling `f(k, record, input name)` until it
/// says stop; the first unreadable record ends the pass (the run rejected it or
/// stopped there).
fn for_records(
    inputs: &[Input],
    fields: &Fields,
    max_record: usize,
    mut f: impl FnMut(usize, crate::io::RawRecord, &str) -> bool,
) -> Result<()> {
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let reader = Reader::new(inputs.to_vec(), fields.clone())
        .defer_parsing(true)
        .max_record_bytes(max_record);
    for (k, rec) in reader.enumerate() {
        let Ok(rec) = rec else { break };
        let source = &names[rec.position.input];
        if !f(k, rec, source) {
            break;
        }
    }
    Ok(())
}

/// What the page knows of a record read back: its terms (for the diff) and its
/// analysis (for the measures).
struct Read<'a> {
    terms: Vec<String>,
    analysis: Analysis,
    doc: &'a Document,
}

/// Everything the page is made of.
pub struct Page<'a> {
    /// What the run found.
    pub facts: &'a Facts,
    /// The pipeline of the run's settings (its rule and tokenizer).
    pub pipeline: &'a Pipeline,
    /// The sampled clusters ([`sample`]).
    pub sampled: &'a [(&'static str, usize)],
    /// Their records read back ([`read_by_ordinal`], [`read_by_id`]), by index.
    pub docs: HashMap<u32, Document>,
}

impl Page<'_> {
    /// The page, as one HTML document.
    pub fn render(&self) -> Result<String> {
        self.render_with(&self.samples())
    }

    /// The page, the sample of clusters ([`samples`](Self::samples)) given.
    fn render_with(&self, samples: &str) -> Result<String> {
        let v = &self.facts.report;
        let inputs: Vec<&str> = v["inputs"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut h = head("neardup report");
        let _ = write!(
            h,
            "<p>neardup {} · inputs: {}</p>",
            figure(v, "neardup_version"),
            esc(&inputs.join(", "))
        );
        self.accounting(&mut h, v);
        self.rejects(&mut h, v);
        self.clusters(&mut h, v);
        self.decisions(&mut h);
        self.sites(&mut h, v);
        h.push_str(samples);
        let _ = write!(
            h,
            "<h2>Settings</h2><p>stage one: {} · stage two: {}</p><pre>{}</pre>",
            figure(v, "parameters.stage_one"),
            figure(v, "parameters.stage_two"),
            esc(&serde_json::to_string_pretty(&v["parameters"])
                .map_err(|e| Error::output("report", e))?)
        );
        h.push_str(&tail());
        Ok(h)
    }

    fn accounting(&self, h: &mut String, v: &Value) {
        let holds = v["accounting"]["holds"].as_bool() == Some(true);
        let _ = write!(
            h,
            "<h2>Accounting</h2><p class=\"{}\">read = kept + exact + near + rejected: {}</p>\
             <table id=\"accounting\"><tr><th>input</th><th>read</th><th>kept</th><th>exact duplicates</th><th>near duplicates</th><th>rejected</th></tr>",
            if holds { "ok" } else { "bad" },
            figure(v, "accounting.holds")
        );
        let per_input = v["accounting"]["per_input"].as_array();
        for (i, c) in per_input.into_iter().flatten().enumerate() {
            let p = |k: &str| figure(v, &format!("accounting.per_input.{i}.{k}"));
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(c["input"].as_str().unwrap_or_default()),
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
        if v["accounting"]["previous_snapshot"].as_u64().unwrap_or(0) > 0 {
            let _ = write!(
                h,
                "<p>Against the saved sketches of an earlier snapshot: {} records.</p>",
                t("previous_snapshot")
            );
        }
    }

    fn rejects(&self, h: &mut String, v: &Value) {
        h.push_str("<h2>Rejected records</h2>");
        let Some(by_code) = &self.facts.rejects else {
            let _ = write!(
                h,
                "<p>{} rejected; by code in the rejects file, which was not given.</p>",
                figure(v, "accounting.rejected")
            );
            return;
        };
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
        let _ = write!(
            h,
            "<h2>Clusters</h2><p>{} clusters of two or more records, {} records in them, the largest of {}.</p>",
            figure(v, "stats.clusters.clusters"),
            figure(v, "stats.clusters.clustered_documents"),
            figure(v, "stats.clusters.max_size")
        );
        let hist: Vec<u64> = v["stats"]["clusters"]["size_histogram"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_u64().unwrap_or(0)).collect())
            .unwrap_or_default();
        h.push_str(&bars(
            "Cluster sizes (bin k holds sizes 2^k to 2^(k+1) − 1)",
            &[("clusters", "size", &hist)],
            None,
            "log2 size",
        ));
        let f = self.facts;
        h.push_str("<table id=\"largest\"><tr><th>representative (kept)</th><th>size</th></tr>");
        for i in largest(f).into_iter().take(TOP_CLUSTERS) {
            let c = &f.clusters[i];
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&f.ids[c.representative as usize]),
                c.members.len()
            );
        }
        h.push_str("</table>");
    }

    fn decisions(&self, h: &mut String) {
        h.push_str("<h2>How close the decisions were</h2>");
        let Some(dec) = self.facts.decisions() else {
            h.push_str(
                "<p>Not in this report (made before reports carried stage two's decisions).</p>",
            );
            return;
        };
        let _ = write!(
            h,
            "<p>Stage two on {} candidate pairs: the Charikar agreement and the shared \
             supershingles (each one {} min-values agreeing: stage one's min-hash measure) \
             of those it accepted and those it rejected, by class of pair, the class's \
             filter marked.</p>",
            dec.total(),
            self.pipeline.sketcher().config().supershingle_width()
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
            h.push_str(&bars(
                "Charikar agreement (bits)",
                &[
                    ("accepted", "acc", &c.accepted_by_agreement),
                    ("rejected", "rej", &c.rejected_by_agreement),
                ],
                mark,
                "bits",
            ));
            h.push_str(&bars(
                "Shared supershingles",
                &[
                    ("accepted", "acc", &c.accepted_by_shared),
                    ("rejected", "rej", &c.rejected_by_shared),
                ],
                None,
                "supershingles",
            ));
            h.push_str(&self.resemblance_scale(&c.accepted_by_shared, &c.rejected_by_shared));
        }
    }

    /// The shared supershingles read as min-hash estimates of resemblance: a
    /// supershingle of `w` min-values matches with probability `r^w` at resemblance `r`,
    /// so `k` of `m` matching estimates `r = (k/m)^(1/w)`. A table of each count, its
    /// estimate and the candidates accepted and rejected there.
    fn resemblance_scale(&self, accepted: &[u64], rejected: &[u64]) -> String {
        let cfg = self.pipeline.sketcher().config();
        let (m, w) = (cfg.supershingles, cfg.supershingle_width());
        let mut h = format!(
            "<table class=\"resemblance\"><caption>The min-hash estimate of resemblance: \
             k of {m} supershingles of {w} min-values shared estimates (k/{m})^(1/{w})</caption>\
             <tr><th>shared</th><th>estimated resemblance</th><th>accepted</th><th>rejected</th></tr>"
        );
        for k in 0..=m {
            let (a, r) = (
                accepted.get(k).copied().unwrap_or(0),
                rejected.get(k).copied().unwrap_or(0),
            );
            if a + r == 0 {
                continue;
            }
            let est = (k as f64 / m as f64).powf(1.0 / w as f64);
            let _ = write!(
                h,
                "<tr><td>{k}</td><td data-resemblance=\"{k}\">{est:.3}</td><td>{a}</td><td>{r}</td></tr>"
            );
        }
        h.push_str("</table>");
        h
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
        let Some(rows) = &self.facts.mirrors else {
            h.push_str("<p>(The mirror report was not given.)</p>");
            return;
        };
        let Some(Value::Object(first)) = rows.first() else {
            return;
        };
        h.push_str("<p>Site pairs with the most duplicate pairs between them (the mirror report):</p><table id=\"mirrors\"><tr>");
        for k in first.keys() {
            let _ = write!(h, "<th>{}</th>", esc(k));
        }
        h.push_str("</tr>");
        for r in rows {
            let Value::Object(m) = r else { continue };
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
        h.push_str("</table>");
    }

    /// How the pair `(rep, m)` came to be in one cluster.
    fn rule(&self, rep: u32, m: u32, copies: &HashSet<u32>) -> &'static str {
        match self
            .facts
            .pairs
            .get(&(rep.min(m), rep.max(m)))
            .map(|p| p.kind)
        {
            Some(PairKind::Exact) => "exact copy",
            Some(PairKind::HighRecall) => "high recall",
            Some(_) => "candidate + filter",
            None if copies.contains(&m) => "exact copy of another member",
            None => "candidate + filter, through other members",
        }
    }

    /// The sample of clusters: its heading, then each cluster's section.
    fn samples(&self) -> String {
        let f = self.facts;
        let mut h = String::new();
        let _ = write!(
            h,
            "<h2>A sample of clusters</h2><p>The {SAMPLE_CLUSTERS} largest clusters, the \
             {SAMPLE_CLUSTERS} whose weakest near pair is closest to the threshold, and \
             {SAMPLE_CLUSTERS} at random (seeded); up to {SAMPLE_MEMBERS} members each beside the \
             kept representative: the terms the algorithm compared, <del>only in the \
             representative</del>, <ins>only in the member</ins>; the measures are computed \
             again from the texts (without boilerplate removal).</p>"
        );
        // Exact copies: the later member of each exact pair.
        let copies: HashSet<u32> = f
            .pairs
            .values()
            .filter(|p| p.kind == PairKind::Exact)
            .map(|p| p.b)
            .collect();
        let sk = self.pipeline.sketcher();
        let docs: Vec<(&u32, &Document)> = self.docs.iter().collect();
        let read: HashMap<u32, Read<'_>> = docs
            .par_iter()
            .map(|&(&i, doc)| {
                let mut terms = sk.tokenizer().terms(&doc.body, doc.url.as_deref());
                terms.truncate(MAX_TERMS);
                let analysis = sk.analyze(doc);
                (
                    i,
                    Read {
                        terms,
                        analysis,
                        doc,
                    },
                )
            })
            .collect();
        let scorer = Scorer::new(self.pipeline);
        let sections: Vec<String> = self
            .sampled
            .par_iter()
            .map(|&(part, i)| self.section(part, i, &read, &copies, &scorer))
            .collect();
        h.extend(sections);
        h
    }

    /// One sampled cluster: each member shown beside the representative.
    fn section(
        &self,
        part: &str,
        i: usize,
        read: &HashMap<u32, Read<'_>>,
        copies: &HashSet<u32>,
        scorer: &Scorer,
    ) -> String {
        let f = self.facts;
        let c = &f.clusters[i];
        let rep = c.representative;
        let mut h = format!(
            "<section class=\"cluster\" data-cluster=\"{i}\"><h3>{} · {} members · kept: {}</h3>",
            esc(part),
            c.members.len(),
            esc(&f.ids[rep as usize])
        );
        for m in shown(c) {
            let id = esc(&f.ids[m as usize]);
            let rule = self.rule(rep, m, copies);
            let _ = write!(
                h,
                "<div class=\"member\" data-member=\"{id}\"><b>{id}</b> · {rule}"
            );
            match (read.get(&rep), read.get(&m)) {
                (Some(a), Some(b)) => {
                    let class = self.pipeline.pair_class(a.doc, b.doc);
                    let s = scorer.score(&a.analysis, &b.analysis, class, 0.0);
                    let _ = write!(
                        h,
                        " · Charikar agreement {} · shared supershingles {} · estimated resemblance {:.3} · Jaccard {:.3}",
                        s.agreement, s.shared_supershingles, s.estimated_resemblance, s.jaccard
                    );
                    h.push_str(&diff(&a.terms, &b.terms));
                }
                _ => h.push_str(
                    "<p>(texts not read: a record of an earlier snapshot, or not found in the inputs)</p>",
                ),
            }
            h.push_str("</div>");
        }
        h.push_str("</section>");
        h
    }
}

/// A run's page but for its report: the facts, the sample, and the sample's
/// section rendered (the costly part, which `dedup` does while it writes its outputs).
pub struct Prepared {
    facts: Facts,
    sampled: Vec<(&'static str, usize)>,
    samples: String,
}

/// Prepares the page of a run in memory (`dedup --html`, the Python package's
/// `Dedup.to_html`): `read` gives the documents of the sample's ordinals (read back
/// from the inputs, see [`read_by_ordinal`]).
pub fn prepare_run(
    d: &Dedup,
    pipeline: &Pipeline,
    read: impl FnOnce(&BTreeSet<u32>) -> Result<HashMap<u32, Document>>,
) -> Result<Prepared> {
    let (facts, ordinals) = Facts::of_run(d);
    let sampled = sample(&facts);
    let wanted = wanted(&facts, &sampled);
    let by_ordinal: BTreeSet<u32> = wanted.iter().map(|&i| ordinals[i as usize]).collect();
    let mut read = read(&by_ordinal)?;
    let docs = wanted
        .iter()
        .filter_map(|&i| read.remove(&ordinals[i as usize]).map(|doc| (i, doc)))
        .collect();
    let samples = Page {
        facts: &facts,
        pipeline,
        sampled: &sampled,
        docs,
    }
    .samples();
    Ok(Prepared {
        facts,
        sampled,
        samples,
    })
}

impl Prepared {
    /// The page, given the run's report as `--report` writes it.
    pub fn render(mut self, report: Value, pipeline: &Pipeline) -> Result<String> {
        self.facts.report = report;
        Page {
            facts: &self.facts,
            pipeline,
            sampled: &self.sampled,
            docs: HashMap::new(),
        }
        .render_with(&self.samples)
    }
}

/// The page of a finished run (`neardup report`): its facts ([`Facts::of_files`]),
/// the pipeline of its settings, the sample's texts found by id in `inputs`.
pub fn page_of_files(
    facts: &Facts,
    pipeline: &Pipeline,
    inputs: &[Input],
    fields: &Fields,
) -> Result<String> {
    let sampled = sample(facts);
    let wanted = wanted(facts, &sampled);
    let ids = facts.wanted_ids(&wanted);
    let docs = read_by_id(inputs, fields, pipeline.max_record_bytes(), &ids)?;
    Page {
        facts,
        pipeline,
        sampled: &sampled,
        docs,
    }
    .render()
}
