//! The ordered parallel executor of [`Pipeline::ordered_map`](super::Pipeline): jobs
//! go to whichever worker is free, results come back in input order.

use crate::sketch::Scratch;

/// The shape of [`Pipeline::ordered_map`]'s jobs, and what they share.
pub(super) struct Jobs<'f, F> {
    /// Records per job.
    pub(super) len: usize,
    /// Jobs taken but not yet finished.
    pub(super) max: usize,
    pub(super) f: &'f F,
    pub(super) scratches: std::sync::Mutex<Vec<Scratch>>,
}

/// How many jobs' results may wait for an unfinished job before them, per job in flight:
/// a slow record (a big document) holds back the collection of the results after it,
/// not the work on the records after it.
const FINISHED_AHEAD: usize = 16;

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
        let (mut submitted, mut finished, mut consumed) = (0usize, 0usize, 0usize);
        // Results of jobs `consumed..submitted`, in order; `None` until done.
        let mut pending: std::collections::VecDeque<Option<Vec<R>>> =
            std::collections::VecDeque::new();
        let mut exhausted = false;
        loop {
            // Up to `max` jobs taken and not finished (their records' text in memory);
            // finished jobs wait for the ones before them, holding only their results,
            // up to `FINISHED_AHEAD` times as many.
            while !exhausted
                && submitted - finished < self.max
                && submitted - consumed < self.max * FINISHED_AHEAD
            {
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
            finished += 1;
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

/// The next message. On a thread of a rayon pool (where [`Pipeline::ordered_map`]
/// drives its jobs, and a caller inside `par_iter`, say) it runs the pool's pending
/// jobs while it waits instead of leaving its core idle, and blocks only when there is
/// none: then every job it waits for is running on another thread, and will send.
///
/// [`Pipeline::ordered_map`]: super::Pipeline
pub(super) fn receive<M>(rx: &std::sync::mpsc::Receiver<M>) -> M {
    use std::sync::mpsc::TryRecvError;
    loop {
        match rx.try_recv() {
            Ok(m) => return m,
            Err(TryRecvError::Empty) => {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    if let Ok(m) = rx.recv() {
                        return m;
                    }
                }
            }
            // Not reached: the caller holds a sender for as long as it receives.
            Err(TryRecvError::Disconnected) => std::thread::yield_now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::time::{Duration, Instant};

    #[test]
    fn a_slow_job_holds_back_the_collection_not_the_work() {
        // Record 0 is done only once 600 records after it are: with 64 records in
        // flight that needs the work to go on past a job that is not finished, its
        // followers' results waiting (up to 16 × 8 jobs). The driving thread is not one
        // of the pool's, so it never runs record 0 itself.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let done = AtomicUsize::new(0);
        let gave_up = AtomicBool::new(false);
        let f = |_: &mut Scratch, i: usize| {
            if i == 0 {
                let start = Instant::now();
                while done.load(SeqCst) < 600 {
                    if start.elapsed() > Duration::from_secs(30) {
                        gave_up.store(true, SeqCst);
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            } else {
                done.fetch_add(1, SeqCst);
            }
            i
        };
        let jobs = Jobs {
            len: 8,
            max: 8,
            f: &f,
            scratches: std::sync::Mutex::new(Vec::new()),
        };
        let mut records = 0..2000usize;
        let mut out = Vec::new();
        let mut consume = |v: Vec<usize>| out.extend(v);
        pool.in_place_scope_fifo(|s| jobs.drive(s, &mut records, &mut consume));
        assert!(
            !gave_up.load(SeqCst),
            "the work stopped behind the unfinished record 0"
        );
        assert_eq!(out, (0..2000).collect::<Vec<_>>(), "results in input order");
    }
}
