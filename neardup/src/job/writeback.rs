//! `dedup`'s second pass: every record read again, in input order, and written where
//! its fate sends it — the kept records (`-o`, and one file per input with
//! `--output-dir`), every record annotated (`--annotate`), the rejects (`--rejects`).
//! JSONL lines are lent from the read buffer by [`JsonlLines`] (the reader's own line
//! rule) and a kept one is written as it was read; WARC and directory inputs go through
//! the reader record by record; a Parquet input is read batch by batch with all its
//! columns and filtered by a mask, so the kept rows keep the input's schema and memory
//! stays at a batch. When the kept records of plain JSONL files are all it writes, it
//! takes the fast way of [`crate::job::kept_ranges`] instead.

use super::sink::{annotate_batch, Note, Sink};
use crate::error::{Error, Result};
use crate::report::RejectLine;

/// Returns an [`Error::InputChanged`] with the message.
macro_rules! bail {
    ($($t:tt)*) => { return Err(Error::InputChanged(format!($($t)*))) };
}
use crate::io::parquet::{Piece, Rows};
use crate::io::{Fields, Format, Input, JsonlLine, JsonlLines, Reader};
use crate::persist::AtomicFile;
use crate::pipeline::Fate;
use crate::Dedup;
use arrow::array::BooleanArray;
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
        .map_err(|e| {
            Error::Config(format!("annotating rows that cannot be decoded: the input's schema has a column that cannot be null ({e})"))
        })
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
    ranges: &super::kept_ranges::Ranges,
    t: Targets<'_>,
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
        if let Some(n) = super::kept_ranges::write_kept(d, inputs, ranges, out, threads)? {
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
    let output_dir = t.output_dir;
    let mut pass = Pass {
        d,
        notes: Notes::new(d),
        ordinal: d.previous,
        t,
        own: None,
        counts: Written::default(),
        own_n: 0,
    };
    for input in inputs {
        pass.own = match output_dir {
            Some(dir) => Some(Sink::create(&dir.join(&input.shard), threads)?),
            None => None,
        };
        pass.own_n = 0;
        match input.format {
            Format::Parquet => pass.parquet(input)?,
            Format::Jsonl => pass.jsonl(input, max_record)?,
            _ => pass.parsed(input, fields, max_record)?,
        }
        if let Some(o) = pass.own.take() {
            o.commit()?;
        }
        let own_n = pass.own_n;
        pass.counts.per_input_kept.push(output_dir.map(|_| own_n));
    }
    pass.finish()
}

/// The second pass under way: where it writes, what it wrote, the next ordinal.
struct Pass<'a, 't> {
    d: &'a Dedup,
    notes: Notes<'a>,
    ordinal: usize,
    t: Targets<'t>,
    /// The current input's own file (`--output-dir`).
    own: Option<Sink>,
    /// Lines or rows written so far to `-o`, the rejects and the annotated output
    /// (each counted once its target is written to), and per input.
    counts: Written,
    /// Kept records written to the current input's own file.
    own_n: u64,
}

