//! `dedup`'s second pass: every record read again, in input order, and written where
//! its fate sends it — the kept records (`-o`, and one file per input with
//! `--output-dir`), every record annotated (`--annotate`), the rejects (`--rejects`).
//! JSONL lines are lent from the read buffer by [`JsonlLines`] (the reader's own line
//! rule) and a kept one is written as it was read; WARC and directory inputs go through
//! the reader record by record; a Parquet input is read batch by batch with all its
//! columns and filtered by a mask, so the kept rows keep the input's schema and memory
//! stays at a batch. When the kept records of plain JSONL files are all it writes, it
//! takes the fast way of [`crate::kept_ranges`] instead.

use crate::output::{annotate_batch, Note, Sink};
use crate::report::RejectLine;
use anyhow::{bail, Context, Result};
use arrow::array::BooleanArray;
use neardup::io::parquet::{Piece, Rows};
use neardup::io::{Fields, Format, Input, JsonlLine, JsonlLines, Reader};
use neardup::persist::AtomicFile;
use neardup::pipeline::Fate;
use neardup::Dedup;
use std::io::Write;
use std::path::Path;

/// Where the second pass writes.
#[derive(Default)]
pub struct Targets<'a> {
    /// All kept records.
    pub output: Option<Sink>,
    /// One file of kept records per input, named by [`Input::shard`].
    pub output_dir: Option<&'a Path>,
    /// Every record, annotated.
    pub annotate: Option<Sink>,
    /// The rejects lines.
    pub rejects: Option<AtomicFile>,
}

/// What the second pass wrote, counted as it wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Kept records written to `-o`.
    pub kept: Option<u64>,
    /// Rejects lines written.
    pub rejects: Option<u64>,
    /// Annotated records written.
    pub annotated: Option<u64>,
    /// Kept records written to each input's own file (`--output-dir`).
    pub per_input_kept: Vec<Option<u64>>,
}

/// `n` rows of nulls with `schema` (the annotated place of rows that cannot be
/// decoded); an error when a column cannot be null.
fn null_rows(schema: &arrow::datatypes::SchemaRef, n: usize) -> Result<arrow::array::RecordBatch> {
    let cols = schema
        .fields()
        .iter()
        .map(|f| arrow::array::new_null_array(f.data_type(), n))
        .collect();
    arrow::array::RecordBatch::try_new(schema.clone(), cols)
        .context("annotating rows that cannot be decoded: the input's schema has a column that cannot be null")
}

/// The fates' annotations, by ordinal.
struct Notes<'a> {
    d: &'a Dedup,
    cluster_of: Vec<Option<u32>>,
}

impl<'a> Notes<'a> {
    fn new(d: &'a Dedup) -> Self {
        let mut cluster_of = vec![None; d.fates.len()];
        for c in &d.clusters {
            for &m in &c.members {
                cluster_of[m as usize] = Some(c.representative);
            }
        }
        Notes { d, cluster_of }
    }

    fn id(&self, o: u32) -> Option<&'a str> {
        self.d.ids.get(o as usize).map(String::as_str)
    }

    fn note(&self, ordinal: usize, reason: &'a Option<String>) -> Note<'a> {
        let (fate, of) = match &self.d.fates[ordinal] {
            Fate::Kept => ("kept", None),
            Fate::ExactDuplicate { of } => ("exact", self.id(*of)),
            Fate::NearDuplicate { of } => ("near", self.id(*of)),
            Fate::Rejected { .. } => ("rejected", None),
            _ => ("unknown", None),
        };
        Note {
            fate,
            of,
            cluster: self.cluster_of[ordinal].and_then(|c| self.id(c)),
            reason: reason.as_deref(),
        }
    }
}

impl<'a> Notes<'a> {
    /// The notes of the records from `ordinal` on, one per reason (`reasons[j]` is
    /// record `ordinal + j`'s).
    fn run<'r>(&self, ordinal: usize, reasons: &'r [Option<String>]) -> Vec<Note<'r>>
    where
        'a: 'r,
    {
        reasons
            .iter()
            .enumerate()
            .map(|(j, r)| self.note(ordinal + j, r))
            .collect()
    }
}

fn reason_of(f: &Fate) -> Option<String> {
    match f {
        Fate::Rejected { reason } => Some(reason.to_string()),
        _ => None,
    }
}

