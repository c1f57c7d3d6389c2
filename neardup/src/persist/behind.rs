//! A buffered file writer whose full buffers are written by a thread of its own, so that
//! copying them into the page cache (and starting their write-back) overlaps with the
//! work that produces the next buffer. [`AtomicFile`](super::AtomicFile) writes the files
//! it replaces through it.
//!
//! * Bytes are gathered in a buffer of [`BUFFER`] bytes. A file that never fills one is
//!   written on [`Behind::finish`] by the caller's thread, and no thread is started.
//! * A full buffer goes to the writing thread; at most two are in its hands, so the
//!   memory stays at three buffers and a slow disk slows the producer down instead of
//!   queueing without bound.
//! * On Linux the thread starts the write-back of every [`WRITE_BEHIND`] bytes
//!   (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`, which does not wait), so the sync
//!   at commit waits for the last stretch only.
//! * A write error ends the thread; the next [`write`](std::io::Write::write),
//!   [`flush`](std::io::Write::flush) or [`Behind::finish`] returns it.
//! * [`flush`](std::io::Write::flush) returns once every byte handed over is in the file.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes per buffer.
pub const BUFFER: usize = 1 << 20;

/// Bytes of a file between two starts of its write-back (Linux; see the module docs).
pub const WRITE_BEHIND: u64 = 8 << 20;

/// The writing thread: buffers go to it, emptied buffers (or the error that stopped it)
/// come back.
struct Worker {
    tx: SyncSender<Vec<u8>>,
    back: Receiver<std::io::Result<Vec<u8>>>,
    handle: JoinHandle<File>,
    /// Buffers sent and not yet come back.
    out: usize,
}

/// A file written by a thread of its own (see the module docs).
pub struct Behind {
    buf: Vec<u8>,
    /// The file, until the thread takes it.
    file: Option<File>,
    worker: Option<Worker>,
    /// Emptied buffers for reuse.
    spare: Vec<Vec<u8>>,
    /// Bytes the file holds (written by this thread, before any worker started).
    in_file: u64,
    /// The error that stopped the worker, kept for every later call.
    failed: Option<std::io::ErrorKind>,
}

impl Behind {
    /// Writes `file` from its current position.
    pub fn new(file: File) -> Self {
        Behind {
            buf: Vec::with_capacity(BUFFER),
            file: Some(file),
            worker: None,
            spare: Vec::new(),
            in_file: 0,
            failed: None,
        }
    }

    fn error(kind: std::io::ErrorKind) -> std::io::Error {
        std::io::Error::new(kind, "an earlier write to this file failed")
    }

    /// Takes back one buffer from the worker (waiting for it); its error, if it failed.
    fn take_back(&mut self) -> std::io::Result<()> {
        let Some(w) = self.worker.as_mut() else {
            return Ok(());
        };
        match w.back.recv() {
            Ok(Ok(mut b)) => {
                w.out -= 1;
                b.clear();
                self.spare.push(b);
                Ok(())
            }
            Ok(Err(e)) => {
                w.out -= 1;
                self.failed = Some(e.kind());
                Err(e)
            }
            // The worker is gone without a word: it panicked.
            Err(_) => {
                self.failed = Some(std::io::ErrorKind::Other);
                Err(std::io::Error::other("the file's writing thread stopped"))
            }
        }
    }

    /// Hands the buffer to the worker (starting it when needed), or writes it here when
    /// no thread can be started.
    fn hand_over(&mut self) -> std::io::Result<()> {
        if let Some(kind) = self.failed {
            return Err(Self::error(kind));
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        if self.worker.is_none() {
            if let Some(file) = self.file.take() {
                match spawn(file, self.in_file) {
                    Ok(w) => self.worker = Some(w),
                    Err(file) => {
                        // No thread: write here.
                        let mut file = file;
                        let r = file.write_all(&self.buf);
                        self.in_file += self.buf.len() as u64;
                        self.buf.clear();
                        self.file = Some(file);
                        return r;
                    }
                }
            } else {
                return Err(Self::error(std::io::ErrorKind::Other));
            }
        }
        while self.worker.as_ref().is_some_and(|w| w.out >= 2) {
            self.take_back()?;
        }
        let next = self
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BUFFER));
        let full = std::mem::replace(&mut self.buf, next);
        let w = self.worker.as_mut().expect("started above");
        if w.tx.send(full).is_err() {
            // The worker stopped on an error: return that error.
            loop {
                self.take_back()?;
            }
        }
        w.out += 1;
        Ok(())
    }

    /// Writes what is left, waits for the worker and returns the file.
    pub fn finish(mut self) -> std::io::Result<File> {
        if let Some(kind) = self.failed {
            return Err(Self::error(kind));
        }
        match self.worker.is_some() {
            false => {
                let mut file = self
                    .file
                    .take()
                    .ok_or_else(|| Self::error(std::io::ErrorKind::Other))?;
                file.write_all(&self.buf)?;
                self.buf.clear();
                Ok(file)
            }
            true => {
                self.hand_over()?;
                while self.worker.as_ref().is_some_and(|w| w.out > 0) {
                    self.take_back()?;
                }
                let w = self.worker.take().expect("checked above");
                drop(w.tx);
                w.handle
                    .join()
                    .map_err(|_| std::io::Error::other("the file's writing thread panicked"))
            }
        }
    }
}

