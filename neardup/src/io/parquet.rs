//! Parquet files, read row group by row group: the records of the first pass (only the
//! columns the fields name are decoded) and the rows of the second, which writes
//! outputs with the input's schema. Memory holds a batch of rows at a time: up to
//! 1,024 rows, fewer when a row group's rows are big (about 4 MiB of the columns read,
//! by the row group's metadata). The decoder reads a data page whole, so a page is
//! held too: a writer that puts many big rows in one page (pyarrow checks the page's
//! size every 1,024 rows by default) makes a reader hold them all, whatever the batch.
//!
//! A record is a row; its position is the row's number in the file, from 1. The
//! columns are the ones [`Fields`] names (a dotted name such as `meta.url` reaches into
//! a struct column); their rules are [`visit_batch`](super::batch::visit_batch)'s. A file whose footer cannot be
//! read is one rejection (`cannot read input`); a row group that cannot be decoded (a
//! damaged page) costs its rows not yet read, each rejected with its row number
//! ([`RejectReason::DamagedRows`]), and reading goes on with the next row group. A
//! panic of the decoder on damaged bytes is caught and treated the same way.

use super::batch::{batch_documents, BatchColumns};
use super::{BatchRow, Content, Fields, Position, RawRecord};
use crate::document::{RejectReason, Rejection};
use crate::error::{Error, Result};
use arrow::array::RecordBatch;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// Rows decoded at a time at most (a batch holds this many records' columns).
const BATCH_ROWS: usize = 1024;

/// The bytes a batch holds, about: a row group whose rows are bigger on average than
/// `BATCH_BYTES / BATCH_ROWS` is decoded in batches of fewer rows (one at least), by
/// the uncompressed size of its columns that are read. Without it, 150 rows of 2.1 MB
/// in one row group (a data page per row) were decoded at once: a peak of 347 MB,
/// against 77–80 MB with it.
const BATCH_BYTES: u64 = 4 << 20;

/// The rows of a batch of a row group of `rows` rows whose columns read hold `bytes`
/// bytes uncompressed: [`BATCH_ROWS`], fewer when that would hold more than about
/// [`BATCH_BYTES`], one at least.
fn batch_rows(rows: u64, bytes: u64) -> usize {
    let fit = (BATCH_BYTES as u128 * rows as u128 / bytes.max(1) as u128).max(1);
    fit.min(BATCH_ROWS as u128) as usize
}

/// Whether the file starts with Parquet's magic bytes `PAR1`.
pub(super) fn is_parquet(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"PAR1"
}

/// Runs a step of the Parquet decoder, turning a panic on damaged bytes into an error:
/// a bad file must cost its records (rejected), never the run.
pub fn guarded<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the decoder failed".into());
        format!("damaged file: {what}")
    })
}

/// What [`Rows`] yields.
#[derive(Debug)]
pub enum Piece {
    /// Rows decoded, in file order.
    Batch(RecordBatch),
    /// Rows that cannot be decoded: `rows` rows from row `first_row` (from 1), the rest
    /// of row group `group` (from 0).
    Damaged {
        /// The first row not decoded, from 1.
        first_row: u64,
        /// How many rows.
        rows: u64,
        /// The row group, from 0.
        group: usize,
        /// The decoder's error.
        error: String,
    },
}

/// The rows of a Parquet file, row group by row group (see the module docs).
pub struct Rows {
    file: File,
    meta: ArrowReaderMetadata,
    mask: Option<ProjectionMask>,
    group: usize,
    reader: Option<ParquetRecordBatchReader>,
    /// Rows consumed so far (decoded or given up).
    row: u64,
    /// The row after the current group's last.
    group_end: u64,
}

