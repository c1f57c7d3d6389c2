//! A read-only memory mapping of a whole input file ([`Mapped`]): how uncompressed
//! JSONL inputs are read (their lines lent from it, see [`JsonlLines`](super::JsonlLines))
//! and how saved files are parsed (`persist::container`). `unsafe` for the mapping and
//! the release of pages behind the lines done with.

/// Bytes released at a time, and their alignment.
pub(crate) const RELEASE_STEP: usize = 2 << 20;

/// A read-only memory mapping of a whole input file.
///
/// The file must not be truncated while it is mapped: reading a page past the new end
/// kills the process (`SIGBUS`). Inputs are snapshots that `dedup` reads twice and
/// expects unchanged between the passes, so this asks nothing new of them.
pub struct Mapped {
    map: memmap2::Mmap,
    /// Shared lines dropped reach about this far (the furthest end, noted in steps).
    done_with: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapped")
            .field("len", &self.map.len())
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Mapped {
    /// Maps `file` when it is a non-empty regular file; `None` otherwise (or when the
    /// system refuses).
    #[allow(unsafe_code)]
    pub(crate) fn of(file: &std::fs::File) -> Option<Self> {
        let m = file.metadata().ok()?;
        if !m.is_file() || m.len() == 0 || usize::try_from(m.len()).is_err() {
            return None;
        }
        // SAFETY: the mapping is read-only (never written through); the file is an input
        // that is not truncated while it is read (see the type's docs).
        let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Mapped {
            map,
            done_with: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// A shared line ending at `end` was dropped. Noted only a step past the last note:
    /// one shared read per line, a write per step.
    pub(crate) fn done_with(&self, end: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        if end > self.done_with.load(Relaxed) + RELEASE_STEP / 2 {
            self.done_with.fetch_max(end, Relaxed);
        }
    }

    /// How far the shared lines dropped reach (noted in steps).
    pub(crate) fn done_with_up_to(&self) -> usize {
        self.done_with.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Maps the file at `path` when it is a non-empty regular file; `None` when it is
    /// not (or the system refuses); an error when it cannot be opened.
    pub fn open(path: &std::path::Path) -> crate::error::Result<Option<Self>> {
        let f = std::fs::File::open(path).map_err(|e| crate::error::Error::io(path, e))?;
        Ok(Self::of(&f))
    }

    /// Releases the pages of `range` from the process (they stay in the page cache).
    #[cfg(unix)]
    #[allow(unsafe_code)]
    ///
    /// The pages holding any byte of `range` within the mapping are released: reading
    /// them again maps them again from the file, so this never changes what is read.
    pub fn release(&self, range: std::ops::Range<usize>) {
        let range = range.start..range.end.min(self.map.len());
        if range.is_empty() {
            return;
        }
        // SAFETY: the mapping is of a file and never written, so dropping its pages loses
        // nothing: a later read maps the same bytes again from the file.
        let _ = unsafe {
            self.map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                range.start,
                range.len(),
            )
        };
    }

    /// Releases the pages of `range` from the process (a no-op on this system).
    #[cfg(not(unix))]
    pub fn release(&self, _: std::ops::Range<usize>) {}
}
