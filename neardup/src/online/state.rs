//! The durable state of a [`super::Deduper`]: a directory with a snapshot and an
//! append-only log.
//!
//! ```text
//! DIR/snapshot.G   the stored documents (id, site, sketch) in insertion order: a sketch
//!                  file (crate::persist::sketches: version 4 when its settings leave
//!                  the simhash out, as a deduper's do unless its rule reads it; 3
//!                  when they do not), written atomically
//! DIR/log.G        the changes since: "NDDEDLOG", version u32 (2), then entries
//!                  len u32, crc32 u32 of the payload, payload:
//!                  1 u8 + a sketch-file record (insert; an id already stored is replaced)
//!                  2 u8 + id_len u32 + id (remove)
//!                  then, after a crash, zeros (the file's unused end)
//! DIR/lock         empty; locked (`flock`) while a deduper has the state open
//! ```
//!
//! A state is open in one deduper at a time: opening takes the lock on `DIR/lock`
//! without waiting, and a second open of the directory, in this process or another,
//! fails with [`std::io::ErrorKind::ResourceBusy`] until the first deduper is dropped
//! (or its process dies: the system releases the lock). Two writers of one log would
//! interleave their entries, and one's compaction would delete the other's files.
//!
//! `G` is the generation. Opening a directory loads the highest snapshot and replays its
//! log; an entry cut short or failing its checksum ends the log there (a torn tail: the
//! file is truncated to the last whole entry, never half-applied), and so does a zero
//! length (the log is written through a memory mapping, [`super::append`], which grows
//! the file with zeros ahead of its content). Version 1 logs (written with one system
//! call per entry, never with a zeroed end) are read the same way. [`super::Deduper::compact`]
//! writes `snapshot.G+1` atomically (the commit point), starts `log.G+1` and deletes
//! generation `G`; a crash anywhere in between leaves a directory that opens to the same
//! state. Opening also removes files of older generations.
//!
//! An entry is written before the change is applied or acknowledged. What a crash can
//! lose depends on the [`SyncPolicy`]: a killed process loses nothing acknowledged under
//! any policy (the entries are in the operating system's cache); a power loss or an
//! operating-system crash loses nothing acknowledged under [`SyncPolicy::Always`], at
//! most the last `entries` entries or `millis` milliseconds under
//! [`SyncPolicy::Every`], and whatever the system had not written under
//! [`SyncPolicy::Never`].

use super::append::Appender;
use crate::error::{Error, Result};
use crate::persist::container::Cursor;
use crate::persist::sketches::{decode_record, encode_record, SavedSketches};
use crate::sketch::{Sketch, SketchConfig, SketchRef};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

const LOG_MAGIC: &[u8; 8] = b"NDDEDLOG";
/// Version 2: the log may end in zeros. Version 1 (read too): it never did.
const LOG_VERSION: u32 = 2;
const INSERT: u8 = 1;
const REMOVE: u8 = 2;

/// When the log is flushed to the disk (`fsync`); see the module docs for what a crash
/// can lose under each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// After every entry (the default): nothing acknowledged is ever lost.
    #[default]
    Always,
    /// After `entries` entries or `millis` milliseconds since the last flush, whichever
    /// comes first (checked at each entry).
    Every {
        /// Entries between flushes.
        entries: u32,
        /// Milliseconds between flushes.
        millis: u64,
    },
    /// Never explicitly (the operating system writes when it likes).
    Never,
}

/// One change of the log.
pub(crate) enum Entry {
    Insert {
        id: String,
        site: Option<String>,
        sketch: Sketch,
    },
    Remove {
        id: String,
    },
}

/// The open log of a state directory.
pub(crate) struct Log {
    dir: PathBuf,
    generation: u64,
    out: Appender,
    policy: SyncPolicy,
    unsynced: u32,
    last_sync: Instant,
    buf: Vec<u8>,
    /// `DIR/lock`, locked while the state is open (see the module docs).
    _lock: File,
}

