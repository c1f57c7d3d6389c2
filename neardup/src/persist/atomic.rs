//! Output files that are either wholly written or not at all.
//!
//! [`AtomicFile::create`] decides by what the path names **now**:
//!
//! | the path | how it is written |
//! |---|---|
//! | `-` | standard output, in place |
//! | nothing, or a regular file | a temporary file beside it, renamed over it on [`commit`](AtomicFile::commit) |
//! | a symbolic link | followed (every level); its final target is replaced atomically in the target's directory, the link stays |
//! | a character or block device, a FIFO, a socket | opened and written in place, never replaced (`-o /dev/null` must not turn the device into a file) |
//! | a directory | an error |
//!
//! Dropped without `commit`, an atomic file leaves the destination as it was and removes
//! its temporary file.
//!
//! A replaced file is synced to its device before the rename, so a committed file
//! survives a power loss whole. It is written through `persist::behind`'s `Behind`: full buffers are
//! copied into the file by a thread of its own while the caller goes on, and on Linux
//! the disk writes start while the file is still being written (every [`WRITE_BEHIND`]
//! bytes, without waiting), so the sync at commit waits for the last stretch only.
//!
//! # Fault injection (tests only)
//!
//! The crash tests must prove that a process died *while* writing an output. When the
//! environment variable `NEARDUP_FAULT_AFTER` is `NAME:BYTES`, a writer whose destination
//! file name is `NAME` aborts the process (`std::process::abort`) once it has been handed
//! more than `BYTES` bytes. Nothing else reads this variable.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The environment variable of the test-only fault point (see the module docs).
pub const FAULT_ENV: &str = "NEARDUP_FAULT_AFTER";

use super::behind::Behind;
pub use super::behind::WRITE_BEHIND;

/// A file written atomically where the path allows it (see the module docs).
pub struct AtomicFile {
    path: PathBuf,
    target: Target,
    fault: Option<u64>,
    written: u64,
    /// Whether anything was handed to [`Write`].
    touched: bool,
}

enum Target {
    Replace {
        tmp: tempfile::NamedTempFile,
        w: Behind,
        dest: PathBuf,
    },
    InPlace(BufWriter<File>),
    Stdout(BufWriter<std::io::Stdout>),
}

