//! The shapes of `dedup`'s machine-readable outputs: the report (`--report`) and one
//! line of the rejects, clusters and pairs files. Each is a struct, so the schema is
//! written down once and checked by the compiler; the fields of the JSONL lines are in
//! alphabetical order, the order the files have always had.

use crate::cluster::Cluster;
use crate::pipeline::Decisions;
use crate::pipeline::{Fate, FateCounts, Pair, Stats};
use crate::sketch::boilerplate::{BoilerplateConfig, SiteBoilerplate};
use crate::{Dedup, Pipeline, RejectReason, SketchConfig};
use serde::Serialize;

pub mod html;

/// The version of the report's schema; bumped whenever a field changes meaning or goes.
pub const REPORT_FORMAT_VERSION: u32 = 1;

/// `dedup --report`: what ran, on what, and where every record went.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`REPORT_FORMAT_VERSION`].
    pub format_version: u32,
    /// The version of the `neardup` binary.
    pub neardup_version: &'static str,
    /// The inputs' names, in reading order.
    pub inputs: Vec<&'a str>,
    /// The algorithm's settings.
    pub parameters: Parameters<'a>,
    /// The accounting: every record read is kept, dropped as a duplicate or rejected.
    pub accounting: Accounting<'a>,
    /// The run's statistics.
    pub stats: &'a Stats,
    /// The boilerplate pass, when it ran.
    pub boilerplate: Option<BoilerplateReport<'a>>,
    /// The process's peak resident memory, when the system reports it.
    pub peak_memory_bytes: Option<u64>,
    /// Stage two's decisions: accepted and rejected candidates by Charikar agreement
    /// and shared supershingles, per class of pair.
    pub decisions: &'a Decisions,
    /// What the run was given (the format, record fields and flags, merged with the
    /// configuration file): `neardup report` rebuilds the run's pipeline from it.
    pub settings: Settings,
}

/// The settings a run was given, as `dedup`'s flags name them.
pub use crate::settings::RunSettings as Settings;

/// The settings of a run.
#[derive(Serialize)]
pub struct Parameters<'a> {
    /// Tokenizing, shingling and sketching.
    pub sketch: &'a SketchConfig,
    /// The stage-one candidate generator.
    pub stage_one: String,
    /// The stage-two rule.
    pub stage_two: String,
    /// The Charikar agreement a pair needs (of the projection's bits).
    pub charikar_threshold: u32,
    /// The high-recall union's agreement, when it is on.
    pub high_recall: Option<u32>,
}

/// The report's accounting, checked against the reader's own counts.
#[derive(Serialize)]
pub struct Accounting<'a> {
    /// Records read (counted by the pipeline).
    pub read: u64,
    /// Records of the earlier snapshot (`--sketches`), not counted in `read`.
    pub previous_snapshot: u64,
    /// Records kept.
    pub kept: u64,
    /// Records dropped as exact duplicates.
    pub exact_duplicates: u64,
    /// Records dropped as near-duplicates.
    pub near_duplicates: u64,
    /// Records rejected.
    pub rejected: u64,
    /// What the reader counted, per input.
    pub per_input: Vec<InputCount<'a>>,
    /// Kept records written (when `--output` was given).
    pub kept_written: Option<u64>,
    /// Rejected records written (when `--rejects` was given).
    pub rejects_written: Option<u64>,
    /// Records written annotated (when `--annotate` was given): all of them.
    pub annotated_written: Option<u64>,
    /// Dropped records of this snapshot in the clusters (each cluster keeps one).
    pub dropped_in_clusters: u64,
    /// Whether all the counts agree.
    pub holds: bool,
}