/// Takes `DIR/lock` (see the module docs); the lock lasts as long as the file is open.
/// Where the platform or filesystem has no file locks, the state opens unlocked.
fn lock_dir(dir: &Path) -> Result<File> {
    let path = dir.join("lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                "the state is open in another deduper (one at a time; in this process or another)",
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
            Ok(f)
        }
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
    }
}

fn snapshot_path(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("snapshot.{g}"))
}

fn log_path(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("log.{g}"))
}

/// Generations of the files named `prefix.G` in `dir`.
fn generations(dir: &Path, prefix: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name();
        if let Some(g) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_prefix('.'))
            .and_then(|n| n.parse::<u64>().ok())
        {
            out.push(g);
        }
    }
    Ok(out)
}

fn sync_dir(dir: &Path) {
    // Makes renames and new files durable where the platform allows it.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Opens (or creates) the state in `dir`: the snapshot, the entries of its log (a torn
/// tail cut off), and the log open for appending.
pub(crate) fn open(
    dir: &Path,
    config: &SketchConfig,
    policy: SyncPolicy,
) -> Result<(SavedSketches, Vec<Entry>, Log)> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let lock = lock_dir(dir)?;
    let g = match generations(dir, "snapshot")?.into_iter().max() {
        Some(g) => g,
        None => {
            let empty = SavedSketches {
                config: config.clone(),
                ids: Vec::new(),
                sites: Vec::new(),
                sketches: crate::sketch::Sketches::new(config),
            };
            empty.save(&snapshot_path(dir, 0))?;
            sync_dir(dir);
            0
        }
    };
    let snap = SavedSketches::load(&snapshot_path(dir, g))?;
    // Sketches with simhashes serve a deduper that leaves them out (it goes on making
    // them for this state); the other way round, the simhashes are missing.
    let with_simhash = SketchConfig {
        simhash: true,
        ..config.clone()
    };
    if snap.config.fingerprint() != config.fingerprint()
        && snap.config.fingerprint() != with_simhash.fingerprint()
    {
        return Err(Error::Incompatible(format!(
            "the state in {} was made with {}, this deduper uses {}",
            dir.display(),
            serde_json::to_string(&snap.config).unwrap_or_default(),
            serde_json::to_string(config).unwrap_or_default()
        )));
    }
    let path = log_path(dir, g);
    let entries = if path.exists() {
        let (entries, version) = replay(&path, config)?;
        if version != LOG_VERSION {
            // What is appended now may end in zeros after a crash: say so, so that a
            // build that reads version 1 only refuses the file rather than misreads it.
            let mut f = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            f.seek(SeekFrom::Start(8))
                .and_then(|_| f.write_all(&LOG_VERSION.to_le_bytes()))
                .and_then(|_| f.sync_all())
                .map_err(|e| Error::io(&path, e))?;
        }
        entries
    } else {
        create_log(&path)?;
        sync_dir(dir);
        Vec::new()
    };
    // Older generations are superseded by this snapshot.
    for prefix in ["snapshot", "log"] {
        for old in generations(dir, prefix)?.into_iter().filter(|&o| o < g) {
            let p = dir.join(format!("{prefix}.{old}"));
            std::fs::remove_file(&p).map_err(|e| Error::io(&p, e))?;
        }
    }
    let out = Appender::open(&path)?;
    Ok((
        snap,
        entries,
        Log {
            dir: dir.to_path_buf(),
            generation: g,
            out,
            policy,
            unsynced: 0,
            last_sync: Instant::now(),
            buf: Vec::new(),
            _lock: lock,
        },
    ))
}

/// Writes an empty log (its header) at `path`, flushed.
fn create_log(path: &Path) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(LOG_MAGIC)
        .and_then(|_| f.write_all(&LOG_VERSION.to_le_bytes()))
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(path, e))
}

