//! Parquet files: records read row group by row group (only the columns the fields
//! name are decoded), and the batches of a whole file for writing outputs with the
//! input's schema.
//!
//! A record is a row; its position is the row's number in the file, from 1. The
//! columns are the ones [`Fields`] names (a dotted name such as `meta.url` reaches into
//! a struct column); their rules are [`visit_batch`]'s. A file that is not Parquet is
//! one rejection (`cannot read input`); a page that cannot be decoded stops the file
//! with one rejection naming the first row not read ([`RejectReason::UnreadableRows`]).

use super::batch::visit_batch;
use super::{Fields, Position, RawRecord};
use crate::document::{RejectReason, Rejection};
use crate::error::{Error, Result};
use arrow::array::RecordBatch;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;

/// Rows decoded at a time (a batch holds this many records' columns).
const BATCH_ROWS: usize = 1024;

/// Whether the file starts with Parquet's magic bytes `PAR1`.
pub(super) fn is_parquet(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"PAR1"
}

/// A reader of the batches of `path`: every column, or only the top-level columns
/// that `fields` names (a dotted name selects its first part).
pub fn read_batches(path: &Path, fields: Option<&Fields>) -> Result<ParquetRecordBatchReader> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let corrupt = |e: parquet::errors::ParquetError| Error::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut b = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(corrupt)?
        .with_batch_size(BATCH_ROWS);
    if let Some(f) = fields {
        let wanted: Vec<&str> = [Some(&f.id), Some(&f.text), Some(&f.html), Some(&f.url)]
            .into_iter()
            .chain([f.site.as_ref(), f.priority.as_ref()])
            .flatten()
            .map(|n| root_of(n, b.schema()))
            .collect();
        let roots: Vec<usize> = b
            .schema()
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, field)| wanted.contains(&field.name().as_str()))
            .map(|(i, _)| i)
            .collect();
        let mask = ProjectionMask::roots(b.parquet_schema(), roots);
        b = b.with_projection(mask);
    }
    b.build().map_err(corrupt)
}

/// The top-level column a field name reads: itself when the schema has it, else the
/// part before the first dot (a struct column).
fn root_of<'a>(name: &'a str, schema: &arrow::datatypes::Schema) -> &'a str {
    if schema.field_with_name(name).is_ok() {
        name
    } else {
        name.split('.').next().unwrap_or(name)
    }
}

/// The records of one Parquet input, a batch at a time.
pub(super) struct ParquetRecords {
    batches: ParquetRecordBatchReader,
    queue: VecDeque<RawRecord>,
    rows: u64,
    done: bool,
}

impl ParquetRecords {
    pub(super) fn open(path: &Path, fields: &Fields) -> Result<Self> {
        Ok(ParquetRecords {
            batches: read_batches(path, Some(fields))?,
            queue: VecDeque::new(),
            rows: 0,
            done: false,
        })
    }

    /// The next record of input number `input` (named `source` in generated ids), or
    /// `None` at the end. A batch that cannot be decoded ends the input with one
    /// rejection at the first row it held.
    pub(super) fn next(
        &mut self,
        input: usize,
        source: &str,
        fields: &Fields,
    ) -> Option<RawRecord> {
        while self.queue.is_empty() && !self.done {
            match self.batches.next() {
                None => self.done = true,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(RawRecord {
                        position: Position {
                            input,
                            at: self.rows + 1,
                            file: None,
                        },
                        raw: None,
                        doc: Some(Err(Rejection {
                            id: None,
                            reason: RejectReason::UnreadableRows {
                                row: self.rows + 1,
                                error: e.to_string(),
                            },
                        })),
                    });
                }
                Some(Ok(b)) => self.push_batch(&b, input, source, fields),
            }
        }
        self.queue.pop_front()
    }

    fn push_batch(&mut self, b: &RecordBatch, input: usize, source: &str, fields: &Fields) {
        let first = self.rows;
        let mut i = 0u64;
        let queue = &mut self.queue;
        visit_batch(b, fields, first, Some(source), |r| {
            i += 1;
            queue.push_back(RawRecord {
                position: Position {
                    input,
                    at: first + i,
                    file: None,
                },
                raw: None,
                doc: Some(r.cloned()),
            });
        });
        self.rows += b.num_rows() as u64;
    }
}
