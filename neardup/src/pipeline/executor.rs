//! The ordered parallel executor of [`Pipeline::ordered_map`](super::Pipeline): every
//! worker takes its next job from the input itself, and whichever worker finishes the
//! job at the front hands the finished results on, in input order.
//!
//! No thread hands out the jobs. When one did (a driving loop on one of the workers,
//! which ran jobs while it waited), the others ran dry whenever it was busy in a job of
//! its own that outlasted the jobs queued for them, and slept until it came back: on
//! the Rust documentation corpus, one of two workers waited 30–100 µs every few tenths
//! of a millisecond, about 50 ms of a 0.35 s first pass.

use crate::document::RecordBytes;
use crate::sketch::Scratch;
use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, MutexGuard};

/// The shape of [`Pipeline::ordered_map`](super::Pipeline)'s jobs.
pub(super) struct Jobs<'f, F> {
    /// Records per job, at most.
    pub(super) len: usize,
    /// A job ends, too, once its records hold this many bytes
    /// ([`RecordBytes`](crate::document::RecordBytes)): a job holds less than this plus
    /// one record.
    pub(super) bytes: usize,
    /// Jobs taken but not yet finished.
    pub(super) max: usize,
    pub(super) f: &'f F,
}

/// How many jobs' results may wait for an unfinished job before them, per job in flight:
/// a slow record (a big document) holds back the collection of the results after it,
/// not the work on the records after it.
const FINISHED_AHEAD: usize = 16;

/// The input side, under one lock: records are taken in order, and a job's index is
/// its place in that order.
struct Input<I> {
    records: I,
    taken: usize,
    exhausted: bool,
}

/// The output side, under another: the results of jobs `popped..`, `None` until done.
struct Output<R> {
    pending: VecDeque<Option<Vec<R>>>,
    /// Jobs whose results have left `pending` for the consumer.
    popped: usize,
    /// A worker is handing results on (outside this lock): the others only file theirs.
    consuming: bool,
}

/// What the workers share.
struct Shared<I, R, C> {
    input: Mutex<Input<I>>,
    /// Signalled (under `input`) when a job finishes or the work stops.
    room: Condvar,
    /// Workers waiting on `room`.
    waiting: AtomicUsize,
    output: Mutex<Output<R>>,
    /// Taken only by the worker that set `consuming`.
    consume: Mutex<C>,
    finished: AtomicUsize,
    consumed: AtomicUsize,
    /// Set by the first panic: the workers stop.
    stop: AtomicBool,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// A lock that a panic elsewhere does not make unusable (the panic is re-raised once
/// every worker has stopped).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<I, R, C> Shared<I, R, C> {
    /// Wakes the workers waiting for room, if any. A waiter counts itself before it
    /// looks for room (both under `input`), and the counters change before this looks
    /// at the count, so no wake-up is lost.
    fn wake(&self) {
        if self.waiting.load(SeqCst) > 0 {
            let _input = lock(&self.input);
            self.room.notify_all();
        }
    }

    fn stop(&self) {
        self.stop.store(true, SeqCst);
        let _input = lock(&self.input);
        self.room.notify_all();
    }
}