/// One input's records and bytes, as the reader counted them.
#[derive(Serialize)]
pub struct InputCount<'a> {
    /// The input's name.
    pub input: &'a str,
    /// Records read from it (rejected ones included).
    pub records: u64,
    /// Bytes read from it: of the JSONL lines, else of the document bodies.
    pub bytes: u64,
    /// Its records kept.
    pub kept: u64,
    /// Its records dropped as exact duplicates.
    pub exact_duplicates: u64,
    /// Its records dropped as near-duplicates.
    pub near_duplicates: u64,
    /// Its records rejected.
    pub rejected: u64,
    /// Kept records written to its own file (`--output-dir`).
    pub kept_written: Option<u64>,
}

impl<'a> Accounting<'a> {
    /// The accounting of `d`: its counts, checked against the records the reader
    /// counted (`read`), each input's own (`per_input`), and what was written — the
    /// kept records, the rejects and the annotated records, `None` when not written.
    pub fn of(
        d: &Dedup,
        read: u64,
        per_input: Vec<InputCount<'a>>,
        written: [Option<u64>; 3],
    ) -> Self {
        let s = &d.stats;
        let dropped = dropped_in_clusters(d);
        let [kept_written, rejects_written, annotated_written] = written;
        let holds = s.read == read
            && per_input.iter().all(InputCount::holds)
            && kept_written.is_none_or(|k| k == s.kept)
            && rejects_written.is_none_or(|r| r == s.rejected)
            && annotated_written.is_none_or(|a| a == s.read)
            && dropped == s.exact_duplicates + s.near_duplicates;
        Accounting {
            read: s.read,
            previous_snapshot: s.previous,
            kept: s.kept,
            exact_duplicates: s.exact_duplicates,
            near_duplicates: s.near_duplicates,
            rejected: s.rejected,
            per_input,
            kept_written,
            rejects_written,
            annotated_written,
            dropped_in_clusters: dropped,
            holds,
        }
    }
}

impl<'a> InputCount<'a> {
    /// An input's counts: its records and bytes as the reader counted them, and the
    /// fates of its records tallied.
    pub fn tally(
        input: &'a str,
        records: u64,
        bytes: u64,
        fates: &[Fate],
        kept_written: Option<u64>,
    ) -> Self {
        let c = FateCounts::of(fates);
        InputCount {
            input,
            records,
            bytes,
            kept: c.kept,
            exact_duplicates: c.exact_duplicates,
            near_duplicates: c.near_duplicates,
            rejected: c.rejected,
            kept_written,
        }
    }

    /// Whether its fates add up to its records, and its own file (if any) holds its
    /// kept records.
    pub fn holds(&self) -> bool {
        self.records == self.kept + self.exact_duplicates + self.near_duplicates + self.rejected
            && self.kept_written.is_none_or(|k| k == self.kept)
    }
}

/// The dropped records of this snapshot in the clusters: each cluster keeps one
/// member, and members of an earlier snapshot were not read.
pub fn dropped_in_clusters(d: &Dedup) -> u64 {
    d.clusters
        .iter()
        .map(|c| {
            c.members
                .iter()
                .filter(|&&m| m as usize >= d.previous)
                .count() as u64
                - u64::from(c.representative as usize >= d.previous)
        })
        .sum()
}

impl<'a> Parameters<'a> {
    /// The settings of `pipeline`.
    pub fn of(pipeline: &'a Pipeline) -> Self {
        let (stage_one, stage_two) = pipeline.describe();
        Parameters {
            sketch: pipeline.sketcher().config(),
            stage_one,
            stage_two,
            charikar_threshold: pipeline.charikar_threshold(),
            high_recall: pipeline.high_recall_threshold(),
        }
    }
}

impl<'a> Report<'a> {
    /// The report of a run over records handed over in memory (the Python package's
    /// runs): one input named `input`, nothing written, the accounting of the result's
    /// own counts.
    pub fn of_records(
        d: &'a Dedup,
        pipeline: &'a Pipeline,
        input: &'a str,
        settings: Settings,
    ) -> Self {
        let s = &d.stats;
        let fates = &d.fates[d.previous.min(d.fates.len())..];
        let one = InputCount::tally(input, s.read, s.bytes, fates, None);
        Report {
            format_version: REPORT_FORMAT_VERSION,
            neardup_version: env!("CARGO_PKG_VERSION"),
            inputs: vec![input],
            parameters: Parameters::of(pipeline),
            accounting: Accounting::of(d, s.read, vec![one], [None; 3]),
            stats: s,
            boilerplate: None,
            peak_memory_bytes: crate::pipeline::peak_memory_bytes(),
            decisions: &d.decisions,
            settings,
        }
    }
}

