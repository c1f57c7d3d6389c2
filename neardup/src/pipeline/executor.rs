//! The ordered parallel executor of [`Pipeline::ordered_map`](super::Pipeline): jobs
//! go to whichever worker is free, results come back in input order.

use crate::sketch::Scratch;

/// The shape of [`Pipeline::ordered_map`]'s jobs, and what they share.
pub(super) struct Jobs<'f, F> {
    /// Records per job.
    pub(super) len: usize,
    /// Jobs taken but not yet consumed.
    pub(super) max: usize,
    pub(super) f: &'f F,
    pub(super) scratches: std::sync::Mutex<Vec<Scratch>>,
}

impl<'f, F> Jobs<'f, F> {
    pub(super) fn drive<'s, T, R, I, C>(
        &'s self,
        s: &rayon::ScopeFifo<'s>,
        records: &mut I,
        consume: &mut C,
    ) where
        'f: 's,
        T: Send + 's,
        R: Send + 's,
        I: Iterator<Item = T>,
        F: Fn(&mut Scratch, T) -> R + Sync,
        C: FnMut(Vec<R>),
    {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, std::thread::Result<Vec<R>>)>();
        let (mut submitted, mut consumed) = (0usize, 0usize);
        // Results of jobs `consumed..submitted`, in order; `None` until done.
        let mut pending: std::collections::VecDeque<Option<Vec<R>>> =
            std::collections::VecDeque::new();
        let mut exhausted = false;
        loop {
            while !exhausted && submitted - consumed < self.max {
                let job: Vec<T> = records.by_ref().take(self.len).collect();
                if job.is_empty() {
                    exhausted = true;
                    break;
                }
                let tx = tx.clone();
                let index = submitted;
                s.spawn_fifo(move |_| {
                    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let mut scratch = self
                            .scratches
                            .lock()
                            .map(|mut v| v.pop().unwrap_or_default())
                            .unwrap_or_default();
                        let out: Vec<R> =
                            job.into_iter().map(|t| (self.f)(&mut scratch, t)).collect();
                        if let Ok(mut v) = self.scratches.lock() {
                            v.push(scratch);
                        }
                        out
                    }));
                    // The receiver lives until every job has reported.
                    let _ = tx.send((index, out));
                });
                submitted += 1;
                pending.push_back(None);
            }
            if consumed == submitted {
                return;
            }
            let (index, out) = receive(&rx);
            match out {
                Ok(out) => pending[index - consumed] = Some(out),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            while let Some(Some(_)) = pending.front() {
                if let Some(Some(out)) = pending.pop_front() {
                    consume(out);
                    consumed += 1;
                }
            }
        }
    }
}

/// The next message; on a thread of a rayon pool (a caller inside `par_iter`, say) it
/// keeps running the pool's other work while it waits instead of blocking a worker.
pub(super) fn receive<M>(rx: &std::sync::mpsc::Receiver<M>) -> M {
    use std::sync::mpsc::TryRecvError;
    if rayon::current_thread_index().is_none() {
        if let Ok(m) = rx.recv() {
            return m;
        }
    }
    loop {
        match rx.try_recv() {
            Ok(m) => return m,
            Err(TryRecvError::Empty) => {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
            // Not reached: the caller holds a sender for as long as it receives.
            Err(TryRecvError::Disconnected) => std::thread::yield_now(),
        }
    }
}
