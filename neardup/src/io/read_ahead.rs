//! Reading ahead on a thread of its own, so that the workers never wait for the disk or
//! the decompressor.

use crate::document::RecordBytes;

/// Runs an iterator on a background thread, in chunks of up to `chunk` items, at most
/// `depth` chunks ahead of the consumer: reading and splitting records (decompression,
/// line splitting, Parquet decoding) overlaps with the work done on them, instead of
/// alternating with it. Items come out in the same order. A panic on the reading
/// thread is resumed on the consumer's at the point where the items run out, so none
/// is lost silently.
///
/// With [`bounded`](Self::bounded), a chunk also ends once its items weigh `bytes` or
/// more, so what is read ahead is at most `depth + 2` chunks (those queued, the one the
/// consumer is taking items from, the one being filled), each under `bytes` plus one
/// item: memory is bounded by bytes, not only by a count of records that may each be
/// large.
pub struct ReadAhead<T> {
    rx: std::sync::mpsc::Receiver<Vec<T>>,
    current: std::vec::IntoIter<T>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl<T> std::fmt::Debug for ReadAhead<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead").finish_non_exhaustive()
    }
}

impl<T: Send + 'static> ReadAhead<T> {
    /// Starts reading `iter` ahead (`chunk` and `depth` are at least 1).
    pub fn new<I>(iter: I, chunk: usize, depth: usize) -> Self
    where
        I: Iterator<Item = T> + Send + 'static,
    {
        Self::start(iter, chunk, usize::MAX, depth, |_| 0)
    }

    /// Starts reading `iter` ahead in chunks of up to `chunk` items that end, too, once
    /// their items hold `bytes` ([`RecordBytes`]; `chunk`, `bytes` and `depth` are at
    /// least 1).
    pub fn bounded<I>(iter: I, chunk: usize, bytes: usize, depth: usize) -> Self
    where
        I: Iterator<Item = T> + Send + 'static,
        T: RecordBytes,
    {
        Self::start(iter, chunk, bytes, depth, T::record_bytes)
    }

    fn start<I>(iter: I, chunk: usize, bytes: usize, depth: usize, weight: fn(&T) -> usize) -> Self
    where
        I: Iterator<Item = T> + Send + 'static,
    {
        let chunk = chunk.max(1);
        let bytes = bytes.max(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<T>>(depth.max(1));
        let thread = std::thread::Builder::new()
            .name("neardup-read".into())
            .spawn(move || {
                let mut iter = iter;
                loop {
                    let mut items: Vec<T> = Vec::new();
                    let mut weighed = 0usize;
                    while items.len() < chunk && weighed < bytes {
                        let Some(item) = iter.next() else { break };
                        weighed = weighed.saturating_add(weight(&item));
                        items.push(item);
                    }
                    // A closed channel means the consumer stopped: so do we.
                    if items.is_empty() || tx.send(items).is_err() {
                        return;
                    }
                }
            })
            // Like `std::thread::spawn`: no thread is an OS failure, not an input one.
            .expect("cannot start the reading thread");
        ReadAhead {
            rx,
            current: Vec::new().into_iter(),
            thread: Some(thread),
        }
    }
}

impl<T> Iterator for ReadAhead<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(x) = self.current.next() {
                return Some(x);
            }
            match self.rx.recv() {
                Ok(items) => self.current = items.into_iter(),
                Err(_) => {
                    if let Some(t) = self.thread.take() {
                        if let Err(panic) = t.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                    return None;
                }
            }
        }
    }
}
