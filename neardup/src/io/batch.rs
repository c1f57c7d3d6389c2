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
    let number = matches!(
        col.data_type(),
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    );
    if number && !numbers {
        return Some(Err(RejectReason::BadColumn {
            column: name.to_string(),
            error: format!("{} is not a string type", col.data_type()),
        }));
    }
    match col.data_type() {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Dictionary(_, _) => Some(
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
    let n = batch.num_rows();
    let col = |name: &str| strings(batch, name, false).transpose();
    let (ids, text, html, url, site) = match (
        strings(batch, &f.id, true).transpose(),
        col(&f.text),
        col(&f.html),
        col(&f.url),
        f.site.as_deref().map(col).unwrap_or(Ok(None)),
    ) {
        (Ok(i), Ok(t), Ok(h), Ok(u), Ok(s)) => (i, t, h, u, s),
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), ..) | (.., Err(e), _) | (.., Err(e)) => {
            for _ in 0..n {
                visit(Err(Rejection {
                    id: None,
                    reason: e.clone(),
                }));
            }
            return;
        }
    };
    if text.is_none() && html.is_none() {
        let reason = RejectReason::MissingColumn {
            text: f.text.clone(),
            html: f.html.clone(),
        };
        for _ in 0..n {
            visit(Err(Rejection {
                id: None,
                reason: reason.clone(),
            }));
        }
        return;
    }
    let priority = f.priority.as_deref().and_then(|p| {
        column(batch, p).and_then(|c| arrow::compute::cast(&c, &DataType::Float64).ok())
    });
    fn value(a: &Option<StringArray>, i: usize) -> Option<&str> {
        a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i))
    }
    let mut doc = Document::text(String::new(), String::new());
    for i in 0..n {
        let at = first + i as u64;
        match (value(&ids, i), source) {
            (Some(id), _) => set(&mut doc.id, id),
            (None, Some(src)) => doc.id = format!("{src}:{}", at + 1),
            (None, None) => doc.id = at.to_string(),
        }
        let body = std::mem::replace(&mut doc.body, Body::Text(String::new()));
        let mut buf = match body {
            Body::Text(s) | Body::Html(s) => s,
        };
        doc.body = match (value(&text, i), value(&html, i)) {
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
                visit(Err(Rejection {
                    id: Some(doc.id.clone()),
                    reason: RejectReason::MissingBody {
                        text: f.text.clone(),
                        html: f.html.clone(),
                    },
                }));
                continue;
            }
        };
        doc.url = value(&url, i).map(str::to_owned);
        doc.site = value(&site, i).map(str::to_owned);
        doc.priority = priority
            .as_ref()
            .filter(|p| p.is_valid(i))
            .map(|p| p.as_primitive::<arrow::datatypes::Float64Type>().value(i));
        visit(Ok(&doc));
    }
}
