//! `neardup serve`: the online deduper as an HTTP service that many clients share (a
//! crawler fleet's workers, an indexing job's tasks). One process holds the state
//! directory; requests carry batches of records and get `stream`'s verdict line for
//! each. The routes and their answers are in `api`, bearer tokens in `auth`, the
//! Prometheus metrics in `metrics`; this module parses the flags, refuses an exposed
//! listen without tokens, and runs the server until SIGTERM or SIGINT, after which the
//! work already accepted is finished and synced before the state's lock is let go.

mod api;
mod auth;
mod idle;
mod metrics;

use super::stream::OnlineArgs;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct ServeArgs {
    /// The state directory (a snapshot and a log, as `stream --state`); made when
    /// absent. One process holds it at a time.
    #[arg(long)]
    pub state: PathBuf,
    /// The address to listen on (port 0: any free port, said on standard error). An
    /// address other than a loopback one needs `--token-file`.
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
    /// A file of bearer tokens, one per line (blank lines and lines that start with `#`
    /// skipped): every request but `GET /healthz` must carry `Authorization: Bearer T`
    /// with one of them, or is answered 401.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain (PEM); needs `--tls-key`.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of `--tls-cert`.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The largest request body in bytes; a larger one is answered 413.
    #[arg(long, default_value_t = 16 << 20)]
    pub max_body_bytes: usize,
    /// The most records one request may carry; more is answered 413.
    #[arg(long, default_value_t = 10_000)]
    pub max_records: usize,
    /// Requests worked on or waiting at once (bodies held in memory: at most this many
    /// times `--max-body-bytes`); one more is answered 503 with `Retry-After`.
    #[arg(long, default_value_t = 128)]
    pub queue: usize,
    /// Seconds a connection has, once a request's head began, to send all of it.
    #[arg(long, default_value_t = 30)]
    pub header_timeout: u64,
    /// Seconds a connection may stay silent while none of its requests is worked on (a
    /// new connection's first request, the next one on a kept-alive connection) before
    /// it is closed.
    #[arg(long, default_value_t = 60)]
    pub idle_timeout: u64,
    /// Seconds a request's body has to arrive, once its head did; after that, 408.
    #[arg(long, default_value_t = 60)]
    pub body_timeout: u64,
    /// Seconds the requests in flight get to be answered on SIGTERM or SIGINT before
    /// their connections are closed (their work is finished and synced either way).
    #[arg(long, default_value_t = 30)]
    pub grace: u64,
    #[command(flatten)]
    pub online: OnlineArgs,
}

/// What the handlers share.
pub(crate) struct App {
    online: super::stream::Online,
    /// Permits for requests worked on or waiting.
    queue: Arc<tokio::sync::Semaphore>,
    queue_size: usize,
    max_body: usize,
    body_timeout: Duration,
    max_records: usize,
    compact_every: u64,
    /// Documents stored since the last compaction.
    changes: std::sync::atomic::AtomicU64,
    tokens: Option<auth::Tokens>,
    metrics: metrics::Metrics,
}

pub fn serve(mut args: ServeArgs) -> Result<()> {
    if args.queue == 0 || args.queue > u32::MAX as usize >> 3 {
        bail!("--queue {}: give 1 to {}", args.queue, u32::MAX >> 3);
    }
    if args.max_records == 0 {
        bail!("--max-records 0: a request must be able to carry a record");
    }
    let tokens = match &args.token_file {
        Some(path) => Some(auth::Tokens::read(path)?),
        None => None,
    };
    if !args.listen.ip().is_loopback() && tokens.is_none() {
        bail!(
            "--listen {}: not a loopback address, so anyone who reaches it could read and \
             change the stored documents; give --token-file FILE (bearer tokens) to listen there",
            args.listen
        );
    }
    let online = args.online.open(Some(&args.state), "neardup serve")?;
    let listener = std::net::TcpListener::bind(args.listen)
        .with_context(|| format!("listening on {}", args.listen))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let app = Arc::new(App {
        online,
        queue: Arc::new(tokio::sync::Semaphore::new(args.queue)),
        queue_size: args.queue,
        max_body: args.max_body_bytes,
        body_timeout: Duration::from_secs(args.body_timeout.max(1)),
        max_records: args.max_records,
        compact_every: args.online.compact_every,
        changes: Default::default(),
        tokens,
        metrics: metrics::Metrics::new(),
    });
    let scheme = if args.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    eprintln!(
        "neardup serve: listening on {scheme}://{addr} (state {}, {} stored, sync {:?}); {}",
        args.state.display(),
        app.online.deduper.len(),
        args.online.sync,
        match &app.tokens {
            Some(t) => format!(
                "requests need one of the {} bearer tokens of --token-file",
                t.len()
            ),
            None => "no token needed: anyone who can reach this loopback address gets in".into(),
        }
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(app, listener, &args))
}

/// Serves until a signal, then waits for the accepted work and syncs.
async fn run(app: Arc<App>, listener: std::net::TcpListener, args: &ServeArgs) -> Result<()> {
    let handle = axum_server::Handle::new();
    tokio::spawn(stop_on_signal(
        handle.clone(),
        Duration::from_secs(args.grace),
    ));
    let router = api::router(app.clone()).into_make_service();
    let header_timeout = Duration::from_secs(args.header_timeout.max(1));
    let idle = idle::IdleTimeout(Duration::from_secs(args.idle_timeout.max(1)));
    match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            // ring's provider: classical key exchange (X25519, P-256, P-384), no
            // post-quantum hybrid, which would need aws-lc-rs's C build.
            #[allow(deprecated)]
            let _ = rustls::crypto::ring::default_provider().install_default();
            let tls = axum_server::tls_rustls::RustlsConfig::from_pem_file(cert, key)
                .await
                .with_context(|| format!("reading {} and {}", cert.display(), key.display()))?;
            let acceptor = axum_server::tls_rustls::RustlsAcceptor::new(tls).acceptor(idle);
            let mut server = axum_server::from_tcp(listener)?
                .acceptor(acceptor)
                .handle(handle);
            head_timeout(server.http_builder(), header_timeout);
            server.serve(router).await?;
        }
        _ => {
            let mut server = axum_server::from_tcp(listener)?
                .acceptor(idle)
                .handle(handle);
            head_timeout(server.http_builder(), header_timeout);
            server.serve(router).await?;
        }
    }
    // Every request's work holds a permit until it is done, answered or not.
    let all = app.queue_size as u32;
    let _all = app.queue.acquire_many(all).await?;
    let done = app.clone();
    tokio::task::spawn_blocking(move || done.online.deduper.sync()).await??;
    eprintln!(
        "neardup serve: stopped; {} stored, synced",
        app.online.deduper.len()
    );
    Ok(())
}

/// Gives a connection `within` to send a whole request head once it began.
fn head_timeout(
    builder: &mut hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>,
    within: Duration,
) {
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(within);
}

/// On SIGTERM or SIGINT: stop accepting, and give the requests in flight `grace`.
async fn stop_on_signal(handle: axum_server::Handle<SocketAddr>, grace: Duration) {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!("neardup serve: stopping: finishing the accepted requests");
    handle.graceful_shutdown(Some(grace));
}
