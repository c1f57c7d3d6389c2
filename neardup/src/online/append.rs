//! An append-only file written through a shared memory mapping, so that an append is a
//! copy into memory rather than a system call, and still survives the process: the
//! mapped pages are the operating system's page cache, which a killed process leaves
//! behind (what a power loss keeps is up to [`Appender::sync`]).
//!
//! Only a window at the end is mapped (8 MiB, or one entry's size if larger), so the
//! process holds that much of the log, not all of it. The file is grown ahead of the
//! content window by window by writing zeros, so its blocks are reserved before they
//! are mapped (a full disk is an error on growing, not a fault on a write to the
//! mapping) and its pages are in the page cache, written: mapping them then reads
//! nothing and zeroes nothing. (Blocks reserved with `fallocate` instead, nothing
//! written, cost twice as much: each page of the window was then read as zeros and
//! given its buffers when mapped; 5 M appends of 170 bytes took 0.52 s against 0.27 s.)
//! The bytes past the content are zeros until written; a clean close truncates the
//! file to its content, and a crash leaves the zeros, which the reader of the log
//! takes as its end (an entry never starts with a zero length).
//!
//! The mapping assumes that nothing else writes the file while it is open: a state
//! directory belongs to one deduper at a time.

use crate::error::{Error, Result};
use memmap2::{MmapMut, MmapOptions};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The mapped window's usual length.
const WINDOW: usize = 8 << 20;
/// Window offsets and lengths are multiples of this (the largest mapping granularity
/// of the usual platforms).
const ALIGN: usize = 64 << 10;
/// Bytes past an append's end asked for into the cache (the lines of the next entry
/// or two: an insert's entry is about 170 bytes with the paper preset).
const NEXT: usize = 256;

/// See the module docs.
pub(super) struct Appender {
    path: PathBuf,
    file: File,
    /// The file's bytes `start..start + map.len()`.
    map: Option<MmapMut>,
    start: usize,
    /// Bytes of content.
    len: usize,
    /// Bytes of the file: the content, then zeros.
    cap: usize,
    /// Content bytes already flushed to the disk.
    synced: usize,
}

impl Appender {
    /// Opens `path` to append after its content, which is the whole file.
    pub(super) fn open(path: &Path) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len() as usize;
        Ok(Appender {
            path: path.to_path_buf(),
            file,
            map: None,
            start: 0,
            len,
            cap: len,
            synced: len,
        })
    }

    /// Appends `bytes`: in the page cache when this returns (a killed process keeps
    /// them), on the disk after the next [`sync`](Self::sync).
    pub(super) fn append(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.len + bytes.len();
        let mapped_end = self.map.as_ref().map_or(0, |m| self.start + m.len());
        if end > mapped_end {
            self.remap(end)?;
        }
        let map = self.map.as_mut().expect("mapped by remap");
        map[self.len - self.start..end - self.start].copy_from_slice(bytes);
        self.len = end;
        // The lines the next entries go to, asked for now: the next append, a whole
        // document's work later, then writes to lines in the cache. (A copy to lines
        // not in the cache held up the deduper's locked work behind it: in a profile
        // at 10 M stored documents, the instructions right after an insert's log
        // entry waited for 1.5 % of the sketching's time; with the lines asked for
        // ahead, those samples fell by 70 % at 3 M.)
        let from = end - self.start;
        super::table::prefetch_lines(&map[from..(from + NEXT).min(map.len())]);
        Ok(())
    }

    /// Maps a window from the content's end that holds at least `end`, growing the
    /// file (zeros written) to cover it.
    #[allow(unsafe_code)]
    fn remap(&mut self, end: usize) -> Result<()> {
        let io = |e| Error::io(&self.path, e);
        // The old window's pages stay in the page cache (and are written like any).
        self.map = None;
        let start = self.len - self.len % ALIGN;
        let window_end = (start + WINDOW).max(end).next_multiple_of(ALIGN);
        if window_end > self.cap {
            self.file
                .seek(SeekFrom::Start(self.cap as u64))
                .map_err(io)?;
            let zeros = vec![0u8; ALIGN];
            let mut at = self.cap;
            while at < window_end {
                if let Err(e) = self.file.write_all(&zeros) {
                    // What was added holds zeros past the content: cut it off again.
                    let _ = self.file.set_len(self.cap as u64);
                    return Err(io(e));
                }
                at += ALIGN;
            }
            self.cap = window_end;
        }
        // SAFETY: the window lies within the file, which is open for reading and
        // writing; no one else writes the file while it is open (module docs), and the
        // mapping is dropped before the file is shortened.
        let map = unsafe {
            MmapOptions::new()
                .offset(start as u64)
                .len(window_end - start)
                .map_mut(&self.file)
        }
        .map_err(io)?;
        // The window's pages are mapped at once, writable (Linux 5.14 and later; a
        // hint, ignored elsewhere), instead of one fault per page as entries reach
        // them. (Its zeros past the content may reach the disk: opening cuts a zeroed
        // end off like a torn one.)
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::PopulateWrite);
        self.map = Some(map);
        self.start = start;
        Ok(())
    }

    /// Flushes the content appended since the last call to the disk.
    pub(super) fn sync(&mut self) -> Result<()> {
        if let Some(map) = &self.map {
            let from = self.synced.max(self.start) - self.start;
            map.flush_range(from, self.len - self.start - from)
                .map_err(|e| Error::io(&self.path, e))?;
        }
        // Also what earlier windows left unwritten, and the file's length.
        self.file
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))?;
        self.synced = self.len;
        Ok(())
    }

    /// Bytes of content.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Appender {
    fn drop(&mut self) {
        // A clean close leaves the content alone in the file (a crash leaves zeros
        // after it, which the reader of the log skips).
        self.map = None;
        if self.cap > self.len {
            let _ = self.file.set_len(self.len as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Appender;

    #[test]
    fn appends_grow_the_file_and_a_close_trims_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"head").unwrap();
        let mut want = b"head".to_vec();
        {
            let mut a = Appender::open(&path).unwrap();
            for i in 0..200_000u32 {
                // Entries of 1 to 97 bytes, and one larger than a window.
                let n = if i == 150_000 {
                    9 << 20
                } else {
                    (i % 97) as usize + 1
                };
                let entry = vec![(i % 251) as u8 + 1; n];
                a.append(&entry).unwrap();
                want.extend_from_slice(&entry);
            }
            assert_eq!(a.len(), want.len());
            a.sync().unwrap();
            // While open, the file holds the content, then zeros.
            let during = std::fs::read(&path).unwrap();
            assert!(during.len() > want.len());
            assert_eq!(&during[..want.len()], &want[..]);
            assert!(during[want.len()..].iter().all(|&b| b == 0));
        }
        assert_eq!(std::fs::read(&path).unwrap(), want);
        // Reopened, it appends after the content.
        {
            let mut a = Appender::open(&path).unwrap();
            a.append(b"tail").unwrap();
        }
        want.extend_from_slice(b"tail");
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }
}