/// Starts the worker over `file`, which holds `at` bytes; gives the file back when no
/// thread can be started.
fn spawn(file: File, at: u64) -> std::result::Result<Worker, File> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
    let (back_tx, back) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(3);
    // The thread owns the file; a failed spawn drops the closure, so the file is handed
    // through a slot it can be taken back from.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(file)));
    let theirs = slot.clone();
    let spawned = std::thread::Builder::new()
        .name("neardup-write".into())
        .spawn(move || {
            let mut file = theirs
                .lock()
                .ok()
                .and_then(|mut f| f.take())
                .expect("the file is handed over before the thread runs");
            let (mut handed, mut started) = (at, at);
            for b in rx {
                match file.write_all(&b) {
                    Ok(()) => {
                        handed += b.len() as u64;
                        if handed - started >= WRITE_BEHIND {
                            start_write_back(&file, started, handed - started);
                            started = handed;
                        }
                        if back_tx.send(Ok(b)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = back_tx.send(Err(e));
                        break;
                    }
                }
            }
            file
        });
    match spawned {
        Ok(handle) => Ok(Worker {
            tx,
            back,
            handle,
            out: 0,
        }),
        Err(_) => Err(slot
            .lock()
            .ok()
            .and_then(|mut f| f.take())
            .expect("a thread that never ran did not take the file")),
    }
}

impl Write for Behind {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if let Some(kind) = self.failed {
            return Err(Self::error(kind));
        }
        let room = BUFFER - self.buf.len();
        let n = data.len().min(room);
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() >= BUFFER {
            self.hand_over()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.worker.is_none() {
            if let Some(file) = self.file.as_mut() {
                file.write_all(&self.buf)?;
                self.in_file += self.buf.len() as u64;
                self.buf.clear();
                return Ok(());
            }
        }
        self.hand_over()?;
        while self.worker.as_ref().is_some_and(|w| w.out > 0) {
            self.take_back()?;
        }
        Ok(())
    }
}

impl Drop for Behind {
    /// Stops the worker without writing what is left (the file is being abandoned).
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            drop(w.tx);
            drop(w.back);
            let _ = w.handle.join();
        }
    }
}

