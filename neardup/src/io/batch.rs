//! Arrow record batches → documents: the columns named by [`Fields`] (string columns of
//! any Arrow string type, or integers for the id), with the JSONL reader's rules: the
//! text column, else the HTML column, holds the body; a null id is generated; a missing
//! body column or one of the wrong type is a rejection of every row, never a panic.
//! The Parquet reader and the Python package's Arrow input both use it.

use super::Fields;
use crate::document::{Body, Document, RejectReason, Rejection};
use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::DataType;

/// The column `name` of `batch`: a top-level column of that name, else a path through
/// struct columns (`meta.url`).
pub fn column(batch: &RecordBatch, name: &str) -> Option<arrow::array::ArrayRef> {
    if let Some(c) = batch.column_by_name(name) {
        return Some(c.clone());
    }
    let mut parts = name.split('.');
    let mut col = batch.column_by_name(parts.next()?)?.clone();
    for part in parts {
        let s = col.as_struct_opt()?;
        col = s.column_by_name(part)?.clone();
    }
    Some(col)
}

/// A column of strings (any string type; integers too when `numbers`, as ids may
/// be), or why not.
pub(crate) fn strings(
    batch: &RecordBatch,
    name: &str,
    numbers: bool,
) -> Option<std::result::Result<StringArray, RejectReason>> {
    let col = column(batch, name)?;
    let t = col.data_type();
    let string = matches!(
        t,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(_, _)
    );
    match t {
        _ if string || (numbers && t.is_integer()) => Some(
            arrow::compute::cast(&col, &DataType::Utf8)
                .map(|a| a.as_string::<i32>().clone())
                .map_err(|e| RejectReason::BadColumn {
                    column: name.to_string(),
                    error: e.to_string(),
                }),
        ),
        DataType::Null => Some(Ok(StringArray::new_null(col.len()))),
        other => Some(Err(RejectReason::BadColumn {
            column: name.to_string(),
            error: format!("{other} is not a string type"),
        })),
    }
}

fn set(dst: &mut String, src: &str) {
    dst.clear();
    dst.push_str(src);
}

/// Calls `visit` with each row of an Arrow batch as a document (one document whose
/// buffers are reused from row to row, so no allocation per row) or a rejection.
/// `first` is the number of rows before this batch; a row without an id gets
/// `SOURCE:ROW` (the row counted from 1, as the JSONL reader's `SOURCE:LINE`) when
/// `source` is given, else its ordinal `first + i`.
pub fn visit_batch(
    batch: &RecordBatch,
    f: &Fields,
    first: u64,
    source: Option<&str>,
    mut visit: impl FnMut(std::result::Result<&Document, Rejection>),
) {
    visit_rows(batch, f, first, source, |r| visit(r.map(|d| &*d)));
}

/// The documents of an Arrow batch, each built once (see [`visit_batch`] for the rules).
pub fn batch_documents(
    batch: &RecordBatch,
    f: &Fields,
    first: u64,
    source: Option<&str>,
) -> Vec<std::result::Result<Document, Rejection>> {
    let mut out = Vec::with_capacity(batch.num_rows());
    visit_rows(batch, f, first, source, |r| {
        out.push(r.map(|d| {
            // Hand the buffers over; the next row starts from empty ones.
            let body = match &mut d.body {
                Body::Text(s) => Body::Text(std::mem::take(s)),
                Body::Html(s) => Body::Html(std::mem::take(s)),
            };
            Document {
                id: std::mem::take(&mut d.id),
                url: d.url.take(),
                body,
                site: d.site.take(),
                priority: d.priority,
            }
        }))
    });
    out
}

/// The columns of a batch that make documents, resolved once per batch (string
/// columns cast, the missing and the ill-typed found); a row's document is made on
/// demand ([`BatchColumns::row_into`], [`BatchColumns::document`]), so the copying of
/// text can happen on whichever thread needs the document.
#[derive(Debug, Clone)]
pub struct BatchColumns {
    rows: usize,
    /// Why every row is rejected, when the columns cannot make documents.
    broken: Option<RejectReason>,
    ids: Option<StringArray>,
    text: Option<StringArray>,
    html: Option<StringArray>,
    url: Option<StringArray>,
    site: Option<StringArray>,
    priority: Option<arrow::array::ArrayRef>,
    text_name: String,
    html_name: String,
}

