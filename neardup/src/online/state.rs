//! The durable state of a [`super::Deduper`]: a directory with a snapshot and an
//! append-only log.
//!
//! ```text
//! DIR/snapshot.G   the stored documents (id, site, sketch) in insertion order: a sketch
//!                  file (crate::persist::sketches: version 5 for tokenizer version 2,
//!                  its settings saying whether the simhash is left out, as a
//!                  deduper's are unless its rule reads it; a state made before
//!                  tokenizer versions has version 4 or 3 and is opened only by a
//!                  deduper of tokenizer version 1), written atomically
//! DIR/log.G        the changes since: "NDDEDLOG", version u32 (3), then entries
//!                  mark [F5 9E 3C A7], len u32, crc32 u32 of len and payload, payload:
//!                  1 u8 + a sketch-file record (insert; an id already stored is replaced)
//!                  2 u8 + id_len u32 + id (remove)
//! DIR/log.G.damaged[.K]   a damaged log set aside by a recovery (never deleted)
//! DIR/log.G.new    a log being written whole (a new one, or a rewrite), renamed to
//!                  log.G once flushed
//! DIR/lock         empty; locked (`flock`) while a deduper has the state open
//! ```
//!
//! A state is open in one deduper at a time: opening takes the lock on `DIR/lock`
//! without waiting, and a second open of the directory, in this process or another,
//! fails with [`std::io::ErrorKind::ResourceBusy`] until the first deduper is dropped
//! (or its process dies: the system releases the lock). Two writers of one log would
//! interleave their entries, and one's compaction would delete the other's files. Where
//! the filesystem has no locks, opening fails too, unless the caller says the directory
//! is theirs alone ([`StateOptions::unlocked`]).
//!
//! `G` is the generation. Opening a directory loads the highest snapshot and replays its
//! log. [`super::Deduper::compact`] writes `snapshot.G+1` atomically (the commit point),
//! starts `log.G+1` and deletes generation `G`; a crash anywhere in between leaves a
//! directory that opens to the same state. Opening also removes files of older
//! generations.
//!
//! # Torn tails and damage
//!
//! Each entry starts with a 4-byte mark (bytes that never occur in UTF-8 text, so in no
//! id or site) and carries its length and a CRC-32 of both length and payload, so that
//! after a damaged entry the next whole one can be found: the next mark followed by a
//! length and payload that check.
//!
//! - An entry that does not check **with no whole entry after it** is a torn tail: the
//!   last write of a process that died, cut short. It is dropped without a word (the
//!   file is cut after the last whole entry). A damaged last entry looks the same and is
//!   dropped the same way: nothing in the file tells the two apart.
//! - An entry that does not check **with whole entries after it** is damage (a bad
//!   sector, a flipped bit). Opening fails with [`Error::Corrupt`] naming the file, the
//!   damaged byte range and how many entries lie past it, and changes nothing. Opened
//!   with [`StateOptions::recover`], the log keeps every entry that checks, the damaged
//!   file is kept as `log.G.damaged` (hard-linked, or copied where links are not
//!   possible), and [`Recovered`] says what was lost.
//!
//! Logs of versions 1 and 2 (no marks; version 2 written through a memory mapping,
//! which could leave a zeroed end after a crash) are read too, a zeroed end taken as a
//! torn tail, and rewritten as version 3 on opening (atomically, a new file renamed over
//! the old). Damage in them is found by trying every byte position as an entry's start.
//!
//! # What a crash can lose
//!
//! An entry is written before the change is applied or acknowledged. A killed process
//! loses nothing acknowledged under any policy (the entries are in the operating
//! system's cache); a power loss or an operating-system crash loses nothing acknowledged
//! under [`SyncPolicy::Always`], at most the last `entries` entries or `millis`
//! milliseconds under [`SyncPolicy::Every`], and whatever the system had not written
//! under [`SyncPolicy::Never`]. A failed write, flush, rename or removal leaves the
//! deduper refusing changes until it is reopened (the error is not retried: after a
//! failed `fdatasync`, what reached the disk is unknown).

use super::append::{Appender, Ticket};
use super::fault::{self, Op};
use crate::error::{Error, Result};
use crate::persist::container::Cursor;
use crate::persist::sketches::{decode_record, encode_record, SavedSketches};
use crate::sketch::{Sketch, SketchConfig, SketchRef};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