/// Writes all of `slices` into `f` at `offset`, in order, with as few system calls as
/// the system allows (`pwritev`, at most [`MAX_SLICES`] slices a call): the bytes are
/// copied once, from wherever the slices lie (a mapping of an input, say), into the
/// file. A short write continues where it stopped; an interrupted one is retried.
#[cfg(unix)]
pub fn write_all_vectored_at(
    f: &File,
    mut slices: &mut [std::io::IoSlice<'_>],
    mut offset: u64,
) -> std::io::Result<()> {
    while !slices.is_empty() {
        let n = slices.len().min(MAX_SLICES);
        match rustix::io::pwritev(f, &slices[..n], offset) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WriteZero,
                    "the file took no bytes",
                ))
            }
            Ok(written) => {
                offset += written as u64;
                std::io::IoSlice::advance_slices(&mut slices, written);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The most slices [`write_all_vectored_at`] hands the system in one call (`IOV_MAX`
/// on Linux and the BSDs).
#[cfg(unix)]
pub const MAX_SLICES: usize = 1024;

/// Starts writing `len` bytes of `f` from `offset` to its device, without waiting (a
/// hint: an error is ignored, and the sync at commit writes whatever is left).
/// [`Behind`] calls it every [`WRITE_BEHIND`] bytes; writers of a file at positions
/// call it for their own stretches.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn start_write_back(f: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call's length; the call reads no memory.
    unsafe {
        libc::sync_file_range(
            f.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
}

/// Reserves the disk blocks of the first `len` bytes of `f` ahead of writing them at
/// positions (`fallocate`, keeping the file's size; a hint: an error is ignored).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn reserve_blocks(f: &File, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call's length; the call reads no memory.
    unsafe {
        libc::fallocate(
            f.as_raw_fd(),
            libc::FALLOC_FL_KEEP_SIZE,
            0,
            len as libc::off64_t,
        );
    }
}

/// Elsewhere, nothing is reserved ahead.
#[cfg(not(target_os = "linux"))]
pub fn reserve_blocks(_: &File, _: u64) {}

/// Elsewhere, the sync at commit writes the whole file.
#[cfg(not(target_os = "linux"))]
pub fn start_write_back(_: &File, _: u64, _: u64) {}

#[cfg(test)]
mod tests {
    use super::{Behind, BUFFER};
    use std::io::{Read, Seek, Write};

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn a_small_file_is_written_on_finish_without_a_thread() {
        let mut f = Behind::new(tempfile::tempfile().unwrap());
        f.write_all(b"hello").unwrap();
        assert!(f.worker.is_none());
        let mut file = f.finish().unwrap();
        file.rewind().unwrap();
        let mut s = String::new();
        file.read_to_string(&mut s).unwrap();
        assert_eq!(s, "hello");
    }

    #[test]
    fn pieces_of_every_size_come_out_whole_and_in_order() {
        let data = bytes(BUFFER * 5 + 12_345);
        for piece in [
            1usize,
            777,
            65_536,
            BUFFER - 1,
            BUFFER,
            BUFFER + 3,
            3 * BUFFER,
        ] {
            let mut f = Behind::new(tempfile::tempfile().unwrap());
            for (k, p) in data.chunks(piece).enumerate() {
                f.write_all(p).unwrap();
                // A flush now and then: the bytes handed over are in the file.
                if k % 97 == 5 {
                    f.flush().unwrap();
                }
            }
            let mut file = f.finish().unwrap();
            file.rewind().unwrap();
            let mut got = Vec::new();
            file.read_to_end(&mut got).unwrap();
            assert!(got == data, "pieces of {piece} bytes");
        }
    }

    #[cfg(unix)]
    #[test]
    fn slices_are_written_in_order_past_the_limit_of_one_call() {
        use std::io::IoSlice;
        let data = bytes(600_000);
        // Slices of varied sizes, empty ones among them, more than one call takes.
        let mut pieces: Vec<&[u8]> = Vec::new();
        let mut at = 0;
        let mut k = 0;
        while at < data.len() {
            let len = [0usize, 1, 7, 130, 1_000][k % 5].min(data.len() - at);
            pieces.push(&data[at..at + len]);
            at += len;
            k += 1;
        }
        assert!(pieces.len() > 2 * super::MAX_SLICES);
        let mut slices: Vec<IoSlice<'_>> = pieces.iter().map(|p| IoSlice::new(p)).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"0123456789").unwrap();
        super::write_all_vectored_at(&file, &mut slices, 4).unwrap();
        file.rewind().unwrap();
        let mut got = Vec::new();
        file.read_to_end(&mut got).unwrap();
        assert_eq!(&got[..4], b"0123");
        assert!(
            got[4..] == data[..],
            "the slices' bytes, in order, from offset 4"
        );
        // A device that takes nothing: the error comes back.
        if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
            let mut slices = [IoSlice::new(b"abc")];
            assert!(super::write_all_vectored_at(&full, &mut slices, 0).is_err());
        }
    }

    #[test]
    fn a_flush_puts_everything_in_the_file() {
        let data = bytes(BUFFER * 2 + 100);
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut f = Behind::new(file.reopen().unwrap());
        f.write_all(&data).unwrap();
        f.flush().unwrap();
        assert!(std::fs::read(file.path()).unwrap() == data);
        f.write_all(b"more").unwrap();
        f.flush().unwrap();
        assert_eq!(std::fs::read(file.path()).unwrap().len(), data.len() + 4);
        drop(f.finish().unwrap());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_error_is_reported_not_lost() {
        // A full device: every write fails.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let mut f = Behind::new(full);
        let data = bytes(BUFFER * 4);
        let wrote = f.write_all(&data).and_then(|_| f.flush());
        assert!(wrote.is_err(), "writing to a full device must fail");
        assert!(f.write_all(b"x").is_err(), "and keep failing");
        assert!(f.finish().is_err());
    }
}