impl Rows {
    /// Opens `path`: every column, or only the top-level columns that `fields` names (a
    /// dotted name selects its first part). An unreadable footer is an error.
    pub fn open(path: &Path, fields: Option<&Fields>) -> Result<Rows> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let corrupt = |reason: String| Error::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let meta = guarded(|| ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()))
            .map_err(corrupt)?
            .map_err(|e| corrupt(e.to_string()))?;
        let mask = fields.map(|f| {
            let wanted: Vec<&str> = [Some(&f.id), Some(&f.text), Some(&f.html), Some(&f.url)]
                .into_iter()
                .chain([f.site.as_ref(), f.priority.as_ref()])
                .flatten()
                .map(|n| root_of(n, meta.schema()))
                .collect();
            let roots: Vec<usize> = meta
                .schema()
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, field)| wanted.contains(&field.name().as_str()))
                .map(|(i, _)| i)
                .collect();
            ProjectionMask::roots(meta.parquet_schema(), roots)
        });
        Ok(Rows {
            file,
            meta,
            mask,
            group: 0,
            reader: None,
            row: 0,
            group_end: 0,
        })
    }

    /// The file's Arrow schema (of every column).
    pub fn schema(&self) -> arrow::datatypes::SchemaRef {
        self.meta.schema().clone()
    }

    fn open_group(&self, group: usize) -> std::result::Result<ParquetRecordBatchReader, String> {
        let file = self.file.try_clone().map_err(|e| e.to_string())?;
        let g = self.meta.metadata().row_group(group);
        let bytes: u64 = g
            .columns()
            .iter()
            .enumerate()
            .filter(|(leaf, _)| self.mask.as_ref().is_none_or(|m| m.leaf_included(*leaf)))
            .map(|(_, c)| c.uncompressed_size().max(0) as u64)
            .sum();
        let rows = batch_rows(g.num_rows().max(0) as u64, bytes);
        let mut b = ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
            .with_batch_size(rows)
            .with_row_groups(vec![group]);
        if let Some(m) = &self.mask {
            b = b.with_projection(m.clone());
        }
        b.build().map_err(|e| e.to_string())
    }

    /// Gives up the rest of the current row group.
    fn damaged(&mut self, error: String) -> Piece {
        let p = Piece::Damaged {
            first_row: self.row + 1,
            rows: self.group_end - self.row,
            group: self.group,
            error,
        };
        self.row = self.group_end;
        self.reader = None;
        self.group += 1;
        p
    }
}

impl Iterator for Rows {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        loop {
            if self.reader.is_none() {
                let groups = self.meta.metadata().num_row_groups();
                if self.group >= groups {
                    return None;
                }
                let rows = self.meta.metadata().row_group(self.group).num_rows().max(0) as u64;
                self.group_end = self.row + rows;
                if rows == 0 {
                    self.group += 1;
                    continue;
                }
                match guarded(|| self.open_group(self.group)) {
                    Ok(Ok(r)) => self.reader = Some(r),
                    Ok(Err(e)) | Err(e) => return Some(self.damaged(e)),
                }
            }
            let reader = self.reader.as_mut()?;
            match guarded(|| reader.next()) {
                Ok(Some(Ok(b))) => {
                    let n = b.num_rows() as u64;
                    if self.row + n > self.group_end {
                        return Some(self.damaged("more rows than the footer says".into()));
                    }
                    self.row += n;
                    return Some(Piece::Batch(b));
                }
                Ok(None) if self.row == self.group_end => {
                    self.reader = None;
                    self.group += 1;
                }
                Ok(None) => return Some(self.damaged("fewer rows than the footer says".into())),
                Ok(Some(Err(e))) => return Some(self.damaged(e.to_string())),
                Err(e) => return Some(self.damaged(e)),
            }
        }
    }
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
    rows: Rows,
    queue: VecDeque<RawRecord>,
}

impl ParquetRecords {
    pub(super) fn open(path: &Path, fields: &Fields) -> Result<Self> {
        Ok(ParquetRecords {
            rows: Rows::open(path, Some(fields))?,
            queue: VecDeque::new(),
        })
    }

