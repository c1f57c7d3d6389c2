//! The Prometheus metrics of `GET /metrics` (OpenMetrics text): requests by route and
//! status, their latencies as histograms, verdicts by kind, records per request, and,
//! read at each scrape, the queue's depth, the stored documents, the log's size and the
//! seconds since the log was last flushed.

use super::App;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteStatus {
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Route {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Kind {
    verdict: String,
}

type Histograms = Family<Route, Histogram, fn() -> Histogram>;

/// The server's metrics.
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RouteStatus, Counter>,
    latency: Histograms,
    verdicts: Family<Kind, Counter>,
    records: Histogram,
    queue: Gauge,
    stored: Gauge,
    log_bytes: Gauge,
    since_flush: Gauge<f64, AtomicU64>,
}

fn latency_buckets() -> Histogram {
    // 50 µs to about 13 s.
    Histogram::new(exponential_buckets(5e-5, 2.0, 19))
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut m = Metrics {
            registry: Registry::with_prefix("neardup"),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_buckets),
            verdicts: Family::default(),
            records: Histogram::new(exponential_buckets(1.0, 4.0, 9)),
            queue: Gauge::default(),
            stored: Gauge::default(),
            log_bytes: Gauge::default(),
            since_flush: Gauge::default(),
        };
        let r = &mut m.registry;
        r.register(
            "requests",
            "Requests answered, by route and status",
            m.requests.clone(),
        );
        r.register(
            "request_seconds",
            "Time from a request's head to its answer, by route",
            m.latency.clone(),
        );
        r.register("verdicts", "Verdicts answered, by kind", m.verdicts.clone());
        r.register(
            "request_records",
            "Records per batch request",
            m.records.clone(),
        );
        r.register(
            "queue_depth",
            "Requests worked on or waiting",
            m.queue.clone(),
        );
        r.register("stored_documents", "Documents stored", m.stored.clone());
        r.register("log_bytes", "Bytes of the state's log", m.log_bytes.clone());
        r.register(
            "seconds_since_flush",
            "Seconds since the log was last flushed to the disk",
            m.since_flush.clone(),
        );
        m
    }

    /// Counts a verdict of kind `kind`.
    pub(crate) fn verdict(&self, kind: &str) {
        self.verdicts
            .get_or_create(&Kind {
                verdict: kind.into(),
            })
            .inc();
    }

    /// Notes a batch of `n` records.
    pub(crate) fn batch(&self, n: usize) {
        self.records.observe(n as f64);
    }

    /// The text of a scrape.
    pub(crate) fn render(&self, app: &App) -> String {
        let d = &app.online.deduper;
        let in_use = app.queue_size - app.queue.available_permits();
        self.queue.set(in_use as i64);
        self.stored.set(d.len() as i64);
        if let Some(disk) = d.disk() {
            self.log_bytes.set(disk.log_bytes as i64);
            self.since_flush.set(disk.since_flush.as_secs_f64());
        }
        let mut out = String::new();
        // Writing into a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The middleware: counts each request and its latency under its route.
pub(crate) async fn observe(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let start = std::time::Instant::now();
    let response = next.run(req).await;
    let m = &app.metrics;
    m.latency
        .get_or_create(&Route {
            route: route.clone(),
        })
        .observe(start.elapsed().as_secs_f64());
    m.requests
        .get_or_create(&RouteStatus {
            route,
            status: response.status().as_u16(),
        })
        .inc();
    response
}