impl<'f, F> Jobs<'f, F> {
    /// Maps the records through `f` on the workers that `spawn` starts (it runs the
    /// worker it is given on each thread and returns when all have returned), handing
    /// the results to `consume` in input order. A panic in `f`, in the iterator or in
    /// `consume` stops the workers and is re-raised here.
    pub(super) fn run<T, R, I, C>(
        &self,
        spawn: impl FnOnce(&(dyn Fn() + Sync)),
        records: I,
        consume: C,
    ) where
        T: RecordBytes,
        R: Send,
        I: Iterator<Item = T> + Send,
        F: Fn(&mut Scratch, T) -> R + Sync,
        C: FnMut(Vec<R>) + Send,
    {
        let shared = Shared {
            input: Mutex::new(Input {
                records,
                taken: 0,
                exhausted: false,
            }),
            room: Condvar::new(),
            waiting: AtomicUsize::new(0),
            output: Mutex::new(Output {
                pending: VecDeque::new(),
                popped: 0,
                consuming: false,
            }),
            consume: Mutex::new(consume),
            finished: AtomicUsize::new(0),
            consumed: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            panic: Mutex::new(None),
        };
        let worker = || {
            let work =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.work(&shared)));
            if let Err(p) = work {
                lock(&shared.panic).get_or_insert(p);
                shared.stop();
            }
        };
        spawn(&worker);
        let panic = lock(&shared.panic).take();
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    }

    /// The next job and its index, when there is room for one (waiting until there is);
    /// `None` when the input is exhausted or the run stopped.
    fn take_job<T, R, I, C>(&self, shared: &Shared<I, R, C>) -> Option<(usize, Vec<T>)>
    where
        T: RecordBytes,
        I: Iterator<Item = T>,
        F: Fn(&mut Scratch, T) -> R,
        C: FnMut(Vec<R>),
    {
        let window = self.max * FINISHED_AHEAD;
        // Up to `max` jobs taken and not finished (their records' text in memory, under
        // `bytes` plus a record each);
        // finished jobs wait for the ones before them, holding only their results, up
        // to `FINISHED_AHEAD` times as many.
        let room = |taken: usize| {
            taken - shared.finished.load(SeqCst) < self.max
                && taken - shared.consumed.load(SeqCst) < window
        };
        let mut input = lock(&shared.input);
        loop {
            if input.exhausted || shared.stop.load(SeqCst) {
                return None;
            }
            if room(input.taken) {
                break;
            }
            shared.waiting.fetch_add(1, SeqCst);
            if !room(input.taken) {
                input = shared.room.wait(input).unwrap_or_else(|e| e.into_inner());
            }
            shared.waiting.fetch_sub(1, SeqCst);
        }
        let mut job: Vec<T> = Vec::new();
        let mut bytes = 0usize;
        while job.len() < self.len && bytes < self.bytes {
            let Some(record) = input.records.next() else {
                break;
            };
            bytes = bytes.saturating_add(record.record_bytes());
            job.push(record);
        }
        if job.is_empty() {
            input.exhausted = true;
            shared.room.notify_all();
            return None;
        }
        input.taken += 1;
        Some((input.taken - 1, job))
    }

    /// One worker: takes a job, maps it, files its results (handing on those now at
    /// the front), until the input ends.
    fn work<T, R, I, C>(&self, shared: &Shared<I, R, C>)
    where
        T: RecordBytes,
        I: Iterator<Item = T>,
        F: Fn(&mut Scratch, T) -> R,
        C: FnMut(Vec<R>),
    {
        let mut scratch = Scratch::default();
        loop {
            let Some((index, job)) = self.take_job(shared) else {
                return;
            };
            let out: Vec<R> = job.into_iter().map(|t| (self.f)(&mut scratch, t)).collect();
            let mut output = lock(&shared.output);
            if shared.stop.load(SeqCst) {
                return;
            }
            // `popped` changes only under this lock, and never passes a job that is
            // not filed.
            let at = index - output.popped;
            if output.pending.len() <= at {
                output.pending.resize_with(at + 1, || None);
            }
            output.pending[at] = Some(out);
            shared.finished.fetch_add(1, SeqCst);
            // Hands on the results now at the front, outside the lock (consuming
            // thousands of results behind a slow job takes a while), until none is;
            // when another worker is at it, that one takes these too when it comes back.
            if !output.consuming {
                output.consuming = true;
                loop {
                    let mut ready = Vec::new();
                    while let Some(Some(_)) = output.pending.front() {
                        ready.extend(output.pending.pop_front().flatten());
                    }
                    if ready.is_empty() {
                        output.consuming = false;
                        break;
                    }
                    output.popped += ready.len();
                    drop(output);
                    let mut consume = lock(&shared.consume);
                    for out in ready {
                        consume(out);
                        shared.consumed.fetch_add(1, SeqCst);
                    }
                    drop(consume);
                    shared.wake();
                    output = lock(&shared.output);
                }
            }
            drop(output);
            shared.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Runs `jobs` on `threads` workers of a pool of their own.
    fn run_on<T, R>(
        threads: usize,
        jobs: &Jobs<'_, impl Fn(&mut Scratch, T) -> R + Sync>,
        records: impl Iterator<Item = T> + Send,
        consume: impl FnMut(Vec<R>) + Send,
    ) where
        T: RecordBytes,
        R: Send,
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let spawn = |worker: &(dyn Fn() + Sync)| {
            pool.scope(|s| {
                for _ in 0..threads {
                    s.spawn(|_| worker());
                }
            })
        };
        jobs.run(spawn, records, consume);
    }

    #[test]
    fn a_slow_job_holds_back_the_collection_not_the_work() {
        // Record 0 is done only once 600 records after it are: with 64 records in
        // flight that needs the other worker to go on past a job that is not finished,
        // taking jobs itself, its results waiting (up to 16 × 8 jobs). (With one of the
        // workers handing out the jobs, the other ran dry whenever the first was the
        // one held up.)
        for _ in 0..4 {
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
                bytes: usize::MAX,
                max: 8,
                f: &f,
            };
            let mut out = Vec::new();
            run_on(2, &jobs, 0..2000usize, |v| out.extend(v));
            assert!(
                !gave_up.load(SeqCst),
                "the work stopped behind the unfinished record 0"
            );
            assert_eq!(out, (0..2000).collect::<Vec<_>>(), "results in input order");
        }
    }

    #[test]
    fn results_in_input_order_within_the_bounds_whatever_the_timing() {
        // Records of uneven cost on 1, 2, 3 and 8 workers: every result once, in input
        // order; never more than `max` jobs' records taken and not mapped, never more
        // than the window of jobs taken and not handed on.
        for threads in [1, 2, 3, 8] {
            let (len, max) = (4usize, 3usize);
            // Records taken from the input and not yet mapped.
            let in_flight = AtomicUsize::new(0);
            let most = AtomicUsize::new(0);
            let f = |_: &mut Scratch, i: u64| {
                // Uneven work: a few records take much longer, some sleep (so that on
                // few cores, too, workers hold jobs at once).
                if i.is_multiple_of(40) {
                    std::thread::sleep(Duration::from_micros(300));
                }
                let spin = if i.is_multiple_of(97) {
                    200_000
                } else {
                    (i * 7919) % 3000
                };
                let mut x = i;
                for _ in 0..spin {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                std::hint::black_box(x);
                in_flight.fetch_sub(1, SeqCst);
                i * 3
            };
            let jobs = Jobs {
                len,
                bytes: usize::MAX,
                max,
                f: &f,
            };
            let taken = AtomicUsize::new(0);
            let handed = AtomicUsize::new(0);
            let lag = AtomicUsize::new(0);
            let records = (0..5000u64).inspect(|_| {
                let now = in_flight.fetch_add(1, SeqCst) + 1;
                most.fetch_max(now, SeqCst);
                let t = taken.fetch_add(1, SeqCst) + 1;
                lag.fetch_max(t.saturating_sub(handed.load(SeqCst)), SeqCst);
            });
            let mut out = Vec::new();
            run_on(threads, &jobs, records, |v: Vec<u64>| {
                handed.fetch_add(v.len(), SeqCst);
                out.extend(v);
            });
            assert_eq!(
                out,
                (0..5000u64).map(|i| i * 3).collect::<Vec<_>>(),
                "{threads} threads"
            );
            assert!(
                most.load(SeqCst) <= threads.min(max) * len,
                "{threads} threads: {} records taken and not mapped",
                most.load(SeqCst)
            );
            assert!(
                lag.load(SeqCst) <= max * FINISHED_AHEAD * len,
                "{threads} threads: {} records taken ahead of those handed on",
                lag.load(SeqCst)
            );
        }
    }

    // The plain numbers of the tests above weigh nothing: jobs by count alone.
    impl RecordBytes for u32 {
        fn record_bytes(&self) -> usize {
            0
        }
    }
    impl RecordBytes for u64 {
        fn record_bytes(&self) -> usize {
            0
        }
    }
    impl RecordBytes for usize {
        fn record_bytes(&self) -> usize {
            0
        }
    }

    /// A record numbered `.0` that holds `.1` bytes.
    struct Weighing(u64, usize);
    impl RecordBytes for Weighing {
        fn record_bytes(&self) -> usize {
            self.1
        }
    }

    #[test]
    fn jobs_end_at_their_bytes_so_big_records_are_not_taken_by_the_dozen() {
        // Every 10th record holds 1,000 bytes, the others 10; jobs of up to 64 records
        // or 1,500 bytes. The bytes taken and not yet mapped never pass one job per
        // worker, each under 1,500 plus a record (by count alone, a job of 64 would
        // hold about 6,600). Every result once, in order.
        for threads in [1, 2, 4] {
            let in_flight = AtomicUsize::new(0);
            let most = AtomicUsize::new(0);
            let size = |i: u64| if i.is_multiple_of(10) { 1000 } else { 10 };
            let f = |_: &mut Scratch, r: Weighing| {
                if r.0.is_multiple_of(7) {
                    std::thread::sleep(Duration::from_micros(50));
                }
                in_flight.fetch_sub(r.1, SeqCst);
                r.0
            };
            let (max, bytes) = (8usize, 1500usize);
            let jobs = Jobs {
                len: 64,
                bytes,
                max,
                f: &f,
            };
            let records = (0..3000u64).map(|i| {
                let now = in_flight.fetch_add(size(i), SeqCst) + size(i);
                most.fetch_max(now, SeqCst);
                Weighing(i, size(i))
            });
            let mut out = Vec::new();
            run_on(threads, &jobs, records, |v: Vec<u64>| out.extend(v));
            assert_eq!(out, (0..3000u64).collect::<Vec<_>>(), "{threads} threads");
            assert!(
                most.load(SeqCst) < threads.min(max) * (bytes + 1000),
                "{threads} threads: {} bytes taken and not mapped",
                most.load(SeqCst)
            );
        }
    }

    #[test]
    fn a_panic_stops_every_worker_and_reaches_the_caller() {
        // A panic in the mapping, in the iterator and in the consumer: re-raised by
        // `run` with its message, the other workers stopped (none left waiting for
        // room behind the job that never finishes). Run on a thread of its own, so
        // that a worker left waiting fails the test instead of hanging it.
        for (threads, at) in [(1, 0u32), (2, 0), (2, 1), (2, 2), (4, 0), (4, 2)] {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let f = |_: &mut Scratch, i: u32| {
                    if at == 0 && i == 3 {
                        panic!("mapping record 3");
                    }
                    i
                };
                let jobs = Jobs {
                    len: 2,
                    bytes: usize::MAX,
                    max: 2,
                    f: &f,
                };
                let records = (0..100_000u32).inspect(|&i| {
                    if at == 1 && i == 500 {
                        panic!("reading record 500");
                    }
                });
                let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_on(threads, &jobs, records, |v: Vec<u32>| {
                        if at == 2 && v.contains(&700) {
                            panic!("consuming record 700");
                        }
                    })
                }));
                let msg = got
                    .err()
                    .map(|p| p.downcast_ref::<&str>().copied().unwrap_or("?"));
                let _ = tx.send(msg);
            });
            let msg = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{threads} threads, case {at}: run did not return"));
            let want = [
                "mapping record 3",
                "reading record 500",
                "consuming record 700",
            ];
            assert_eq!(msg, Some(want[at as usize]), "{threads} threads");
        }
    }
}