const LOG_MAGIC: &[u8; 8] = b"NDDEDLOG";
/// Version 3: entries start with [`MARK`] and their CRC covers the length. Versions 1
/// and 2 are read (and rewritten as 3).
const LOG_VERSION: u32 = 3;
/// The mark that starts an entry: 0xF5 never occurs in UTF-8.
const MARK: [u8; 4] = [0xF5, 0x9E, 0x3C, 0xA7];
const HEADER: usize = 12;
const INSERT: u8 = 1;
const REMOVE: u8 = 2;

/// When the log is flushed to the disk (`fdatasync`); see the module docs for what a
/// crash can lose under each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// Before each change is acknowledged (the default): nothing acknowledged is ever
    /// lost. Threads inserting at once share flushes (group commit), and a verdict that
    /// names a stored document waits until that document is on the disk.
    #[default]
    Always,
    /// After `entries` entries, and at most `millis` milliseconds after an entry was
    /// written, whether or not more come (a thread of the log's own flushes an idle
    /// log). `u32::MAX` entries or `u64::MAX` milliseconds turn that bound off.
    Every {
        /// Entries between flushes.
        entries: u32,
        /// Milliseconds an entry may wait to be flushed.
        millis: u64,
    },
    /// Never explicitly (the operating system writes when it likes), and when the
    /// deduper is dropped.
    Never,
}

impl std::str::FromStr for SyncPolicy {
    type Err = Error;

    /// `always`, `never`, `N` (every N entries) or `Nms` (every N milliseconds).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::Config(format!(
                "sync policy: always, never, N (entries) or Nms (milliseconds), not {s:?}"
            ))
        };
        Ok(match s {
            "always" => SyncPolicy::Always,
            "never" => SyncPolicy::Never,
            _ => match s.strip_suffix("ms") {
                Some(ms) => SyncPolicy::Every {
                    entries: u32::MAX,
                    millis: ms.parse().map_err(|_| bad())?,
                },
                None => match s.parse::<u32>() {
                    Ok(n) if n > 0 => SyncPolicy::Every {
                        entries: n,
                        millis: u64::MAX,
                    },
                    _ => return Err(bad()),
                },
            },
        })
    }
}

/// How a state directory is opened ([`super::Deduper::open_with`]).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StateOptions {
    /// When the log is flushed. By default, [`SyncPolicy::Always`].
    pub sync: SyncPolicy,
    /// Open a log damaged before its last entry by keeping every entry that checks and
    /// setting the damaged file aside (module docs). By default, such a log is an error.
    pub recover: bool,
    /// Open where the filesystem has no file locks, the caller promising that no other
    /// deduper opens the directory meanwhile. By default, that is an error.
    pub unlocked: bool,
}

impl StateOptions {
    /// The defaults: flush before acknowledging, refuse damage, refuse to open unlocked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the sync policy. By default, [`SyncPolicy::Always`].
    pub fn sync(mut self, sync: SyncPolicy) -> Self {
        self.sync = sync;
        self
    }

    /// Recovers a damaged log (module docs). By default, this is disabled.
    pub fn recover(mut self, yes: bool) -> Self {
        self.recover = yes;
        self
    }

    /// Opens without a lock where the filesystem has none. By default, this is
    /// disabled.
    pub fn unlocked(mut self, yes: bool) -> Self {
        self.unlocked = yes;
        self
    }
}

/// What a recovery kept and lost ([`StateOptions::recover`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovered {
    /// The damaged log, as it was, under its new name.
    pub damaged_copy: PathBuf,
    /// The damaged byte ranges of that file (each lost whole: the entries that were
    /// there, at least one per range).
    pub damaged: Vec<Range<u64>>,
    /// Entries kept (every entry that checks).
    pub entries_kept: u64,
    /// Of those, entries that lay past the first damage.
    pub entries_past_damage: u64,
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes: u64 = self.damaged.iter().map(|r| r.end - r.start).sum();
        write!(
            f,
            "recovered a damaged log: {} entries kept ({} of them past the damage), {} \
             damaged range(s) of {bytes} bytes lost (the entries there); the damaged file \
             is kept as {}",
            self.entries_kept,
            self.entries_past_damage,
            self.damaged.len(),
            self.damaged_copy.display()
        )
    }
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

/// What a state directory holds on disk (see [`super::Deduper::disk`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskStats {
    /// The generation of the snapshot and log in use (`snapshot.G`, `log.G`).
    pub generation: u64,
    /// Bytes written to the log since the snapshot (flushed or not).
    pub log_bytes: u64,
    /// Bytes of the snapshot (0 before the first compaction wrote one).
    pub snapshot_bytes: u64,
    /// Time since the last flush of the log to the disk ended (or since it was opened).
    pub since_flush: std::time::Duration,
}