impl<'a> Pass<'a, '_> {
    /// Record `o`'s fate; an error when the input has more records than the first
    /// pass read.
    fn fate_at(&self, o: usize) -> Result<&'a Fate> {
        self.d.fates.get(o).ok_or_else(|| {
            Error::InputChanged(
                "input changed between the two passes (more records the second time)".into(),
            )
        })
    }

    /// The fates of the next `n` records, or an error naming the input that grew.
    fn fates(&self, n: usize, input: &Input) -> Result<&'a [Fate]> {
        if self.ordinal + n > self.d.fates.len() {
            bail!(
                "input changed between the two passes ({} has more rows)",
                input.name
            );
        }
        Ok(&self.d.fates[self.ordinal..self.ordinal + n])
    }

    /// A kept record's line, to `-o` and to the input's own file.
    fn kept_line(&mut self, bytes: &[u8]) -> Result<()> {
        if let Some(o) = self.t.output.as_mut() {
            o.line(bytes)?;
            *self.counts.kept.get_or_insert(0) += 1;
        }
        if let Some(o) = self.own.as_mut() {
            o.line(bytes)?;
            self.own_n += 1;
        }
        Ok(())
    }

    /// Kept rows, to `-o` and to the input's own file.
    fn kept_batch(&mut self, kept: &arrow::array::RecordBatch) -> Result<()> {
        let n = kept.num_rows() as u64;
        if let Some(o) = self.t.output.as_mut() {
            o.batch(kept)?;
            *self.counts.kept.get_or_insert(0) += n;
        }
        if let Some(o) = self.own.as_mut() {
            o.batch(kept)?;
            self.own_n += n;
        }
        Ok(())
    }

    /// One annotated line (the note of record `ordinal`, on `raw` when there is one).
    fn annotated_line(
        &mut self,
        ordinal: usize,
        line: impl FnOnce(&Note) -> Vec<u8>,
    ) -> Result<()> {
        if let Some(a) = self.t.annotate.as_mut() {
            let reason = reason_of(&self.d.fates[ordinal]);
            let note = self.notes.note(ordinal, &reason);
            a.line(&line(&note))?;
            *self.counts.annotated.get_or_insert(0) += 1;
        }
        Ok(())
    }

    /// The rejects line of record `ordinal`, when it was rejected.
    fn reject(
        &mut self,
        ordinal: usize,
        input: &Input,
        position: u64,
        file: Option<&str>,
    ) -> Result<()> {
        let d = self.d;
        if let (Some(r), Fate::Rejected { reason }) = (self.t.rejects.as_mut(), &d.fates[ordinal]) {
            let id = d.ids.get(ordinal).filter(|i| !i.is_empty());
            let line = RejectLine::new(
                (ordinal - d.previous) as u64,
                &input.name,
                position,
                file,
                id.map(String::as_str),
                reason,
            );
            serde_json::to_writer(&mut *r, &line).map_err(|e| Error::output("rejects", e))?;
            r.write_all(b"\n")?;
            *self.counts.rejects.get_or_insert(0) += 1;
        }
        Ok(())
    }

    /// A Parquet input, batch by batch: the kept rows through a mask, every row's
    /// annotation as columns (or lines), the damaged rows' rejects.
    fn parquet(&mut self, input: &Input) -> Result<()> {
        // The first pass made one rejection of an input it could not open.
        let Ok(rows) = Rows::open(&input.path, None) else {
            if !matches!(self.fate_at(self.ordinal)?, Fate::Rejected { .. }) {
                bail!(
                    "{}: cannot be opened any more (the input changed)",
                    input.name
                );
            }
            let o = self.ordinal;
            self.annotated_line(o, |n| n.standalone(&input.name, 0))?;
            self.reject(o, input, 0, None)?;
            self.ordinal += 1;
            return Ok(());
        };
        let schema = rows.schema();
        let mut row = 0u64;
        for piece in rows {
            let n = match piece {
                Piece::Batch(b) => {
                    self.parquet_batch(input, &b, row)?;
                    b.num_rows()
                }
                Piece::Damaged {
                    first_row, rows: n, ..
                } => {
                    self.parquet_damaged(input, &schema, first_row, n as usize)?;
                    n as usize
                }
            };
            self.ordinal += n;
            row += n as u64;
        }
        Ok(())
    }

    /// One decoded batch of a Parquet input, its first row numbered `row + 1`.
    fn parquet_batch(
        &mut self,
        input: &Input,
        b: &arrow::array::RecordBatch,
        row: u64,
    ) -> Result<()> {
        let fates = self.fates(b.num_rows(), input)?;
        if let Some(j) = fates
            .iter()
            .position(|f| matches!(f, Fate::Rejected { reason } if reason.code() == "damaged_rows"))
        {
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
        self.kept_batch(
            &arrow::compute::filter_record_batch(b, &mask).map_err(|e| Error::output("kept", e))?,
        )?;
        if let Some(a) = self.t.annotate.as_mut() {
            let reasons: Vec<Option<String>> = fates.iter().map(reason_of).collect();
            let ns = self.notes.run(self.ordinal, &reasons);
            a.batch(&annotate_batch(b, &ns)?)?;
            *self.counts.annotated.get_or_insert(0) += fates.len() as u64;
        }
        for j in 0..fates.len() {
            self.reject(self.ordinal + j, input, row + j as u64 + 1, None)?;
        }
        Ok(())
    }

    /// `n` rows of a Parquet input that cannot be decoded, from `first_row`: all
    /// rejected by the first pass, annotated as null rows (or lines).
    fn parquet_damaged(
        &mut self,
        input: &Input,
        schema: &arrow::datatypes::SchemaRef,
        first_row: u64,
        n: usize,
    ) -> Result<()> {
        let fates = self.fates(n, input)?;
        if !fates.iter().all(|f| matches!(f, Fate::Rejected { .. })) {
            return Err(Error::Corrupt {
                path: input.path.clone(),
                reason: format!(
                    "rows from {first_row} cannot be decoded with all their columns \
                     (the first pass read the fields' columns only): the file is \
                     damaged outside them"
                ),
            });
        }
        if let Some(a) = self.t.annotate.as_mut() {
            let reasons: Vec<Option<String>> = fates.iter().map(reason_of).collect();
            let ns = self.notes.run(self.ordinal, &reasons);
            match a {
                Sink::Parquet { .. } => a.batch(&annotate_batch(&null_rows(schema, n)?, &ns)?)?,
                Sink::Lines { .. } => {
                    for (j, note) in ns.iter().enumerate() {
                        a.line(&note.standalone(&input.name, first_row + j as u64))?;
                    }
                }
            }
            *self.counts.annotated.get_or_insert(0) += n as u64;
        }
        for j in 0..n {
            self.reject(self.ordinal + j, input, first_row + j as u64, None)?;
        }
        Ok(())
    }

    /// A JSONL input: lines come lent from the read buffer, unparsed; a kept line is
    /// written as it was read, and only a rejected one is looked at again
    /// (`Note::annotate_line`).
    fn jsonl(&mut self, input: &Input, max_record: usize) -> Result<()> {
        let mut lines = JsonlLines::open(input, max_record)?;
        while let Some(line) = lines.next() {
            let o = self.ordinal;
            let f = self.fate_at(o)?;
            let (at, raw) = match line {
                JsonlLine::Record { at, bytes } => (at, Some(bytes)),
                JsonlLine::TooLarge { at, .. } | JsonlLine::Unreadable { at, .. } => (at, None),
            };
            if let (Fate::Kept, Some(bytes)) = (f, raw) {
                self.kept_line(bytes)?;
            }
            self.annotated_line(o, |note| {
                raw.and_then(|raw| note.annotate_line(raw))
                    .unwrap_or_else(|| note.standalone(&input.name, at))
            })?;
            self.reject(o, input, at, None)?;
            self.ordinal += 1;
        }
        Ok(())
    }

    /// A WARC or directory input: its records parsed again, a kept one written as the
    /// JSON of its document.
    fn parsed(&mut self, input: &Input, fields: &Fields, max_record: usize) -> Result<()> {
        let reader = Reader::new(vec![input.clone()], fields.clone())
            .keep_raw(true)
            .max_record_bytes(max_record);
        for rec in reader {
            let rec = rec?;
            let o = self.ordinal;
            let f = self.fate_at(o)?;
            let doc = || match rec.doc() {
                Some(Ok(doc)) => Some(doc.to_json()),
                _ => None,
            };
            if matches!(f, Fate::Kept) {
                let bytes = match doc() {
                    Some(v) => serde_json::to_vec(&v).map_err(|e| Error::output("annotate", e))?,
                    None => Vec::new(),
                };
                self.kept_line(&bytes)?;
            }
            self.annotated_line(o, |note| {
                doc()
                    .map(|v| note.annotate_object(v))
                    .unwrap_or_else(|| note.standalone(&input.name, rec.position.at))
            })?;
            self.reject(o, input, rec.position.at, rec.position.file.as_deref())?;
            self.ordinal += 1;
        }
        Ok(())
    }

    /// Checks that every record was met again, commits the outputs, and says what
    /// was written.
    fn finish(self) -> Result<Written> {
        if self.ordinal != self.d.fates.len() {
            bail!(
                "input changed between the two passes ({} records, then {})",
                self.ordinal,
                self.d.fates.len()
            );
        }
        let t = self.t;
        let w = Written {
            kept: t.output.is_some().then(|| self.counts.kept.unwrap_or(0)),
            rejects: t
                .rejects
                .is_some()
                .then(|| self.counts.rejects.unwrap_or(0)),
            annotated: t
                .annotate
                .is_some()
                .then(|| self.counts.annotated.unwrap_or(0)),
            per_input_kept: self.counts.per_input_kept,
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
}
