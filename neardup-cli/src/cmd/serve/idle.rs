//! The idle timeout: a connection is closed when a read from it waits longer than
//! `--idle-timeout` while none of its requests is being worked on (a new connection
//! that sends nothing, a kept-alive one between requests). The acceptor wraps each
//! connection's stream and its service around one count of requests in flight, so a
//! request that takes long to answer does not count as silence.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The acceptor (axum-server's `Accept`) of connections with an idle timeout.
#[derive(Clone, Copy)]
pub(crate) struct IdleTimeout(pub(crate) Duration);

impl<I, S> axum_server::accept::Accept<I, S> for IdleTimeout
where
    I: AsyncRead + AsyncWrite + Unpin,
{
    type Stream = IdleStream<I>;
    type Service = Counted<S>;
    type Future = std::future::Ready<io::Result<(Self::Stream, Self::Service)>>;

    fn accept(&self, stream: I, service: S) -> Self::Future {
        let busy = Arc::new(AtomicUsize::new(0));
        let stream = IdleStream {
            inner: stream,
            busy: busy.clone(),
            idle: self.0,
            sleep: Box::pin(tokio::time::sleep(self.0)),
            armed: false,
        };
        std::future::ready(Ok((
            stream,
            Counted {
                inner: service,
                busy,
            },
        )))
    }
}

/// A connection's stream whose reads fail with `TimedOut` after the idle time with no
/// request in flight.
pub(crate) struct IdleStream<I> {
    inner: I,
    busy: Arc<AtomicUsize>,
    idle: Duration,
    sleep: Pin<Box<Sleep>>,
    /// Whether `sleep` runs for the current wait.
    armed: bool,
}

impl<I: AsyncRead + Unpin> AsyncRead for IdleStream<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        match Pin::new(&mut me.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                me.armed = false;
                Poll::Ready(r)
            }
            Poll::Pending => {
                if me.busy.load(Ordering::Acquire) > 0 {
                    // Waiting for the next request while one is answered: not idle.
                    me.armed = false;
                    return Poll::Pending;
                }
                if !me.armed {
                    let at = Instant::now() + me.idle;
                    me.sleep.as_mut().reset(at);
                    me.armed = true;
                }
                match me.sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the connection was idle past --idle-timeout",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for IdleStream<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A connection's service that counts its requests in flight.
#[derive(Clone)]
pub(crate) struct Counted<S> {
    inner: S,
    busy: Arc<AtomicUsize>,
}

/// One request in flight, until dropped (answered, or its future dropped).
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<S, R> tower_service::Service<R> for Counted<S>
where
    S: tower_service::Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        self.busy.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight(self.busy.clone());
        let answer = self.inner.call(req);
        Box::pin(async move {
            let r = answer.await;
            drop(guard);
            r
        })
    }
}