/// The boilerplate pass.
#[derive(Serialize)]
pub struct BoilerplateReport<'a> {
    /// Its settings.
    pub settings: &'a BoilerplateConfig,
    /// Seconds it took.
    pub seconds: f64,
    /// Pages it counted.
    pub pages_counted: u64,
    /// Sites with at least one boilerplate shingle.
    pub sites_with_boilerplate: usize,
    /// Boilerplate shingles in all.
    pub boilerplate_shingles: usize,
    /// Pages that lost terms to it.
    pub pages_changed: u64,
    /// Terms and shingles removed.
    pub terms_and_shingles_removed: u64,
    /// Per site.
    pub sites: &'a [SiteBoilerplate],
}

/// One line of `--rejects`.
#[derive(Serialize)]
pub struct RejectLine<'a> {
    /// The reason's code ([`RejectReason::code`]).
    pub code: &'static str,
    /// The file within a directory input, when there is one.
    pub file: Option<&'a str>,
    /// The record's id, when it could be read.
    pub id: Option<&'a str>,
    /// The input's name.
    pub input: &'a str,
    /// The position in the input: line (JSONL), byte offset (WARC), file number
    /// (directory).
    pub position: u64,
    /// Why, in words.
    pub reason: String,
    /// The record's ordinal in this snapshot.
    pub record: u64,
}

impl<'a> RejectLine<'a> {
    /// The line for a rejected record.
    pub fn new(
        record: u64,
        input: &'a str,
        position: u64,
        file: Option<&'a str>,
        id: Option<&'a str>,
        reason: &RejectReason,
    ) -> Self {
        RejectLine {
            code: reason.code(),
            file,
            id,
            input,
            position,
            reason: reason.to_string(),
            record,
        }
    }
}

/// One line of `--clusters`.
#[derive(Serialize)]
pub struct ClusterLine<'a> {
    /// The ids of all members, the representative included, in input order.
    pub members: Vec<&'a str>,
    /// The kept member's id.
    pub representative: &'a str,
    /// The number of members.
    pub size: usize,
}

impl<'a> ClusterLine<'a> {
    /// The line for a cluster of `d`.
    pub fn new(d: &'a Dedup, c: &Cluster) -> Self {
        ClusterLine {
            members: c
                .members
                .iter()
                .map(|&m| d.ids[m as usize].as_str())
                .collect(),
            representative: &d.ids[c.representative as usize],
            size: c.members.len(),
        }
    }
}

/// One line of `--pairs`.
#[derive(Serialize)]
pub struct PairLine<'a> {
    /// The first record's id (the earlier in input order).
    pub a: &'a str,
    /// The second record's id.
    pub b: &'a str,
    /// The Charikar agreement, in bits.
    pub charikar_agreement: u32,
    /// How the pair was found: `exact`, `near` or `high_recall`.
    pub kind: &'static str,
    /// Shared supershingles.
    pub shared_supershingles: u32,
    /// The pair's class: `same`, `cross` or `unknown` site.
    pub site: &'static str,
}

impl<'a> PairLine<'a> {
    /// The line for a pair of `d`.
    pub fn new(d: &'a Dedup, p: &Pair) -> Self {
        PairLine {
            a: &d.ids[p.a as usize],
            b: &d.ids[p.b as usize],
            charikar_agreement: p.agreement,
            kind: p.kind.as_str(),
            shared_supershingles: p.shared_supershingles,
            site: p.class.as_str(),
        }
    }
}