    /// The next record of input number `input` (named `source` in generated ids), or
    /// `None` at the end.
    /// With `defer`, a decoded row is yielded as its row of the batch (the document is
    /// made by [`RawRecord::into_document`], in parallel).
    pub(super) fn next(
        &mut self,
        input: usize,
        source: &str,
        fields: &Fields,
        defer: bool,
    ) -> Option<RawRecord> {
        while self.queue.is_empty() {
            let position = |at| Position {
                input,
                at,
                file: None,
            };
            match self.rows.next()? {
                Piece::Batch(b) if defer => {
                    let first = self.rows.row - b.num_rows() as u64;
                    let columns = Arc::new(BatchColumns::of(&b, fields));
                    for (at, index) in (first + 1..).zip(0..b.num_rows()) {
                        self.queue.push_back(RawRecord {
                            position: position(at),
                            content: Content::Row(BatchRow {
                                columns: columns.clone(),
                                index,
                            }),
                        });
                    }
                }
                Piece::Batch(b) => {
                    let first = self.rows.row - b.num_rows() as u64;
                    let docs = batch_documents(&b, fields, first, Some(source));
                    for (at, doc) in (first + 1..).zip(docs) {
                        self.queue.push_back(RawRecord::parsed(position(at), doc));
                    }
                }
                Piece::Damaged {
                    first_row,
                    rows,
                    group,
                    error,
                } => {
                    for at in first_row..first_row + rows {
                        self.queue.push_back(RawRecord::parsed(
                            position(at),
                            Err(Rejection {
                                id: None,
                                reason: RejectReason::DamagedRows {
                                    group: group as u64,
                                    error: error.clone(),
                                },
                            }),
                        ));
                    }
                }
            }
        }
        self.queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::{Piece, Rows, BATCH_BYTES, BATCH_ROWS};
    use arrow::array::{Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    /// A file of one row group of `rows` rows whose `text` is `bytes` bytes each (a
    /// page per 8 rows, so that pages are not what holds the memory).
    fn file(dir: &std::path::Path, rows: usize, bytes: usize) -> std::path::PathBuf {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("text", DataType::Utf8, false),
        ]));
        let ids: StringArray = (0..rows).map(|i| Some(format!("d{i}"))).collect();
        let text: StringArray = (0..rows)
            .map(|i| Some(format!("{i:08} ").repeat(bytes / 9)))
            .collect();
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(text)]).unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows))
            .set_write_batch_size(8)
            .set_data_page_row_count_limit(8)
            .set_dictionary_enabled(false)
            .build();
        let p = dir.join(format!("{rows}x{bytes}.parquet"));
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&p).unwrap(), schema, Some(props)).unwrap();
        w.write(&b).unwrap();
        w.close().unwrap();
        p
    }

    /// Rows of 300 KB are decoded a few at a time, under `2 × BATCH_BYTES` a batch (1,024
    /// at a time, 77 MB); small rows still `BATCH_ROWS` at a time; every row once, in
    /// order.
    #[test]
    fn big_rows_are_decoded_a_few_at_a_time() {
        let t = tempfile::tempdir().unwrap();
        for (rows, bytes, want) in [(256, 300_000, 13), (3000, 90, BATCH_ROWS)] {
            let p = file(t.path(), rows, bytes);
            let mut seen = 0;
            let mut biggest = 0;
            for piece in Rows::open(&p, None).unwrap() {
                let Piece::Batch(b) = piece else {
                    panic!("a valid file")
                };
                let text = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
                for i in 0..b.num_rows() {
                    assert!(text.value(i).starts_with(&format!("{:08} ", seen + i)));
                }
                seen += b.num_rows();
                biggest = biggest.max(b.num_rows());
                if bytes > 1000 {
                    let held: usize = b.columns().iter().map(|c| c.get_buffer_memory_size()).sum();
                    assert!(held as u64 <= 2 * BATCH_BYTES, "{held} bytes");
                }
            }
            assert_eq!(seen, rows);
            assert_eq!(biggest, want, "{rows} rows of {bytes} bytes");
        }
    }
}
