//! The log's writer: entries appended with plain positional writes, and flushed to the
//! disk by group commit.
//!
//! An append is one `pwrite` at the content's end: when it returns, the entry is in the
//! operating system's page cache, which a killed process leaves behind; a full disk or
//! an I/O error is an error of that call (a shared writable mapping of the log, as an
//! earlier version used, turns both into a `SIGBUS`). A write that fails half-way is cut
//! off again, so the file never ends in part of an entry this process reported as failed.
//!
//! **Group commit** ([`Syncer`]): a caller that needs its entry on the disk asks for the
//! content up to its entry's end to be flushed, after letting go of the deduper's lock.
//! If a flush is already under way, it waits for it and, when that flush did not cover
//! its entry, one more; otherwise it flushes (`fdatasync`) everything written so far
//! itself. So concurrent inserters share flushes: with 8 threads under
//! `SyncPolicy::Always`, one flush covers the entries of every thread that wrote while
//! the previous one ran.
//!
//! **Time-bounded flushes** (`SyncPolicy::Every { millis }`): a thread of the syncer's
//! own flushes what was written and not flushed once it is `millis` old, whether or not
//! more entries come; it ends when the log is closed. A log closed cleanly (dropped) is
//! flushed, under every policy.
//!
//! A failed flush is final ([`Syncer::failed`]): after `fdatasync` fails, which pages
//! reached the disk is unknown (the system may have dropped the dirty pages and marked
//! them clean, so a second `fdatasync` would succeed and prove nothing). Every waiter gets
//! the error, and the file is cut back to what was flushed before, when nothing past it
//! was acknowledged (the `Always` policy), so that a reopened state holds exactly the
//! acknowledged entries.

use super::fault::{self, Op};
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// See the module docs.
pub(super) struct Appender {
    path: PathBuf,
    file: Arc<File>,
    /// Bytes of content.
    len: u64,
    syncer: Arc<Syncer>,
    /// The thread of time-bounded flushes, if any.
    flusher: Option<std::thread::JoinHandle<()>>,
}

/// Flushes a log's content to the disk, shared by the threads that wait for it (module
/// docs).
pub(super) struct Syncer {
    path: PathBuf,
    file: Arc<File>,
    /// Bytes of content written (whole entries).
    written: AtomicU64,
    /// Whether nothing past the flushed content is acknowledged before it is flushed
    /// (then a failed flush cuts the file back to the flushed content).
    cut_on_failure: bool,
    state: Mutex<SyncState>,
    cond: Condvar,
}

struct SyncState {
    /// Bytes of content on the disk.
    synced: u64,
    /// A flush is under way.
    syncing: bool,
    /// Why a flush failed (final).
    failed: Option<String>,
    /// When the last flush ended.
    last: Instant,
    /// The log is closed: the flusher thread ends.
    closed: bool,
}

/// An entry (or a verdict naming entries) waiting to be on the disk: the content up to
/// `end` of one log.
pub(crate) struct Ticket {
    syncer: Arc<Syncer>,
    end: u64,
}

impl Ticket {
    /// Waits until the content up to the ticket's end is on the disk (flushing it if no
    /// one else is).
    pub(crate) fn wait(self) -> Result<()> {
        self.syncer.sync_to(self.end)
    }

    /// Whether waiting for `self` waits for `other` too: the same log, at least as far.
    pub(crate) fn covers(&self, other: &Ticket) -> bool {
        Arc::ptr_eq(&self.syncer, &other.syncer) && self.end >= other.end
    }
}