/// The open log of a state directory.
pub(crate) struct Log {
    dir: PathBuf,
    generation: u64,
    out: Appender,
    policy: SyncPolicy,
    unsynced: u32,
    buf: Vec<u8>,
    /// `DIR/lock`, locked while the state is open (see the module docs); `None` when
    /// opened unlocked.
    _lock: Option<File>,
}

/// `op` on `path`, after asking the fault seam.
fn io<T>(path: &Path, op: Op, f: impl FnOnce() -> std::io::Result<T>) -> Result<T> {
    fault::check(path, op)
        .and_then(|()| f())
        .map_err(|e| Error::io(path, e))
}

/// Times a taken lock is asked again, 10 ms apart, before the state counts as open
/// elsewhere (see [`lock_dir`]).
const LOCK_RETRIES: usize = 30;

/// Takes `DIR/lock` (see the module docs); the lock lasts as long as the file is open.
fn lock_dir(dir: &Path, unlocked: bool) -> Result<Option<File>> {
    let path = dir.join("lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    // A lock on an open file is shared, until it execs, by a process forked in between
    // (another thread of this process spawning a program): a lock just let go can look
    // taken for that moment. So a taken lock is asked again for a short while; a
    // deduper that really holds it holds it for longer.
    let mut result = f.try_lock();
    for _ in 0..LOCK_RETRIES {
        if !matches!(result, Err(std::fs::TryLockError::WouldBlock)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        result = f.try_lock();
    }
    match result {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                "the state is open in another deduper (one at a time; in this process or another)",
            ),
        )),
        Err(std::fs::TryLockError::Error(e))
            if e.kind() == std::io::ErrorKind::Unsupported && unlocked =>
        {
            Ok(None)
        }
        Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
            Err(Error::io(
                &path,
                std::io::Error::new(
                    e.kind(),
                    "this filesystem has no file locks, so nothing would stop a second \
                     deduper from writing the state at once; open unlocked only if the \
                     directory is yours alone (StateOptions::unlocked)",
                ),
            ))
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

/// Makes renames and new files in `dir` durable.
fn sync_dir(dir: &Path) -> Result<()> {
    let marker = dir.join(".");
    io(&marker, Op::Sync, || File::open(dir)?.sync_all())
}

/// Opens (or creates) the state in `dir`: the snapshot, the entries of its log (a torn
/// tail cut off; damage an error or recovered), the log open for appending, and what a
/// recovery did.
pub(crate) fn open(
    dir: &Path,
    config: &SketchConfig,
    options: &StateOptions,
) -> Result<(SavedSketches, Vec<Entry>, Log, Option<Recovered>)> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let lock = lock_dir(dir, options.unlocked)?;
    let g = match generations(dir, "snapshot")?.into_iter().max() {
        Some(g) => g,
        None => {
            let empty = SavedSketches {
                config: config.clone(),
                ids: Vec::new(),
                sites: Vec::new(),
                sketches: crate::sketch::Sketches::new(config),
            };
            let path = snapshot_path(dir, 0);
            io(&path, Op::Write, || Ok(()))?;
            empty.save(&path)?;
            sync_dir(dir)?;
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
    config.check_tokenizer(
        &snap.config,
        &format!("the documents of the state in {}", dir.display()),
    )?;
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
    let (entries, recovered) = if path.exists() {
        replay(&path, config, options.recover)?
    } else {
        create_log(&path)?;
        (Vec::new(), None)
    };
    // Older generations are superseded by this snapshot.
    for prefix in ["snapshot", "log"] {
        for old in generations(dir, prefix)?.into_iter().filter(|&o| o < g) {
            let p = dir.join(format!("{prefix}.{old}"));
            io(&p, Op::Remove, || std::fs::remove_file(&p))?;
        }
    }
    let out = open_appender(&path, options.sync)?;
    Ok((
        snap,
        entries,
        Log {
            dir: dir.to_path_buf(),
            generation: g,
            out,
            policy: options.sync,
            unsynced: 0,
            buf: Vec::new(),
            _lock: lock,
        },
        recovered,
    ))
}

fn open_appender(path: &Path, policy: SyncPolicy) -> Result<Appender> {
    let (cut, idle) = match policy {
        SyncPolicy::Always => (true, None),
        SyncPolicy::Every { millis, .. } if millis < u64::MAX => {
            (false, Some(Duration::from_millis(millis.max(1))))
        }
        _ => (false, None),
    };
    Appender::open(path, cut, idle)
}

/// Writes an empty log (its header) at `path`, atomically (a file beside it, flushed,
/// renamed over it: a crash or an error never leaves a log without its header).
fn create_log(path: &Path) -> Result<()> {
    let mut header = LOG_MAGIC.to_vec();
    header.extend_from_slice(&LOG_VERSION.to_le_bytes());
    write_new(path, &header)
}

/// `bytes` as the file `path`: written beside it, flushed, renamed over it, the
/// directory flushed.
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("log");
    let tmp = path.with_file_name(format!("{name}.new"));
    let mut f = io(&tmp, Op::Create, || File::create(&tmp))?;
    io(&tmp, Op::Write, || f.write_all(bytes))?;
    io(&tmp, Op::Sync, || f.sync_all())?;
    drop(f);
    io(path, Op::Rename, || std::fs::rename(&tmp, path))?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Frames `payload` as an entry of the current version, appended to `out`.
fn frame(out: &mut Vec<u8>, payload: &[u8]) {
    let at = out.len();
    out.extend_from_slice(&[0; 12]);
    out.extend_from_slice(payload);
    let (head, payload) = out[at..].split_at_mut(12);
    frame_head(head, payload);
}

/// The 12 bytes that start an entry of `payload`: the mark, the length, the CRC-32 of
/// both length and payload.
fn frame_head(head: &mut [u8], payload: &[u8]) {
    let len = (payload.len() as u32).to_le_bytes();
    let mut crc = crc32fast::Hasher::new();
    crc.update(&len);
    crc.update(payload);
    head[..4].copy_from_slice(&MARK);
    head[4..8].copy_from_slice(&len);
    head[8..12].copy_from_slice(&crc.finalize().to_le_bytes());
}

/// The entry starting at `at`, if one whole entry that checks does: its payload and
/// where the next starts. `marked`: version 3 framing.
fn entry_at(data: &[u8], at: usize, marked: bool) -> Option<(Range<usize>, usize)> {
    let head = if marked {
        (data.get(at..at + 4)? == MARK).then_some(at + 4)?
    } else {
        at
    };
    let h = data.get(head..head + 8)?;
    let len_bytes = [h[0], h[1], h[2], h[3]];
    let len = u32::from_le_bytes(len_bytes) as usize;
    let crc = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    if len == 0 {
        return None;
    }
    let start = head + 8;
    let end = start.checked_add(len)?;
    let payload = data.get(start..end)?;
    let sum = if marked {
        let mut c = crc32fast::Hasher::new();
        c.update(&len_bytes);
        c.update(payload);
        c.finalize()
    } else {
        crc32fast::hash(payload)
    };
    // An unmarked entry must also start like one (its kind), which keeps the search
    // through an old log from taking random bytes for an entry.
    (sum == crc && (marked || matches!(payload[0], INSERT | REMOVE))).then_some((start..end, end))
}

/// Where the next whole entry after `from` starts, if any.
fn next_entry(data: &[u8], from: usize, marked: bool) -> Option<usize> {
    if marked {
        let mut i = from;
        while let Some(k) = memchr::memmem::find(data.get(i..)?, &MARK) {
            if entry_at(data, i + k, true).is_some() {
                return Some(i + k);
            }
            i += k + 1;
        }
        None
    } else {
        (from..data.len()).find(|&q| entry_at(data, q, false).is_some())
    }
}

/// A log read through: its entries' payloads, its damaged ranges (each followed by a
/// whole entry), and where a torn tail starts.
struct Scan {
    payloads: Vec<Range<usize>>,
    damaged: Vec<Range<usize>>,
    torn: Option<usize>,
}

fn scan(data: &[u8], marked: bool) -> Scan {
    let mut s = Scan {
        payloads: Vec::new(),
        damaged: Vec::new(),
        torn: None,
    };
    let mut at = HEADER;
    while at < data.len() {
        if let Some((payload, next)) = entry_at(data, at, marked) {
            s.payloads.push(payload);
            at = next;
            continue;
        }
        match next_entry(data, at + 1, marked) {
            Some(q) => {
                s.damaged.push(at..q);
                at = q;
            }
            None => {
                s.torn = Some(at);
                break;
            }
        }
    }
    s
}

/// The entries of the log at `path` (see the module docs for torn tails, damage and old
/// versions), and what a recovery did.
fn replay(
    path: &Path,
    config: &SketchConfig,
    recover: bool,
) -> Result<(Vec<Entry>, Option<Recovered>)> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    if data.len() < HEADER || &data[..8] != LOG_MAGIC {
        return Err(corrupt("not a neardup deduper log".into()));
    }
    let version = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    if !(1..=LOG_VERSION).contains(&version) {
        return Err(corrupt(format!(
            "unsupported log version {version} (this build reads 1 to {LOG_VERSION})"
        )));
    }
    let s = scan(&data, version == LOG_VERSION);
    let mut entries = Vec::with_capacity(s.payloads.len());
    for (i, p) in s.payloads.iter().enumerate() {
        match parse_entry(&data[p.clone()], config, i as u64) {
            Ok(e) => entries.push(e),
            // A whole entry with a good checksum that does not parse: not damage a
            // recovery could skip, but a log this build cannot read.
            Err(e) => return Err(corrupt(format!("entry {i} (byte {}): {e}", p.start))),
        }
    }
    let past = |at: usize| s.payloads.iter().filter(|p| p.start > at).count() as u64;
    if let Some(first) = s.damaged.first() {
        let bytes: usize = s.damaged.iter().map(|r| r.end - r.start).sum();
        if !recover {
            return Err(corrupt(format!(
                "damaged at bytes {}..{} ({} damaged range(s), {bytes} bytes in all), with \
                 {} whole entries past the damage: not a torn tail, so the log was left as \
                 it is; open with recovery (neardup stream --recover, \
                 neardup.Deduper(recover=True), StateOptions::recover) to keep every entry \
                 that checks and set this file aside",
                first.start,
                first.end,
                s.damaged.len(),
                past(first.start)
            )));
        }
        let aside = set_aside(path)?;
        rewrite(path, &data, &s.payloads)?;
        let recovered = Recovered {
            damaged_copy: aside,
            damaged: s
                .damaged
                .iter()
                .map(|r| r.start as u64..r.end as u64)
                .collect(),
            entries_kept: s.payloads.len() as u64,
            entries_past_damage: past(first.start),
        };
        return Ok((entries, Some(recovered)));
    }
    if version != LOG_VERSION {
        // Appended entries are framed as version 3: the old entries are too, first.
        rewrite(path, &data, &s.payloads)?;
    } else if let Some(at) = s.torn {
        // A torn tail: drop it, so that new entries follow the last whole one.
        let f = io(path, Op::Write, || {
            let f = OpenOptions::new().write(true).open(path)?;
            f.set_len(at as u64)?;
            Ok(f)
        })?;
        io(path, Op::Sync, || f.sync_all())?;
    }
    Ok((entries, None))
}

/// Keeps the log at `path` as it is under a new name (`log.G.damaged`, or `.damaged.K`
/// when taken): a hard link, or a copy where links are not possible.
fn set_aside(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("log");
    let mut aside = path.with_file_name(format!("{name}.damaged"));
    let mut k = 2;
    while aside.exists() {
        aside = path.with_file_name(format!("{name}.damaged.{k}"));
        k += 1;
    }
    io(&aside, Op::Create, || {
        std::fs::hard_link(path, &aside).or_else(|_| {
            std::fs::copy(path, &aside)?;
            File::open(&aside)?.sync_all()
        })
    })?;
    Ok(aside)
}

/// Replaces the log at `path` by one of the current version holding `payloads` of
/// `data`: written beside it, flushed, renamed over it.
fn rewrite(path: &Path, data: &[u8], payloads: &[Range<usize>]) -> Result<()> {
    let mut out = Vec::with_capacity(data.len() + 12 * payloads.len());
    out.extend_from_slice(LOG_MAGIC);
    out.extend_from_slice(&LOG_VERSION.to_le_bytes());
    for p in payloads {
        frame(&mut out, &data[p.clone()]);
    }
    write_new(path, &out)
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
    /// Appends an insert; the ticket to wait for before acknowledging it, if the policy
    /// says to flush now.
    pub(crate) fn insert(
        &mut self,
        id: &str,
        site: Option<&str>,
        s: SketchRef<'_>,
    ) -> Result<Option<Ticket>> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 12]);
        self.buf.push(INSERT);
        encode_record(&mut self.buf, id, site, s);
        self.append()
    }

    /// Appends a removal (as [`insert`](Self::insert)).
    pub(crate) fn remove(&mut self, id: &str) -> Result<Option<Ticket>> {
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 12]);
        self.buf.push(REMOVE);
        self.buf.extend_from_slice(&(id.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(id.as_bytes());
        self.append()
    }

    /// Appends the entry in `buf`: 12 bytes of room for its head, then its payload.
    fn append(&mut self) -> Result<Option<Ticket>> {
        let (head, payload) = self.buf.split_at_mut(12);
        frame_head(head, payload);
        // A killed process leaves a whole entry or a torn tail (cut off on opening).
        let end = self.out.append(&self.buf)?;
        self.unsynced = self.unsynced.saturating_add(1);
        let due = match self.policy {
            SyncPolicy::Always => true,
            SyncPolicy::Every { entries, millis } => {
                self.unsynced >= entries
                    || self.out.syncer().since_last().as_millis() as u64 >= millis
            }
            SyncPolicy::Never => false,
        };
        Ok(due.then(|| {
            self.unsynced = 0;
            self.out.ticket_to(end)
        }))
    }

    /// Under [`SyncPolicy::Always`], a ticket for everything written so far: a verdict
    /// that names a stored document waits for it, so that it never names one a crash
    /// could lose.
    pub(crate) fn ticket(&self) -> Option<Ticket> {
        (self.policy == SyncPolicy::Always).then(|| self.out.ticket())
    }

    /// What this log and its snapshot hold on disk now.
    pub(crate) fn disk(&self) -> DiskStats {
        let snapshot = std::fs::metadata(snapshot_path(&self.dir, self.generation));
        DiskStats {
            generation: self.generation,
            log_bytes: self.out.len(),
            snapshot_bytes: snapshot.map_or(0, |m| m.len()),
            since_flush: self.out.syncer().since_last(),
        }
    }

    /// A ticket for everything written so far, whatever the policy (for an explicit
    /// flush).
    pub(crate) fn flush_ticket(&mut self) -> Ticket {
        self.unsynced = 0;
        self.out.ticket()
    }

    /// Writes the next generation's snapshot with `save` (given its path; it must write
    /// the file atomically), starts its log and deletes the current generation.
    pub(crate) fn compact(&mut self, save: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let next = self.generation + 1;
        let snapshot = snapshot_path(&self.dir, next);
        io(&snapshot, Op::Write, || Ok(()))?;
        save(&snapshot)?;
        // The commit point: the snapshot holds every entry of the current log.
        self.out.syncer().all_durable();
        sync_dir(&self.dir)?;
        let path = log_path(&self.dir, next);
        create_log(&path)?;
        self.out = open_appender(&path, self.policy)?;
        self.generation = next;
        self.unsynced = 0;
        for old in [
            snapshot_path(&self.dir, next - 1),
            log_path(&self.dir, next - 1),
        ] {
            io(&old, Op::Remove, || std::fs::remove_file(&old))?;
        }
        sync_dir(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = LOG_MAGIC.to_vec();
        out.extend_from_slice(&LOG_VERSION.to_le_bytes());
        for p in payloads {
            frame(&mut out, p);
        }
        out
    }

    #[test]
    fn a_scan_finds_every_entry_after_damage_and_takes_a_cut_end_for_a_torn_tail() {
        let payloads: Vec<Vec<u8>> = (0..20u8).map(|i| vec![INSERT, i, i, i, i]).collect();
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        let whole = log_of(&refs);
        let s = scan(&whole, true);
        assert_eq!(s.payloads.len(), 20);
        assert!(s.damaged.is_empty() && s.torn.is_none());
        // Every byte of every entry but the last, flipped: one damaged range, the
        // other 19 entries found.
        let size = 4 + 8 + 5;
        for at in HEADER..HEADER + 19 * size {
            let mut d = whole.clone();
            d[at] ^= 0x40;
            let s = scan(&d, true);
            assert_eq!(s.payloads.len(), 19, "byte {at}");
            assert_eq!(s.damaged.len(), 1, "byte {at}");
            let k = (at - HEADER) / size;
            assert_eq!(
                s.damaged[0],
                HEADER + k * size..HEADER + (k + 1) * size,
                "byte {at}"
            );
            assert!(s.torn.is_none());
        }
        // The last entry cut anywhere: a torn tail, no damage.
        for cut in whole.len() - size + 1..whole.len() {
            let s = scan(&whole[..cut], true);
            assert_eq!(s.payloads.len(), 19);
            assert!(s.damaged.is_empty());
            assert_eq!(s.torn, Some(whole.len() - size));
        }
    }
}
