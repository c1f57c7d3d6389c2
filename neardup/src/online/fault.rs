//! The state's I/O seam for fault injection: every write, sync, rename, create and
//! removal of a state directory's files asks `check` first, and so does every block of
//! memory a table takes from the system. Tests only; not part of
//! the API.
//!
//! Two ways in:
//! - [`fail`]: the `nth` (from 1) operation of a kind on files of one directory fails
//!   with an I/O error of the given kind (`StorageFull` for ENOSPC, `Other` standing in
//!   for EIO), once. Plans are keyed by directory, so tests running in parallel threads
//!   do not see each other's.
//! - the environment variable `NEARDUP_STATE_KILL=OP:N` (`write`, `sync`, `rename`,
//!   `create`, `remove`, `half-write`): the process aborts at the `N`th such operation
//!   (from 1), before it is made (for `half-write`: after writing the first half of the
//!   `N`th write), as a killed process would stop there. Read once per process.
//!
//! [`count`] tells how many operations of a kind were made on a directory's files (the
//! group-commit and idle-sync tests count syncs with it).

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Whether any directory has a plan or is watched: until then, [`check`] takes no lock
/// (every append of a deduper asks it).
static ARMED: AtomicBool = AtomicBool::new(false);

/// The environment variable of the kill points (see the module docs).
pub const KILL_ENV: &str = "NEARDUP_STATE_KILL";

/// What the state does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// A write of bytes (an entry, a header, a truncation).
    Write,
    /// A flush to the disk (`fdatasync`, `fsync`, a directory's sync).
    Sync,
    /// A rename (a snapshot's or a log's commit).
    Rename,
    /// A new file (a log).
    Create,
    /// A file removed (a superseded generation).
    Remove,
    /// A block of memory for a table or a rebuild, asked of the system (its path is
    /// `"<memory>"`, in the directory `""`: one plan for every deduper of the process).
    Map,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Sync => "sync",
            Op::Rename => "rename",
            Op::Create => "create",
            Op::Remove => "remove",
            Op::Map => "map",
        }
    }
}

#[derive(Default)]
struct Plans {
    /// (directory, op) → (nth, kind, seen so far).
    failures: HashMap<(PathBuf, Op), (u64, ErrorKind, u64)>,
    /// (directory, op) → operations made (kept only for directories with a plan or
    /// [`watch`]ed).
    counts: HashMap<(PathBuf, Op), u64>,
    watched: Vec<PathBuf>,
}

fn plans() -> &'static Mutex<Plans> {
    static PLANS: OnceLock<Mutex<Plans>> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

fn kill_point() -> Option<&'static (String, u64)> {
    static KILL: OnceLock<Option<(String, u64)>> = OnceLock::new();
    KILL.get_or_init(|| {
        let spec = std::env::var(KILL_ENV).ok()?;
        let (op, n) = spec.rsplit_once(':')?;
        Some((op.to_string(), n.parse().ok()?))
    })
    .as_ref()
}

fn kill_counter(op: &str) -> u64 {
    static SEEN: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    match seen.iter_mut().find(|(o, _)| o == op) {
        Some((_, n)) => {
            *n += 1;
            *n
        }
        None => {
            seen.push((op.to_string(), 1));
            1
        }
    }
}

fn dir_of(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new("")).to_path_buf()
}

/// Makes the `nth` (from 1) `op` on the files of `dir` fail with `kind`, once.
pub fn fail(dir: &Path, op: Op, nth: u64, kind: ErrorKind) {
    ARMED.store(true, Ordering::Release);
    let mut p = plans().lock().unwrap_or_else(|p| p.into_inner());
    p.failures.insert((dir.to_path_buf(), op), (nth, kind, 0));
    if !p.watched.iter().any(|w| w == dir) {
        p.watched.push(dir.to_path_buf());
    }
}

/// Starts counting the operations on the files of `dir` ([`count`]).
pub fn watch(dir: &Path) {
    ARMED.store(true, Ordering::Release);
    let mut p = plans().lock().unwrap_or_else(|p| p.into_inner());
    if !p.watched.iter().any(|w| w == dir) {
        p.watched.push(dir.to_path_buf());
    }
}

/// The `op`s made on the files of `dir` since it was [`watch`]ed (or given a plan).
pub fn count(dir: &Path, op: Op) -> u64 {
    let p = plans().lock().unwrap_or_else(|p| p.into_inner());
    p.counts.get(&(dir.to_path_buf(), op)).copied().unwrap_or(0)
}

/// Forgets the plans and counts of `dir`.
pub fn clear(dir: &Path) {
    let mut p = plans().lock().unwrap_or_else(|p| p.into_inner());
    p.failures.retain(|(d, _), _| d != dir);
    p.counts.retain(|(d, _), _| d != dir);
    p.watched.retain(|w| w != dir);
}

/// Asked before `op` on `path`: an injected failure, or nothing. Aborts the process at a
/// kill point.
pub(crate) fn check(path: &Path, op: Op) -> std::io::Result<()> {
    if let Some((kill, n)) = kill_point() {
        if kill == op.name() && kill_counter(kill) == *n {
            std::process::abort();
        }
    }
    if !ARMED.load(Ordering::Acquire) {
        return Ok(());
    }
    let dir = dir_of(path);
    let mut p = plans().lock().unwrap_or_else(|p| p.into_inner());
    if !p.watched.contains(&dir) {
        return Ok(());
    }
    *p.counts.entry((dir.clone(), op)).or_default() += 1;
    if let Some((nth, kind, seen)) = p.failures.get_mut(&(dir.clone(), op)) {
        *seen += 1;
        if *seen == *nth {
            let kind = *kind;
            p.failures.remove(&(dir, op));
            return Err(std::io::Error::new(
                kind,
                format!("injected failure of {} on {}", op.name(), path.display()),
            ));
        }
    }
    Ok(())
}

/// Whether the process is to abort halfway through this write (the `half-write` kill
/// point); counted per write like the others.
pub(crate) fn half_write() -> bool {
    match kill_point() {
        Some((kill, n)) if kill == "half-write" => kill_counter(kill) == *n,
        _ => false,
    }
}
