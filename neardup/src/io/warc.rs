//! WARC records: each `response` record's HTTP payload as an HTML document.

use super::jsonl::read_line_capped;
use crate::document::{Body, Document, RejectReason, Rejection};
use std::io::{BufRead, Read};

/// The longest line of a WARC header (its newline included); a longer one makes the
/// input malformed, so that a file without line ends is not read whole into a line.
const MAX_HEADER_LINE: usize = 1 << 20;

/// Reads WARC records from bytes (uncompressed): a document for each `response`
/// record, a rejection for each one that cannot be used (a record block longer than
/// [`super::DEFAULT_MAX_RECORD_BYTES`] is rejected as too large); reading stops with a
/// rejection at the first malformed or cut record.
pub fn parse_warc(data: &[u8]) -> Vec<std::result::Result<Document, Rejection>> {
    let mut r: std::io::BufReader<&[u8]> = std::io::BufReader::new(data);
    let mut offset = 0u64;
    let mut out = Vec::new();
    let max = super::DEFAULT_MAX_RECORD_BYTES as u64;
    loop {
        let at = offset;
        match read_warc_record(&mut r, &mut offset, max) {
            Ok(None) => return out,
            Ok(Some(rec)) if rec.rtype.eq_ignore_ascii_case("response") => {
                out.push(warc_document(rec, at, "warc", max));
            }
            Ok(Some(_)) => {}
            Err(error) => {
                out.push(Err(Rejection {
                    id: None,
                    reason: RejectReason::MalformedWarc { error },
                }));
                return out;
            }
        }
    }
}

/// The document of a `response` record read with the block cap `max`.
pub(super) fn warc_document(
    rec: WarcRecord,
    at: u64,
    source: &str,
    max: u64,
) -> std::result::Result<Document, Rejection> {
    let id = rec.id.clone();
    let body = match rec.body {
        Ok(body) => body,
        Err(bytes) => {
            return Err(Rejection {
                id,
                reason: RejectReason::RecordTooLarge { bytes, max },
            })
        }
    };
    match http_payload(&body).and_then(|p| {
        String::from_utf8(p.to_vec()).map_err(|_| "invalid UTF-8 in payload".to_string())
    }) {
        Ok(html) => Ok(Document {
            id: id.unwrap_or_else(|| format!("{source}@{at}")),
            url: rec.uri,
            body: Body::Html(html),
            site: None,
            priority: None,
        }),
        Err(error) => Err(Rejection {
            id,
            reason: RejectReason::MalformedWarc { error },
        }),
    }
}

pub(super) struct WarcRecord {
    pub(super) rtype: String,
    pub(super) id: Option<String>,
    pub(super) uri: Option<String>,
    /// The record's block, or its length when that was past the cap (the block was
    /// read through, not held).
    pub(super) body: Result<Vec<u8>, u64>,
}

/// One header line into `line` (cleared first); its length with the newline, 0 at the
/// end of the input.
fn header_line(r: &mut (dyn BufRead + Send), line: &mut Vec<u8>) -> Result<usize, String> {
    line.clear();
    match read_line_capped(r, line, MAX_HEADER_LINE) {
        Ok((_, true)) => Err(format!(
            "a WARC header line longer than {MAX_HEADER_LINE} bytes"
        )),
        Ok((n, false)) => Ok(n),
        Err(e) => Err(format!("unreadable: {e}")),
    }
}

/// Reads one WARC record, its block only when it is at most `max` bytes long (a longer
/// one is read through without being held); `Ok(None)` at a clean end of input,
/// `Err(reason)` when the input is malformed or cut.
pub(super) fn read_warc_record(
    r: &mut (dyn BufRead + Send),
    offset: &mut u64,
    max: u64,
) -> std::result::Result<Option<WarcRecord>, String> {
    let mut line = Vec::new();
    // Skip blank lines between records.
    loop {
        let n = header_line(r, &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        *offset += n as u64;
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    if !line.starts_with(b"WARC/") {
        return Err(format!(
            "expected a WARC version line, found {:?}",
            String::from_utf8_lossy(&line[..line.len().min(40)])
        ));
    }
    let (mut rtype, mut id, mut uri, mut len) = (String::new(), None, None, None);
    loop {
        let n = header_line(r, &mut line)?;
        if n == 0 {
            return Err("input ends inside a WARC header".into());
        }
        *offset += n as u64;
        let l = String::from_utf8_lossy(&line);
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim();
            match k.trim().to_ascii_lowercase().as_str() {
                "warc-type" => rtype = v.to_string(),
                "warc-record-id" => id = Some(v.trim_matches(['<', '>']).to_string()),
                "warc-target-uri" => uri = Some(v.trim_matches(['<', '>']).to_string()),
                "content-length" => len = v.parse::<u64>().ok(),
                _ => {}
            }
        }
    }
    let len = len.ok_or("WARC record without a valid Content-Length")?;
    if len > max {
        let got = std::io::copy(&mut r.take(len), &mut std::io::sink())
            .map_err(|e| format!("unreadable body: {e}"))?;
        *offset += got;
        if got < len {
            return Err(format!(
                "input ends inside a WARC record body ({got} of {len} bytes)"
            ));
        }
        return Ok(Some(WarcRecord {
            rtype,
            id,
            uri,
            body: Err(len),
        }));
    }
    let mut body = Vec::with_capacity(len.min(1 << 24) as usize);
    let got = r
        .take(len)
        .read_to_end(&mut body)
        .map_err(|e| format!("unreadable body: {e}"))?;
    *offset += got as u64;
    if (got as u64) < len {
        return Err(format!(
            "input ends inside a WARC record body ({got} of {len} bytes)"
        ));
    }
    Ok(Some(WarcRecord {
        rtype,
        id,
        uri,
        body: Ok(body),
    }))
}

/// The payload of an HTTP response (after the header block), or the whole body when it
/// does not start with an HTTP status line.
pub(super) fn http_payload(body: &[u8]) -> std::result::Result<&[u8], String> {
    if !body.starts_with(b"HTTP/") {
        return Ok(body);
    }
    if let Some(p) = memchr::memmem::find(body, b"\r\n\r\n") {
        return Ok(&body[p + 4..]);
    }
    if let Some(p) = memchr::memmem::find(body, b"\n\n") {
        return Ok(&body[p + 2..]);
    }
    Err("HTTP response without the end of its headers".into())
}
