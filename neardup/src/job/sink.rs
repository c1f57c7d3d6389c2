//! Where records go: the kept records (`-o`, `--output-dir`) and the annotated records
//! (`--annotate`), written atomically in the input's format — JSONL lines unchanged,
//! Parquet batches with the input's schema — and compressed as the output's name says
//! (`.gz`, `.zst`, `.bz2`, `.xz`). A name ending in `.parquet` (before any compression
//! suffix) is a Parquet output; Parquet rows written to a JSONL output become JSON
//! objects (one per row); JSONL records cannot go to a Parquet output.

use crate::error::{Error, Result};
use crate::io::{Compression, Encoder};
use crate::persist::AtomicFile;
use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Rows per row group of a Parquet output (the writer buffers one row group).
pub const ROW_GROUP_ROWS: usize = 8192;

/// One output file of records.
pub enum Sink {
    /// JSON lines.
    Lines {
        /// The output's name, for messages.
        name: String,
        /// The (compressing) writer.
        w: Box<Encoder<AtomicFile>>,
    },
    /// Parquet; the writer is made by the first batch (whose schema it takes).
    Parquet {
        /// The output's name, for messages.
        name: String,
        /// The file, until the writer takes it.
        file: Option<Box<AtomicFile>>,
        /// The writer, and the schema it writes.
        w: Option<Box<(ArrowWriter<AtomicFile>, arrow::datatypes::SchemaRef)>>,
    },
}

impl Sink {
    /// Starts writing `path` (`-`: standard output, JSON lines uncompressed); creates its
    /// directory when needed. A gzip or Zstandard output is compressed on `threads`
    /// threads (the same bytes for any number: [`Encoder::with_threads`]).
    pub fn create(path: &Path, threads: usize) -> Result<Sink> {
        let name = path.display().to_string();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let file = AtomicFile::create(path)?;
        let compression = if name == "-" {
            Compression::None
        } else {
            Compression::by_name(&name)
        };
        let stem = crate::io::shards::stem(&name);
        if stem.ends_with(".parquet") {
            if compression != Compression::None {
                return Err(Error::output(
                    name,
                    "a Parquet output compresses its pages itself; drop the compression suffix",
                ));
            }
            return Ok(Sink::Parquet {
                name,
                file: Some(Box::new(file)),
                w: None,
            });
        }
        Ok(Sink::Lines {
            w: Box::new(
                Encoder::with_threads(compression, file, threads)
                    .map_err(|e| Error::io(&name, e))?,
            ),
            name,
        })
    }

    /// Writes one JSONL record (its bytes, without newline).
    pub fn line(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            Sink::Lines { w, name } => {
                w.write_all(bytes).map_err(|e| Error::io(&*name, e))?;
                w.write_all(b"\n").map_err(|e| Error::io(&*name, e))?;
                Ok(())
            }
            Sink::Parquet { name, .. } => Err(Error::output(
                &*name,
                "JSONL, WARC and directory records cannot be written as Parquet; \
                 write them to a .jsonl output",
            )),
        }
    }

    /// Writes the rows of a batch (a Parquet input's).
    pub fn batch(&mut self, b: &RecordBatch) -> Result<()> {
        match self {
            Sink::Lines { w, name } => {
                if b.num_rows() == 0 {
                    return Ok(());
                }
                let mut jw = arrow::json::LineDelimitedWriter::new(&mut **w);
                jw.write(b).map_err(|e| Error::output(&*name, e))?;
                jw.finish().map_err(|e| Error::output(&*name, e))?;
                Ok(())
            }
            Sink::Parquet { name, file, w } => {
                if w.is_none() {
                    // Row groups of ROW_GROUP_ROWS: the writer holds one in memory.
                    let props = WriterProperties::builder()
                        .set_compression(ParquetCompression::ZSTD(ZstdLevel::default()))
                        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                        .build();
                    let f = file
                        .take()
                        .expect("a Parquet sink holds its file until the writer takes it");
                    *w = Some(Box::new((
                        ArrowWriter::try_new(*f, b.schema(), Some(props))
                            .map_err(|e| Error::output(&*name, e))?,
                        b.schema(),
                    )));
                }
                let (writer, schema) = &mut **w.as_mut().expect("set above");
                if *schema != b.schema() {
                    return Err(Error::output(
                        &*name,
                        format!(
                            "the Parquet inputs' schemas differ ({} against {}); write each \
                             input to its own file with --output-dir",
                            b.schema(),
                            schema
                        ),
                    ));
                }
                writer.write(b).map_err(|e| Error::output(&*name, e))?;
                Ok(())
            }
        }
    }

    /// Finishes the file and puts it in place.
    pub fn commit(self) -> Result<()> {
        match self {
            Sink::Lines { w, name } => {
                let f = w.finish().map_err(|e| Error::output(&*name, e))?;
                f.commit()?;
            }
            Sink::Parquet { name, file, w } => {
                let f = match (w, file) {
                    (Some(w), _) => w.0.into_inner().map_err(|e| Error::output(&*name, e))?,
                    // No Parquet input was written here: an empty file is no Parquet file.
                    (None, Some(_)) => {
                        return Err(Error::output(
                            name,
                            "no Parquet records to write (the inputs are not Parquet)",
                        ))
                    }
                    (None, None) => unreachable!("a Parquet sink has its file or its writer"),
                };
                f.commit()?;
            }
        }
        Ok(())
    }
}

