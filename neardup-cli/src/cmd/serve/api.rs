//! The routes (described for clients in `docs/openapi.yaml`):
//!
//! - `POST /v1/check`, `/v1/insert`, `/v1/check-and-insert`: a batch of records, a JSON
//!   array (`Content-Type: application/json`) or JSON lines
//!   (`application/x-ndjson`), in the record shape the CLI reads; the answer is one
//!   verdict per record in order, the line `neardup stream` writes for it, as a JSON
//!   array or as JSON lines (as the request came). A record that is not JSON fails the
//!   whole request (400, naming the record) before anything is stored; a record that is
//!   JSON but not a document (no text, too large) gets a `rejected` verdict.
//! - `DELETE /v1/docs/{id}`: 200 when it was stored, 404 when not.
//! - `GET /v1/stats`, `GET /healthz` (open without a token), `GET /metrics`.
//!
//! Limits: a body over `--max-body-bytes` 413, one slower than `--body-timeout` 408,
//! more records than `--max-records` 413,
//! another type of body 415, past `--queue` 503 with `Retry-After: 1`; a state whose
//! log failed answers 500 to changes and 503 to `/healthz` until it is reopened.

use super::{auth, metrics, App};
use crate::cmd::stream::VerdictLine;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use neardup::io::{parse_json_record, JsonlLine, JsonlLines};
use neardup::{Document, RejectReason, Verdict};
use serde_json::value::RawValue;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The routes over `app`.
pub(crate) fn router(app: Arc<App>) -> Router {
    let guarded = Router::new()
        .route("/v1/check", post(check))
        .route("/v1/insert", post(insert))
        .route("/v1/check-and-insert", post(check_and_insert))
        .route("/v1/docs/{id}", delete(remove))
        .route("/v1/stats", get(stats))
        .route("/metrics", get(scrape))
        .route_layer(axum::middleware::from_fn_with_state(
            app.clone(),
            auth::require_token,
        ));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(guarded)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            metrics::observe,
        ))
        .with_state(app)
}

/// An answer that is not a verdict: a status and a JSON `{"error": ...}`.
fn problem(status: StatusCode, message: impl Into<String>) -> Response {
    let body = axum::Json(serde_json::json!({ "error": message.into() }));
    (status, body).into_response()
}

/// What a batch request does with its records.
#[derive(Clone, Copy)]
enum Op {
    Check,
    Insert,
    CheckAndInsert,
}

/// How a batch's body is written, and its answer.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Array,
    Lines,
}

async fn check(state: State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    batch(state, headers, body, Op::Check).await
}

async fn insert(state: State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    batch(state, headers, body, Op::Insert).await
}

async fn check_and_insert(state: State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    batch(state, headers, body, Op::CheckAndInsert).await
}

/// A permit of the queue, or the 503 that answers when it is full.
fn enter(app: &App) -> Result<tokio::sync::OwnedSemaphorePermit, Response> {
    app.queue.clone().try_acquire_owned().map_err(|_| {
        let mut r = problem(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server is working on {} requests, its --queue; try again",
                app.queue_size
            ),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r
    })
}

/// The body's shape from its `Content-Type`, or 415.
fn shape(headers: &HeaderMap) -> Result<Shape, Response> {
    let given = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = given.split(';').next().unwrap_or("").trim();
    match essence.to_ascii_lowercase().as_str() {
        "application/json" => Ok(Shape::Array),
        "application/x-ndjson" | "application/jsonl" => Ok(Shape::Lines),
        _ => Err(problem(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "Content-Type {given:?}: send application/json (an array of records) or \
                 application/x-ndjson (one record per line)"
            ),
        )),
    }
}

/// The body, at most `max` bytes within `within`, or 413 (408 past the time, 400 when
/// it could not be read).
async fn read_body(body: Body, max: usize, within: std::time::Duration) -> Result<Bytes, Response> {
    let read = tokio::time::timeout(within, axum::body::to_bytes(body, max));
    let Ok(read) = read.await else {
        let msg = format!(
            "the body did not arrive within --body-timeout ({} s)",
            within.as_secs()
        );
        return Err(problem(StatusCode::REQUEST_TIMEOUT, msg));
    };
    read.map_err(|e| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(s) = source {
            if s.is::<http_body_util::LengthLimitError>() {
                return problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body is over --max-body-bytes ({max} bytes)"),
                );
            }
            source = s.source();
        }
        problem(StatusCode::BAD_REQUEST, format!("reading the body: {e}"))
    })
}

/// One record of a batch, read: a document to ask about, or its id and rejection.
enum Slot {
    Doc(usize),
    Rejected(Option<String>, Verdict),
}

/// A batch's documents and, in order, each record's slot.
struct Batch {
    docs: Vec<Document>,
    slots: Vec<Slot>,
}