/// Follows `path` through every symbolic link (at most 40) to the path it finally names,
/// which need not exist.
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p).map_err(|e| Error::io(&p, e))?;
                p = if link.is_absolute() {
                    link
                } else {
                    p.parent().unwrap_or(Path::new("")).join(link)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::io(
        path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

fn fault_point(path: &Path) -> Option<u64> {
    let spec = std::env::var(FAULT_ENV).ok()?;
    let (name, bytes) = spec.rsplit_once(':')?;
    let file = path.file_name()?.to_str()?;
    (file == name).then(|| bytes.parse().ok()).flatten()
}

impl AtomicFile {
    /// Starts writing `path` (`-` is standard output).
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let fault = fault_point(&path);
        let target = if path.as_os_str() == "-" {
            Target::Stdout(BufWriter::with_capacity(1 << 16, std::io::stdout()))
        } else {
            let dest = resolve_links(&path)?;
            match std::fs::metadata(&dest) {
                Ok(m) if m.is_dir() => {
                    return Err(Error::io(
                        &path,
                        std::io::Error::other("is a directory, not a file"),
                    ))
                }
                Ok(m) if !m.is_file() => {
                    // A device, FIFO or socket: write into it, never replace it.
                    let f = OpenOptions::new()
                        .write(true)
                        .open(&dest)
                        .map_err(|e| Error::io(&path, e))?;
                    Target::InPlace(BufWriter::with_capacity(1 << 16, f))
                }
                _ => Self::replace(&path, dest)?,
            }
        };
        Ok(AtomicFile {
            path,
            target,
            fault,
            written: 0,
            touched: false,
        })
    }

    fn replace(path: &Path, dest: PathBuf) -> Result<Target> {
        let dir = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let tmp = tempfile::Builder::new()
            .prefix(".neardup-")
            .tempfile_in(dir)
            .map_err(|e| Error::io(path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // An ordinary output file (rw-r--r--), not a private temporary one.
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| Error::io(path, e))?;
        }
        let w = Behind::new(tmp.reopen().map_err(|e| Error::io(path, e))?);
        Ok(Target::Replace { tmp, w, dest })
    }

    /// True iff the destination is replaced on commit (a regular file or a new path),
    /// false when it is written in place (standard output, a device, a FIFO, a socket).
    pub fn is_atomic(&self) -> bool {
        matches!(self.target, Target::Replace { .. })
    }

    /// The temporary file, to be written at positions (`FileExt::write_all_at`, from
    /// several threads at once) instead of through [`Write`]: `Some` only for a file
    /// that is replaced on [`commit`](Self::commit), before anything was written through
    /// [`Write`], and without the test-only fault point. Do not mix the two ways of
    /// writing; `commit` syncs and renames the file as usual.
    pub fn positional(&self) -> Option<&File> {
        match &self.target {
            Target::Replace { tmp, .. } if !self.touched && self.fault.is_none() => {
                Some(tmp.as_file())
            }
            _ => None,
        }
    }

    /// Flushes and, for a replaced file, syncs it and renames it over the destination.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        match self.target {
            Target::Replace { tmp, w, dest, .. } => {
                let f = w.finish().map_err(|e| Error::io(&path, e))?;
                f.sync_all().map_err(|e| Error::io(&path, e))?;
                tmp.persist(&dest).map_err(|e| Error::io(&path, e.error))?;
            }
            Target::InPlace(mut w) => w.flush().map_err(|e| Error::io(&path, e))?,
            Target::Stdout(mut w) => w.flush().map_err(|e| Error::io(&path, e))?,
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.touched = true;
        if let Some(limit) = self.fault {
            self.written += buf.len() as u64;
            if self.written > limit {
                // Hand the bytes up to the limit to the file, so the crash is mid-write.
                if let Target::Replace { w, .. } = &mut self.target {
                    let keep = buf.len() - (self.written - limit) as usize;
                    let _ = w.write_all(&buf[..keep]).and_then(|_| w.flush());
                }
                eprintln!(
                    "{FAULT_ENV}: aborting after {limit} bytes of {}",
                    self.path.display()
                );
                std::process::abort();
            }
        }
        match &mut self.target {
            Target::Replace { w, .. } => w.write(buf),
            Target::InPlace(w) => w.write(buf),
            Target::Stdout(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.target {
            Target::Replace { w, .. } => w.flush(),
            Target::InPlace(w) => w.flush(),
            Target::Stdout(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AtomicFile;
    use std::io::Write;

    #[test]
    fn dropped_without_commit_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        std::fs::write(&p, "old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"new contents").unwrap();
        f.flush().unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "the temporary file is removed");
    }

    #[test]
    fn a_file_longer_than_the_write_behind_stretch_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.bin");
        // Pieces of odd sizes, so that write-back starts fall inside the buffer's flushes.
        let data: Vec<u8> = (0..(super::WRITE_BEHIND as usize * 2 + 12_345))
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        let mut f = AtomicFile::create(&p).unwrap();
        for piece in data.chunks(777_777) {
            f.write_all(piece).unwrap();
        }
        f.commit().unwrap();
        assert!(std::fs::read(&p).unwrap() == data);
    }

    #[test]
    fn commit_replaces_and_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        std::fs::write(&p, "old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        assert!(f.is_atomic());
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert!(AtomicFile::create(dir.path()).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real/data.txt");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real/data.txt", &link).unwrap();
        let mut f = AtomicFile::create(&link).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // The temporary file was made in the target's directory, and is gone.
        assert_eq!(
            std::fs::read_dir(dir.path().join("real")).unwrap().count(),
            1
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_character_device_is_written_in_place() {
        let f = AtomicFile::create("/dev/null").unwrap();
        assert!(!f.is_atomic());
        let mut f = f;
        f.write_all(b"into the void").unwrap();
        f.commit().unwrap();
        let m = std::fs::metadata("/dev/null").unwrap();
        assert!(!m.is_file(), "/dev/null must stay a device");
    }
}