/// What `--annotate` adds to a record: its fate, the id it duplicates, its cluster (the
/// representative's id) and why it was rejected.
#[derive(Clone, Copy)]
pub struct Note<'a> {
    /// `kept`, `exact`, `near` or `rejected`.
    pub fate: &'static str,
    /// The id of the record it duplicates (exact: the first copy; near: the cluster's
    /// representative).
    pub of: Option<&'a str>,
    /// The representative's id of its cluster, when it is in one.
    pub cluster: Option<&'a str>,
    /// Why it was rejected.
    pub reason: Option<&'a str>,
}

/// The annotation fields' names, in the order they are added.
pub const NOTE_FIELDS: [&str; 4] = [
    "neardup_fate",
    "neardup_of",
    "neardup_cluster",
    "neardup_reason",
];

impl Note<'_> {
    fn values(&self) -> [Option<&str>; 4] {
        [Some(self.fate), self.of, self.cluster, self.reason]
    }

    /// The fields as JSON members (`"neardup_fate":"kept",…`), without braces.
    fn members(&self) -> String {
        let mut out = String::new();
        for (i, (k, v)) in NOTE_FIELDS.iter().zip(self.values()).enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(k).expect("a string serializes"));
            out.push(':');
            out.push_str(&serde_json::to_string(&v).expect("a string serializes"));
        }
        out
    }

    /// A JSONL record's line with the fields added at the end of its object, the rest of
    /// the line byte for byte; `None` when the line is not a JSON object (a rejected
    /// record: see [`Note::standalone`]). Only a rejected record's line is parsed again
    /// to tell: any other parsed as an object in the first pass.
    pub fn annotate_line(&self, raw: &[u8]) -> Option<Vec<u8>> {
        let end = raw.iter().rposition(|c| !c.is_ascii_whitespace())?;
        let start = raw.iter().position(|c| !c.is_ascii_whitespace())?;
        if raw[start] != b'{' || raw[end] != b'}' {
            return None;
        }
        if self.fate == "rejected" {
            serde_json::from_slice::<serde::de::IgnoredAny>(raw).ok()?;
        }
        let empty = raw[start + 1..end].iter().all(u8::is_ascii_whitespace);
        let mut out = Vec::with_capacity(raw.len() + 96);
        out.extend_from_slice(&raw[..end]);
        if !empty {
            out.push(b',');
        }
        out.extend_from_slice(self.members().as_bytes());
        out.extend_from_slice(&raw[end..]);
        Some(out)
    }

    /// A record that has no JSON object of its own to annotate (a malformed line, an
    /// unreadable input): the fields plus where it was read.
    pub fn standalone(&self, input: &str, position: u64) -> Vec<u8> {
        format!(
            "{{{},\"neardup_input\":{},\"neardup_position\":{position}}}",
            self.members(),
            serde_json::to_string(input).expect("a string serializes")
        )
        .into_bytes()
    }

    /// A JSON object (a WARC or directory record's `{id, url, text|html}`) with the
    /// fields added.
    pub fn annotate_object(&self, mut v: serde_json::Value) -> Vec<u8> {
        if let Some(m) = v.as_object_mut() {
            for (k, x) in NOTE_FIELDS.iter().zip(self.values()) {
                m.insert((*k).to_string(), serde_json::json!(x));
            }
        }
        serde_json::to_vec(&v).expect("a JSON value serializes")
    }
}

/// A Parquet batch with the annotation columns added (nullable strings, one note per
/// row).
pub fn annotate_batch(b: &RecordBatch, notes: &[Note<'_>]) -> Result<RecordBatch> {
    let mut fields: Vec<Arc<Field>> = b.schema().fields().iter().cloned().collect();
    let mut cols: Vec<ArrayRef> = b.columns().to_vec();
    for (k, name) in NOTE_FIELDS.iter().enumerate() {
        fields.push(Arc::new(Field::new(*name, DataType::Utf8, true)));
        let values: StringArray = notes.iter().map(|n| n.values()[k]).collect();
        cols.push(Arc::new(values));
    }
    let schema = Schema::new_with_metadata(fields, b.schema().metadata().clone());
    RecordBatch::try_new(Arc::new(schema), cols).map_err(|e| Error::output("annotate", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_annotated_in_place() {
        let n = Note {
            fate: "near",
            of: Some("a"),
            cluster: Some("a"),
            reason: None,
        };
        let got = n.annotate_line(br#"{"id": "b", "text": "x y"}"#).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            r#"{"id": "b", "text": "x y","neardup_fate":"near","neardup_of":"a","neardup_cluster":"a","neardup_reason":null}"#
        );
        let got = n.annotate_line(b"{ }").unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            r#"{ "neardup_fate":"near","neardup_of":"a","neardup_cluster":"a","neardup_reason":null}"#
        );
        assert!(n.annotate_line(b"[1]").is_none());
        let rejected = Note {
            fate: "rejected",
            of: None,
            cluster: None,
            reason: Some("malformed JSON"),
        };
        assert!(rejected.annotate_line(b"{not json}").is_none());
        assert!(rejected
            .annotate_line(br#"{"id": "e", "text": ""}"#)
            .is_some());
        let v: serde_json::Value = serde_json::from_slice(&n.standalone("in.jsonl", 7)).unwrap();
        assert_eq!(v["neardup_position"], 7);
        assert_eq!(v["neardup_fate"], "near");
    }
}