impl Batch {
    /// Adds a record of bytes `raw` (numbered `at` in a rejection); the parser's message
    /// when it is not JSON (or not UTF-8), which fails the request.
    fn push(&mut self, app: &App, raw: &[u8], at: u64) -> Result<(), String> {
        let online = &app.online;
        if raw.len() > online.cap {
            self.reject(None, too_large(raw.len() as u64, online.cap));
            return Ok(());
        }
        match parse_json_record(raw, &online.fields, "request", at) {
            Ok(doc) => {
                self.slots.push(Slot::Doc(self.docs.len()));
                self.docs.push(doc);
            }
            Err(rej) => match rej.reason {
                r @ (RejectReason::MalformedJson { .. } | RejectReason::InvalidUtf8 { .. }) => {
                    return Err(r.to_string())
                }
                reason => self.reject(rej.id, reason),
            },
        }
        Ok(())
    }

    fn reject(&mut self, id: Option<String>, reason: RejectReason) {
        self.slots
            .push(Slot::Rejected(id, Verdict::Rejected { reason }));
    }
}

fn too_large(bytes: u64, cap: usize) -> RejectReason {
    RejectReason::RecordTooLarge {
        bytes,
        max: cap as u64,
    }
}

fn too_many(app: &App) -> Response {
    problem(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("more records than --max-records ({})", app.max_records),
    )
}

/// The 400 of record `index` (on line `at` of JSON lines) that is not JSON, or not UTF-8.
fn bad_record(index: usize, at: Option<u64>, error: String) -> Response {
    let line = at.map_or(String::new(), |at| format!(" (line {at})"));
    let msg = format!("record {index}{line}: {error}");
    problem(StatusCode::BAD_REQUEST, msg)
}

/// The records of a body, or the 400 or 413 that answers it.
fn parse(app: &App, bytes: &Bytes, shape: Shape) -> Result<Batch, Response> {
    let mut batch = Batch {
        docs: Vec::new(),
        slots: Vec::new(),
    };
    match shape {
        Shape::Array => {
            let records = parse_array(bytes).map_err(|e| problem(StatusCode::BAD_REQUEST, e))?;
            if records.len() > app.max_records {
                return Err(too_many(app));
            }
            for (i, raw) in records.iter().enumerate() {
                batch
                    .push(app, raw.get().as_bytes(), i as u64 + 1)
                    .map_err(|e| bad_record(i, None, e))?;
            }
        }
        Shape::Lines => {
            // The lines as `stream` reads them: a line over the record cap is rejected
            // without being parsed.
            let read = Box::new(std::io::Cursor::new(bytes.clone()));
            let mut lines = JsonlLines::from_read(read, app.online.cap);
            let mut index = 0usize;
            while let Some(line) = lines.next() {
                if index == app.max_records {
                    return Err(too_many(app));
                }
                match line {
                    JsonlLine::Record { at, bytes } => batch
                        .push(app, bytes, at)
                        .map_err(|e| bad_record(index, Some(at), e))?,
                    JsonlLine::TooLarge { bytes, .. } => {
                        batch.reject(None, too_large(bytes, app.online.cap))
                    }
                    JsonlLine::Unreadable { at, error } => {
                        return Err(bad_record(index, Some(at), error))
                    }
                }
                index += 1;
            }
        }
    }
    Ok(batch)
}

/// The elements of a JSON array, each kept as its text; an error names the index of
/// the element that does not parse.
fn parse_array(bytes: &[u8]) -> Result<Vec<&RawValue>, String> {
    struct Elements;
    impl<'de> serde::de::Visitor<'de> for Elements {
        type Value = Vec<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON array of records")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            loop {
                match seq.next_element::<&'de RawValue>() {
                    Ok(Some(v)) => out.push(v),
                    Ok(None) => return Ok(out),
                    Err(e) => {
                        return Err(serde::de::Error::custom(format!(
                            "record {} is not JSON: {e}",
                            out.len()
                        )))
                    }
                }
            }
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let out = serde::Deserializer::deserialize_seq(&mut de, Elements).map_err(|e| e.to_string())?;
    de.end().map_err(|e| format!("after the array: {e}"))?;
    Ok(out)
}

/// A batch request: read, parse, ask the deduper on a blocking thread, answer.
async fn batch(State(app): State<Arc<App>>, headers: HeaderMap, body: Body, op: Op) -> Response {
    let shape = match shape(&headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let permit = match enter(&app) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let bytes = match read_body(body, app.max_body, app.body_timeout).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let worker = app.clone();
    let done = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let batch = parse(&worker, &bytes, shape)?;
        let verdicts = ask(&worker, &batch.docs, op)?;
        Ok::<_, Response>(answer(&worker, batch, verdicts, shape))
    })
    .await;
    match done {
        Ok(Ok(r)) | Ok(Err(r)) => r,
        Err(e) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the work failed: {e}"),
        ),
    }
}