/// Runs the second pass over `inputs` (read with `fields`, JSONL lines up to
/// `max_record` bytes) for the result `d`, on at most `threads` threads.
pub fn write_back(
    d: &Dedup,
    inputs: &[Input],
    fields: &Fields,
    max_record: usize,
    ranges: &crate::kept_ranges::Ranges,
    mut t: Targets<'_>,
    threads: usize,
) -> Result<Written> {
    if t.output.is_none() && t.output_dir.is_none() && t.annotate.is_none() && t.rejects.is_none() {
        // Nothing to write: no second pass.
        return Ok(Written {
            per_input_kept: vec![None; inputs.len()],
            ..Written::default()
        });
    }
    if let (Some(out), None, None, None) = (&t.output, t.output_dir, &t.annotate, &t.rejects) {
        // Only the kept records: written from where the first pass found them.
        if let Some(n) = crate::kept_ranges::write_kept(d, inputs, ranges, out, threads)? {
            if let Some(o) = t.output {
                o.commit()?;
            }
            return Ok(Written {
                kept: Some(n),
                per_input_kept: vec![None; inputs.len()],
                ..Written::default()
            });
        }
    }
    let notes = Notes::new(d);
    let mut ordinal = d.previous;
    let (mut kept_n, mut rejects_n, mut annotated_n) = (0u64, 0u64, 0u64);
    let mut per_input_kept = Vec::with_capacity(inputs.len());
    let fate_at = |o: usize| -> Result<&Fate> {
        d.fates
            .get(o)
            .context("input changed between the two passes (more records the second time)")
    };
    for input in inputs {
        let mut own = match t.output_dir {
            Some(dir) => Some(Sink::create(&dir.join(&input.shard), threads)?),
            None => None,
        };
        let mut own_n = 0u64;
        let mut reject =
            |ordinal: usize, position: u64, file: Option<&str>, reason: &Fate| -> Result<()> {
                if let (Some(r), Fate::Rejected { reason }) = (t.rejects.as_mut(), reason) {
                    let id = d.ids.get(ordinal).filter(|i| !i.is_empty());
                    serde_json::to_writer(
                        &mut *r,
                        &RejectLine::new(
                            (ordinal - d.previous) as u64,
                            &input.name,
                            position,
                            file,
                            id.map(String::as_str),
                            reason,
                        ),
                    )?;
                    r.write_all(b"\n")?;
                    rejects_n += 1;
                }
                Ok(())
            };
        if input.format == Format::Parquet {
            // The first pass made one rejection of an input it could not open.
            let Ok(rows) = Rows::open(&input.path, None) else {
                let f = fate_at(ordinal)?;
                if !matches!(f, Fate::Rejected { .. }) {
                    bail!(
                        "{}: cannot be opened any more (the input changed)",
                        input.name
                    );
                }
                if let Some(a) = t.annotate.as_mut() {
                    let reason = reason_of(f);
                    a.line(&notes.note(ordinal, &reason).standalone(&input.name, 0))
                        .with_context(|| format!("{} cannot be read", input.name))?;
                    annotated_n += 1;
                }
                reject(ordinal, 0, None, f)?;
                ordinal += 1;
                if let Some(o) = own {
                    o.commit()?;
                }
                per_input_kept.push(t.output_dir.map(|_| own_n));
                continue;
            };
            let schema = rows.schema();
            let mut row = 0u64;
            for piece in rows {
                match piece {
                    Piece::Batch(b) => {
                        let n = b.num_rows();
                        if ordinal + n > d.fates.len() {
                            bail!(
                                "input changed between the two passes ({} has more rows)",
                                input.name
                            );
                        }
                        let fates = &d.fates[ordinal..ordinal + n];
                        if let Some(j) = fates.iter().position(|f| {
                            matches!(f, Fate::Rejected { reason } if reason.code() == "damaged_rows")
                        }) {
                            bail!(
                                "{}: row {} could not be decoded in the first pass but can be now \
                                 (the input changed)",
                                input.name,
                                row + j as u64 + 1
                            );
                        }
                        let mask: BooleanArray = fates
                            .iter()
                            .map(|f| Some(matches!(f, Fate::Kept)))
                            .collect();
                        let kept = arrow::compute::filter_record_batch(&b, &mask)?;
                        if let Some(o) = t.output.as_mut() {
                            o.batch(&kept)?;
                            kept_n += kept.num_rows() as u64;
                        }
                        if let Some(o) = own.as_mut() {
                            o.batch(&kept)?;
                            own_n += kept.num_rows() as u64;
                        }
                        if let Some(a) = t.annotate.as_mut() {
                            let reasons: Vec<Option<String>> =
                                fates.iter().map(reason_of).collect();
                            let ns = notes.run(ordinal, &reasons);
                            a.batch(&annotate_batch(&b, &ns)?)?;
                            annotated_n += n as u64;
                        }
                        for (j, f) in fates.iter().enumerate() {
                            reject(ordinal + j, row + j as u64 + 1, None, f)?;
                        }
                        ordinal += n;
                        row += n as u64;
                    }
                    Piece::Damaged {
                        first_row, rows: n, ..
                    } => {
                        let n = n as usize;
                        if ordinal + n > d.fates.len() {
                            bail!(
                                "input changed between the two passes ({} has more rows)",
                                input.name
                            );
                        }
                        let fates = &d.fates[ordinal..ordinal + n];
                        if !fates.iter().all(|f| matches!(f, Fate::Rejected { .. })) {
                            bail!(
                                "{}: rows from {first_row} cannot be decoded with all their columns \
                                 (the first pass read the fields' columns only): the file is \
                                 damaged outside them",
                                input.name
                            );
                        }
                        if let Some(a) = t.annotate.as_mut() {
                            let reasons: Vec<Option<String>> =
                                fates.iter().map(reason_of).collect();
                            let ns = notes.run(ordinal, &reasons);
                            match a {
                                Sink::Parquet { .. } => {
                                    a.batch(&annotate_batch(&null_rows(&schema, n)?, &ns)?)?
                                }
                                Sink::Lines { .. } => {
                                    for (j, note) in ns.iter().enumerate() {
                                        a.line(
                                            &note.standalone(&input.name, first_row + j as u64),
                                        )?;
                                    }
                                }
                            }
                            annotated_n += n as u64;
                        }
                        for (j, f) in fates.iter().enumerate() {
                            reject(ordinal + j, first_row + j as u64, None, f)?;
                        }
                        ordinal += n;
                        row += n as u64;
                    }
                }
            }
        } else if input.format == Format::Jsonl {
            // JSONL lines come lent from the read buffer, unparsed: a kept line is
            // written as it was read, and only a rejected one is looked at again
            // (`Note::annotate_line`).
            let mut lines = JsonlLines::open(input, max_record)?;
            while let Some(line) = lines.next() {
                let f = fate_at(ordinal)?;
                let (at, raw) = match line {
                    JsonlLine::Record { at, bytes } => (at, Some(bytes)),
                    JsonlLine::TooLarge { at, .. } | JsonlLine::Unreadable { at, .. } => (at, None),
                };
                if let (Fate::Kept, Some(bytes)) = (f, raw) {
                    if let Some(o) = t.output.as_mut() {
                        o.line(bytes)?;
                        kept_n += 1;
                    }
                    if let Some(o) = own.as_mut() {
                        o.line(bytes)?;
                        own_n += 1;
                    }
                }
                if let Some(a) = t.annotate.as_mut() {
                    let reason = reason_of(f);
                    let note = notes.note(ordinal, &reason);
                    let line = raw
                        .and_then(|raw| note.annotate_line(raw))
                        .unwrap_or_else(|| note.standalone(&input.name, at));
                    a.line(&line)?;
                    annotated_n += 1;
                }
                reject(ordinal, at, None, f)?;
                ordinal += 1;
            }
        } else {
            // WARC and directory records, parsed again.
            let reader = Reader::new(vec![input.clone()], fields.clone(), false, true)
                .max_record_bytes(max_record);
            for rec in reader {
                let rec = rec?;
                let f = fate_at(ordinal)?;
                let doc = || match &rec.doc {
                    Some(Ok(doc)) => Some(crate::doc_json(doc)),
                    _ => None,
                };
                if matches!(f, Fate::Kept) {
                    let bytes = match doc() {
                        Some(v) => serde_json::to_vec(&v)?,
                        None => Vec::new(),
                    };
                    if let Some(o) = t.output.as_mut() {
                        o.line(&bytes)?;
                        kept_n += 1;
                    }
                    if let Some(o) = own.as_mut() {
                        o.line(&bytes)?;
                        own_n += 1;
                    }
                }
                if let Some(a) = t.annotate.as_mut() {
                    let reason = reason_of(f);
                    let note = notes.note(ordinal, &reason);
                    let line = doc()
                        .map(|v| note.annotate_object(v))
                        .unwrap_or_else(|| note.standalone(&input.name, rec.position.at));
                    a.line(&line)?;
                    annotated_n += 1;
                }
                reject(ordinal, rec.position.at, rec.position.file.as_deref(), f)?;
                ordinal += 1;
            }
        }
        if let Some(o) = own {
            o.commit()?;
        }
        per_input_kept.push(t.output_dir.map(|_| own_n));
    }
    if ordinal != d.fates.len() {
        bail!(
            "input changed between the two passes ({ordinal} records, then {})",
            d.fates.len()
        );
    }
    let w = Written {
        kept: t.output.is_some().then_some(kept_n),
        rejects: t.rejects.is_some().then_some(rejects_n),
        annotated: t.annotate.is_some().then_some(annotated_n),
        per_input_kept,
    };
    if let Some(o) = t.output {
        o.commit()?;
    }
    if let Some(a) = t.annotate {
        a.commit()?;
    }
    if let Some(r) = t.rejects {
        r.commit()?;
    }
    Ok(w)
}