impl BatchColumns {
    /// The columns of `batch` that `f` names.
    pub fn of(batch: &RecordBatch, f: &Fields) -> Self {
        let mut out = BatchColumns {
            rows: batch.num_rows(),
            broken: None,
            ids: None,
            text: None,
            html: None,
            url: None,
            site: None,
            priority: None,
            text_name: f.text.clone(),
            html_name: f.html.clone(),
        };
        let col = |name: &str| strings(batch, name, false).transpose();
        match (
            strings(batch, &f.id, true).transpose(),
            col(&f.text),
            col(&f.html),
            col(&f.url),
            f.site.as_deref().map(col).unwrap_or(Ok(None)),
        ) {
            (Ok(i), Ok(t), Ok(h), Ok(u), Ok(s)) => {
                (out.ids, out.text, out.html, out.url, out.site) = (i, t, h, u, s)
            }
            (Err(e), ..)
            | (_, Err(e), ..)
            | (_, _, Err(e), ..)
            | (.., Err(e), _)
            | (.., Err(e)) => out.broken = Some(e),
        }
        if out.broken.is_none() && out.text.is_none() && out.html.is_none() {
            out.broken = Some(RejectReason::MissingColumn {
                text: f.text.clone(),
                html: f.html.clone(),
            });
        }
        out.priority = f.priority.as_deref().and_then(|p| {
            column(batch, p).and_then(|c| arrow::compute::cast(&c, &DataType::Float64).ok())
        });
        out
    }

    /// Rows of the batch.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Row `i` as a document, written into `doc` (whose buffers are reused); `at` is
    /// the row's number in its input from 0, which makes the id of a row without one.
    pub fn row_into(
        &self,
        i: usize,
        at: u64,
        source: Option<&str>,
        doc: &mut Document,
    ) -> std::result::Result<(), Rejection> {
        fn value(a: &Option<StringArray>, i: usize) -> Option<&str> {
            a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i))
        }
        if let Some(reason) = &self.broken {
            return Err(Rejection {
                id: None,
                reason: reason.clone(),
            });
        }
        match (value(&self.ids, i), source) {
            (Some(id), _) => set(&mut doc.id, id),
            (None, Some(src)) => doc.id = format!("{src}:{}", at + 1),
            (None, None) => doc.id = at.to_string(),
        }
        let body = std::mem::replace(&mut doc.body, Body::Text(String::new()));
        let mut buf = match body {
            Body::Text(s) | Body::Html(s) => s,
        };
        doc.body = match (value(&self.text, i), value(&self.html, i)) {
            (Some(t), _) => {
                set(&mut buf, t);
                Body::Text(buf)
            }
            (None, Some(h)) => {
                set(&mut buf, h);
                Body::Html(buf)
            }
            (None, None) => {
                doc.body = Body::Text(buf);
                return Err(Rejection {
                    id: Some(doc.id.clone()),
                    reason: RejectReason::MissingBody {
                        text: self.text_name.clone(),
                        html: self.html_name.clone(),
                    },
                });
            }
        };
        doc.url = value(&self.url, i).map(str::to_owned);
        doc.site = value(&self.site, i).map(str::to_owned);
        doc.priority = self
            .priority
            .as_ref()
            .filter(|p| p.is_valid(i))
            .map(|p| p.as_primitive::<arrow::datatypes::Float64Type>().value(i));
        Ok(())
    }

    /// The length in bytes of row `i`'s body (its text, else its HTML; 0 without).
    pub fn body_len(&self, i: usize) -> usize {
        let len = |a: &Option<StringArray>| {
            a.as_ref()
                .filter(|a| a.is_valid(i))
                .map(|a| a.value(i).len())
        };
        len(&self.text).or_else(|| len(&self.html)).unwrap_or(0)
    }

    /// Row `i` as a new document (see [`BatchColumns::row_into`]).
    pub fn document(
        &self,
        i: usize,
        at: u64,
        source: Option<&str>,
    ) -> std::result::Result<Document, Rejection> {
        let mut doc = Document::text(String::new(), String::new());
        self.row_into(i, at, source, &mut doc).map(|()| doc)
    }
}

/// [`visit_batch`] with the reused document lent mutably, so that a caller may take
/// its buffers.
fn visit_rows(
    batch: &RecordBatch,
    f: &Fields,
    first: u64,
    source: Option<&str>,
    mut visit: impl FnMut(std::result::Result<&mut Document, Rejection>),
) {
    let cols = BatchColumns::of(batch, f);
    let mut doc = Document::text(String::new(), String::new());
    for i in 0..cols.len() {
        match cols.row_into(i, first + i as u64, source, &mut doc) {
            Ok(()) => visit(Ok(&mut doc)),
            Err(rej) => visit(Err(rej)),
        }
    }
}