/// The deduper's verdicts on `docs`, every one of them, or the 500 of a failed state;
/// compacts when `--compact-every` documents were stored since the last compaction.
fn ask(app: &App, docs: &[Document], op: Op) -> Result<Vec<Verdict>, Response> {
    let d = &app.online.deduper;
    let got = match op {
        Op::Check => d.check_many(docs),
        Op::Insert => d.insert_many(docs),
        Op::CheckAndInsert => d.check_and_insert_many(docs),
    };
    let mut verdicts = Vec::with_capacity(docs.len());
    for v in got {
        verdicts.push(v.map_err(|e| refused(e, verdicts.len()))?);
    }
    if verdicts.len() != docs.len() {
        let e = neardup::Error::Failed("a batch ended early".into());
        return Err(refused(e, verdicts.len()));
    }
    let stored = verdicts.iter().filter(|v| **v == Verdict::New).count() as u64;
    if !matches!(op, Op::Check) && app.compact_every > 0 && stored > 0 {
        let before = app.changes.fetch_add(stored, Ordering::AcqRel);
        if before + stored >= app.compact_every {
            app.changes.store(0, Ordering::Release);
            d.compact().map_err(|e| refused(e, docs.len()))?;
        }
    }
    Ok(verdicts)
}

/// The answer to a batch whose document `at` (of those that are documents) failed:
/// 500 for a failed state (the log could not be written; nothing more is stored until
/// it is reopened), 503 with `Retry-After` when memory was refused (the deduper goes
/// on), 507 when the deduper is full. The documents before it were applied.
fn refused(e: neardup::Error, at: usize) -> Response {
    let before = format!("the {at} documents before it in the request were applied");
    match e {
        neardup::Error::Failed(_) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "the state failed; nothing more is stored until it is reopened: {e} ({before})"
            ),
        ),
        neardup::Error::OutOfMemory(_) => {
            let mut r = problem(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("memory refused, nothing of document {at} stored: {e} ({before})"),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
        neardup::Error::Config(_) => problem(
            StatusCode::INSUFFICIENT_STORAGE,
            format!("document {at} could not be stored: {e} ({before})"),
        ),
        e => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("document {at}: {e} ({before})"),
        ),
    }
}

/// The answer: each record's verdict line, in order, in the request's shape.
fn answer(app: &App, batch: Batch, verdicts: Vec<Verdict>, shape: Shape) -> Response {
    app.metrics.batch(batch.slots.len());
    let mut lines = Vec::with_capacity(batch.slots.len());
    for slot in &batch.slots {
        let line = match slot {
            Slot::Doc(i) => VerdictLine::new(Some(batch.docs[*i].id.as_str()), &verdicts[*i]),
            Slot::Rejected(id, v) => VerdictLine::new(id.as_deref(), v),
        };
        app.metrics.verdict(line.verdict);
        lines.push(line);
    }
    let (body, kind) = match shape {
        Shape::Array => (serde_json::to_vec(&lines), "application/json"),
        Shape::Lines => {
            let mut out = Vec::new();
            for l in &lines {
                if let Err(e) = serde_json::to_writer(&mut out, l) {
                    return problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
                }
                out.push(b'\n');
            }
            (Ok(out), "application/x-ndjson")
        }
    };
    match body {
        Ok(b) => ([(header::CONTENT_TYPE, kind)], b).into_response(),
        Err(e) => problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// `DELETE /v1/docs/{id}`.
async fn remove(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    let permit = match enter(&app) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let worker = app.clone();
    let id2 = id.clone();
    let done = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        worker.online.deduper.remove(&id2)
    })
    .await;
    match done {
        Ok(Ok(removed)) => {
            let status = if removed {
                StatusCode::OK
            } else {
                StatusCode::NOT_FOUND
            };
            (
                status,
                axum::Json(serde_json::json!({ "id": id, "removed": removed })),
            )
                .into_response()
        }
        Ok(Err(e)) => problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(e) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the work failed: {e}"),
        ),
    }
}

/// `GET /v1/stats`.
async fn stats(State(app): State<Arc<App>>) -> Response {
    let d = &app.online.deduper;
    let disk = d.disk();
    axum::Json(serde_json::json!({
        "stored": d.len(),
        "memory_bytes": d.memory_bytes(),
        "generation": disk.as_ref().map(|s| s.generation),
        "log_bytes": disk.as_ref().map(|s| s.log_bytes),
        "snapshot_bytes": disk.as_ref().map(|s| s.snapshot_bytes),
        "seconds_since_flush": disk.as_ref().map(|s| s.since_flush.as_secs_f64()),
        "queue": { "size": app.queue_size, "in_use": app.queue_size - app.queue.available_permits() },
        "failure": d.failure(),
    }))
    .into_response()
}

/// `GET /healthz`: 200 while the state takes changes, 503 once it failed.
async fn healthz(State(app): State<Arc<App>>) -> Response {
    match app.online.deduper.failure() {
        None => (StatusCode::OK, "ok\n").into_response(),
        Some(why) => problem(StatusCode::SERVICE_UNAVAILABLE, why),
    }
}

/// `GET /metrics`.
async fn scrape(State(app): State<Arc<App>>) -> Response {
    let text = app.metrics.render(&app);
    let kind = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, kind)], text).into_response()
}