impl Syncer {
    fn lock(&self) -> MutexGuard<'_, SyncState> {
        // The state is a few numbers, each written whole: a panic elsewhere cannot
        // leave it half-changed.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The content up to `end` on the disk: waits for a flush under way, or makes one
    /// of everything written so far.
    pub(super) fn sync_to(&self, end: u64) -> Result<()> {
        let mut st = self.lock();
        loop {
            if let Some(why) = &st.failed {
                return Err(Error::io(
                    &self.path,
                    std::io::Error::other(format!("an earlier flush of the log failed: {why}")),
                ));
            }
            if st.synced >= end {
                return Ok(());
            }
            if st.syncing {
                st = self.cond.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            st.syncing = true;
            let target = self.written.load(Ordering::Acquire);
            drop(st);
            let r = fault::check(&self.path, Op::Sync).and_then(|()| self.file.sync_data());
            st = self.lock();
            st.syncing = false;
            match r {
                Ok(()) => {
                    st.synced = st.synced.max(target);
                    st.last = Instant::now();
                }
                Err(e) => {
                    st.failed = Some(e.to_string());
                    if self.cut_on_failure {
                        // Nothing past `synced` was acknowledged: cut it off, so that
                        // a reopened state holds exactly what was (best effort: the
                        // error is already reported).
                        let _ = fault::check(&self.path, Op::Write)
                            .and_then(|()| self.file.set_len(st.synced));
                    }
                    self.cond.notify_all();
                    return Err(Error::io(&self.path, e));
                }
            }
            self.cond.notify_all();
        }
    }

    /// Everything written so far is durable by other means (a compaction's snapshot):
    /// waiters return.
    pub(super) fn all_durable(&self) {
        let mut st = self.lock();
        st.synced = st.synced.max(self.written.load(Ordering::Acquire));
        self.cond.notify_all();
    }

    /// Why a flush failed, if one did.
    pub(super) fn failed(&self) -> Option<String> {
        self.lock().failed.clone()
    }

    /// Time since the last flush ended.
    pub(super) fn since_last(&self) -> Duration {
        self.lock().last.elapsed()
    }

    /// The flusher thread: every `every`, flushes what is written and not yet flushed
    /// once the last flush is that old; ends when the log is closed.
    fn flush_when_idle(self: Arc<Self>, every: Duration) {
        let mut st = self.lock();
        loop {
            if st.closed || st.failed.is_some() {
                return;
            }
            let age = st.last.elapsed();
            let pending = self.written.load(Ordering::Acquire) > st.synced;
            if pending && age >= every && !st.syncing {
                drop(st);
                // An error is recorded in the state (final) and met by the next writer.
                let _ = self.sync_to(self.written.load(Ordering::Acquire));
                st = self.lock();
                continue;
            }
            let wait = if pending {
                every.saturating_sub(age)
            } else {
                every
            };
            st = self
                .cond
                .wait_timeout(st, wait.max(Duration::from_millis(1)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Appender {
    /// Opens `path` to append after its content, which is the whole file. `cut_on_failure`:
    /// nothing is acknowledged before it is flushed (see [`Syncer`]); `idle_flush`: flush
    /// what was written once it is this old, even when no more comes.
    pub(super) fn open(
        path: &Path,
        cut_on_failure: bool,
        idle_flush: Option<Duration>,
    ) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let file = Arc::new(file);
        let syncer = Arc::new(Syncer {
            path: path.to_path_buf(),
            file: file.clone(),
            written: AtomicU64::new(len),
            cut_on_failure,
            state: Mutex::new(SyncState {
                synced: len,
                syncing: false,
                failed: None,
                last: Instant::now(),
                closed: false,
            }),
            cond: Condvar::new(),
        });
        let flusher = match idle_flush {
            Some(every) => {
                let s = syncer.clone();
                Some(
                    std::thread::Builder::new()
                        .name("neardup-log-flush".into())
                        .spawn(move || s.flush_when_idle(every))
                        .map_err(io)?,
                )
            }
            None => None,
        };
        Ok(Appender {
            path: path.to_path_buf(),
            file,
            len,
            syncer,
            flusher,
        })
    }

    /// Appends `bytes` (in the page cache when this returns: a killed process keeps
    /// them) and returns the content's new end. A failed write leaves the file as it
    /// was.
    pub(super) fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let io = |e| Error::io(&self.path, e);
        fault::check(&self.path, Op::Write).map_err(io)?;
        if fault::half_write() {
            // The kill point inside a write: half the entry reaches the file.
            let _ = self.file.write_all_at(&bytes[..bytes.len() / 2], self.len);
            std::process::abort();
        }
        if let Err(e) = self.file.write_all_at(bytes, self.len) {
            // Part of the entry may be in the file: cut it off (best effort; the state
            // refuses writes from now on, and opening drops a torn tail anyway).
            let _ = self.file.set_len(self.len);
            return Err(io(e));
        }
        self.len += bytes.len() as u64;
        self.syncer.written.store(self.len, Ordering::Release);
        Ok(self.len)
    }

    /// A ticket for the content written so far.
    pub(super) fn ticket(&self) -> Ticket {
        self.ticket_to(self.len)
    }

    /// A ticket for the content up to `end`.
    pub(super) fn ticket_to(&self, end: u64) -> Ticket {
        Ticket {
            syncer: self.syncer.clone(),
            end,
        }
    }

    /// The syncer of this log.
    pub(super) fn syncer(&self) -> &Arc<Syncer> {
        &self.syncer
    }

    /// Bytes of content.
    pub(super) fn len(&self) -> u64 {
        self.len
    }
}

impl Drop for Appender {
    fn drop(&mut self) {
        // A clean close leaves the content on the disk, whatever the policy.
        if self.syncer.failed().is_none() {
            let _ = self.syncer.sync_to(self.len);
        }
        self.syncer.lock().closed = true;
        self.syncer.cond.notify_all();
        if let Some(t) = self.flusher.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Appender;
    use std::time::Duration;

    #[test]
    fn appends_follow_the_content_and_a_reopen_appends_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"head").unwrap();
        let mut want = b"head".to_vec();
        {
            let mut a = Appender::open(&path, true, None).unwrap();
            for i in 0..20_000u32 {
                let entry = vec![(i % 251) as u8 + 1; (i % 97) as usize + 1];
                let end = a.append(&entry).unwrap();
                want.extend_from_slice(&entry);
                assert_eq!(end, want.len() as u64);
            }
            assert_eq!(a.len(), want.len() as u64);
            a.ticket().wait().unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), want);
        }
        {
            let mut a = Appender::open(&path, true, None).unwrap();
            a.append(b"tail").unwrap();
        }
        want.extend_from_slice(b"tail");
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }

    /// Eight threads waiting for their entries share flushes: fewer flushes than
    /// entries, every ticket answered.
    #[test]
    fn waiters_share_flushes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"").unwrap();
        super::fault::watch(dir.path());
        let a = std::sync::Mutex::new(Appender::open(&path, true, None).unwrap());
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let a = &a;
                s.spawn(move || {
                    for _ in 0..200 {
                        let ticket = {
                            let mut a = a.lock().unwrap();
                            let end = a.append(&[t + 1; 100]).unwrap();
                            a.ticket_to(end)
                        };
                        ticket.wait().unwrap();
                    }
                });
            }
        });
        let syncs = super::fault::count(dir.path(), super::fault::Op::Sync);
        assert!((1..=1600).contains(&syncs), "{syncs} flushes");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1600 * 100);
        super::fault::clear(dir.path());
    }

    /// With a time bound, what was written is flushed though nothing more comes.
    #[test]
    fn an_idle_log_is_flushed_within_its_time_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"").unwrap();
        super::fault::watch(dir.path());
        let mut a = Appender::open(&path, false, Some(Duration::from_millis(20))).unwrap();
        a.append(b"entry").unwrap();
        let start = std::time::Instant::now();
        while super::fault::count(dir.path(), super::fault::Op::Sync) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "an idle log was never flushed"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(a);
        super::fault::clear(dir.path());
    }
}