/// The whole entries of a log and its version; the file is truncated after the last
/// whole entry.
fn replay(path: &Path, config: &SketchConfig) -> Result<(Vec<Entry>, u32)> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    if data.len() < 12 || &data[..8] != LOG_MAGIC {
        return Err(corrupt("not a neardup deduper log".into()));
    }
    let version = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    if version != 1 && version != LOG_VERSION {
        return Err(corrupt(format!(
            "unsupported log version {version} (this build reads 1 and {LOG_VERSION})"
        )));
    }
    let mut at = 12usize;
    let mut out = Vec::new();
    while let Some(head) = data.get(at..at + 8) {
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if len == 0 {
            // The zeroed end of a log that was being written when the process died.
            break;
        }
        let Some(payload) = data.get(at + 8..at + 8 + len) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        match parse_entry(payload, config, out.len() as u64) {
            Ok(e) => out.push(e),
            // A whole entry with a good checksum that does not parse: not a torn tail.
            Err(e) => return Err(corrupt(format!("entry {}: {e}", out.len()))),
        }
        at += 8 + len;
    }
    if at < data.len() {
        // A torn tail: drop it, so that new entries follow the last whole one.
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        f.set_len(at as u64).map_err(|e| Error::io(path, e))?;
        f.sync_all().map_err(|e| Error::io(path, e))?;
    }
    Ok((out, version))
}

fn parse_entry(payload: &[u8], config: &SketchConfig, i: u64) -> Result<Entry> {
    let mut r = Cursor::new(payload);
    let op = r.bytes(1)?[0];
    let e = match op {
        INSERT => {
            let (id, site, sketch) = decode_record(&mut r, config, true, i)?;
            Entry::Insert { id, site, sketch }
        }
        REMOVE => {
            let n = r.u32()? as usize;
            let id = std::str::from_utf8(r.bytes(n)?)
                .map_err(|_| r.error("id is not UTF-8"))?
                .to_string();
            Entry::Remove { id }
        }
        other => return Err(r.error(format!("unknown entry kind {other}"))),
    };
    if r.remaining() != 0 {
        return Err(r.error("bytes after the entry"));
    }
    Ok(e)
}

impl Log {
    /// Appends an insert.
    pub(crate) fn insert(&mut self, id: &str, site: Option<&str>, s: SketchRef<'_>) -> Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 8]);
        self.buf.push(INSERT);
        encode_record(&mut self.buf, id, site, s);
        self.append()
    }

    /// Appends a removal.
    pub(crate) fn remove(&mut self, id: &str) -> Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 8]);
        self.buf.push(REMOVE);
        self.buf.extend_from_slice(&(id.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(id.as_bytes());
        self.append()
    }

    fn append(&mut self) -> Result<()> {
        let len = (self.buf.len() - 8) as u32;
        let crc = crc32fast::hash(&self.buf[8..]);
        self.buf[..4].copy_from_slice(&len.to_le_bytes());
        self.buf[4..8].copy_from_slice(&crc.to_le_bytes());
        // A killed process leaves a whole entry or a torn tail (cut off on opening).
        self.out.append(&self.buf)?;
        self.unsynced += 1;
        let due = match self.policy {
            SyncPolicy::Always => true,
            SyncPolicy::Every { entries, millis } => {
                self.unsynced >= entries || self.last_sync.elapsed().as_millis() as u64 >= millis
            }
            SyncPolicy::Never => false,
        };
        if due {
            self.sync()?;
        }
        Ok(())
    }

    /// Flushes the log to the disk.
    pub(crate) fn sync(&mut self) -> Result<()> {
        self.out.sync()?;
        self.unsynced = 0;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Writes the next generation's snapshot with `save` (given its path; it must write
    /// the file atomically), starts its log and deletes the current generation.
    pub(crate) fn compact(&mut self, save: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let next = self.generation + 1;
        save(&snapshot_path(&self.dir, next))?;
        sync_dir(&self.dir);
        let path = log_path(&self.dir, next);
        create_log(&path)?;
        self.out = Appender::open(&path)?;
        for old in [
            snapshot_path(&self.dir, self.generation),
            log_path(&self.dir, self.generation),
        ] {
            std::fs::remove_file(&old).map_err(|e| Error::io(&old, e))?;
        }
        sync_dir(&self.dir);
        self.generation = next;
        self.unsynced = 0;
        Ok(())
    }
}
