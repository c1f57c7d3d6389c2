//! What an input name stands for: a file, a directory of shards, a directory of
//! documents, or a glob.
//!
//! * a file is itself;
//! * a glob (a name with `*`, `?` or `[` that is not an existing path; `**` matches any
//!   number of directories) stands for the files it matches;
//! * a directory that holds shard files — JSONL (`.jsonl`, `.json`, `.ndjson`), Parquet
//!   (`.parquet`) or WARC (`.warc`, `.arc`), each possibly compressed (`.gz`, `.zst`,
//!   `.zstd`, `.bz2`, `.xz`) — stands for those files, searched recursively;
//! * any other directory is a directory of documents ([`Format::Dir`]).
//!
//! Files of a directory or a glob come in sorted path order (byte order of the path),
//! skipping names that start with `.` or `_` (hidden files, `_SUCCESS` markers); each
//! is an input of its own, named by its path. A directory that mixes shard files and
//! documents is an error rather than a guess.

use super::{Format, Input};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Compression suffixes a shard's name may end with.
const COMPRESSED: [&str; 5] = [".gz", ".zst", ".zstd", ".bz2", ".xz"];
/// The names of shard files, without compression suffix.
const SHARDS: [&str; 6] = [".jsonl", ".json", ".ndjson", ".parquet", ".warc", ".arc"];
/// The names of document files of a directory input.
const DOCUMENTS: [&str; 3] = [".txt", ".html", ".htm"];

/// The name without its compression suffix (`.gz`, `.zst`, `.zstd`, `.bz2`, `.xz`),
/// lower-cased: what says the format of `data.jsonl.zst` or `rows.parquet`.
pub fn stem(name: &str) -> String {
    let mut lower = name.to_ascii_lowercase();
    for c in COMPRESSED {
        if let Some(s) = lower.strip_suffix(c) {
            lower = s.to_string();
            break;
        }
    }
    lower
}

fn is_shard(name: &str) -> bool {
    let s = stem(name);
    SHARDS.iter().any(|e| s.ends_with(e))
}

fn is_document(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    DOCUMENTS.iter().any(|e| lower.ends_with(e))
}

fn skipped(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n.starts_with('.') || n.starts_with('_'))
}

/// Every file under `dir`, recursively (skipping hidden and `_` names).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        if skipped(&path) {
            continue;
        }
        if entry.file_type().map_err(|e| Error::io(&path, e))?.is_dir() {
            files_under(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The inputs `name` stands for (see the module docs), each with the name of its
/// output under an output directory ([`Input::shard`]): the path relative to the
/// directory or the glob's fixed prefix, or the file's own name. `format` forces the
/// format of every file.
pub fn expand(name: &str, format: Option<Format>) -> Result<Vec<Input>> {
    let path = Path::new(name);
    if !path.exists() && name.contains(['*', '?', '[']) {
        let matches = glob::glob(name).map_err(|e| Error::Config(format!("{name}: {e}")))?;
        let mut files = Vec::new();
        for m in matches {
            let p = m.map_err(|e| Error::io(e.path(), std::io::Error::other(e.to_string())))?;
            if p.is_file() && !skipped(&p) {
                files.push(p);
            }
        }
        if files.is_empty() {
            return Err(Error::Config(format!("{name}: no file matches")));
        }
        files.sort();
        let base = glob_base(name);
        return Ok(files
            .into_iter()
            .map(|p| {
                let shard = relative(&p, &base);
                let mut i = Input::detect(&p, p.to_string_lossy(), format);
                i.shard = shard;
                i
            })
            .collect());
    }
    if !path.exists() {
        return Err(Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        ));
    }
    if !path.is_dir() || format == Some(Format::Dir) {
        return Ok(vec![Input::detect(path, name, format)]);
    }
    let mut files = Vec::new();
    files_under(path, &mut files)?;
    let names = |p: &PathBuf| p.to_string_lossy().into_owned();
    let shards = files.iter().filter(|p| is_shard(&names(p))).count();
    let documents = files.iter().filter(|p| is_document(&names(p))).count();
    if shards == 0 && format.is_none() {
        return Ok(vec![Input::detect(path, name, Some(Format::Dir))]);
    }
    if documents > 0 {
        return Err(Error::Config(format!(
            "{name}: the directory holds both shard files ({shards}) and document files \
             ({documents}); give the shards' directory or a glob"
        )));
    }
    let mut files: Vec<PathBuf> = if format.is_some() {
        files
    } else {
        files.into_iter().filter(|p| is_shard(&names(p))).collect()
    };
    files.sort();
    Ok(files
        .into_iter()
        .map(|p| {
            let shard = relative(&p, path);
            let mut i = Input::detect(&p, p.to_string_lossy(), format);
            i.shard = shard;
            i
        })
        .collect())
}

/// The directory part of a glob before its first wildcard component.
fn glob_base(pattern: &str) -> PathBuf {
    let mut base = PathBuf::new();
    for c in Path::new(pattern).components() {
        if c.as_os_str().to_string_lossy().contains(['*', '?', '[']) {
            break;
        }
        base.push(c);
    }
    base
}

fn relative(p: &Path, base: &Path) -> String {
    p.strip_prefix(base)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"{\"id\":\"x\",\"text\":\"y\"}\n").unwrap();
    }

    #[test]
    fn directories_and_globs_expand_in_path_order() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("data");
        for n in [
            "b/2.jsonl.zst",
            "a/10.jsonl",
            "a/9.jsonl.gz",
            "c.parquet",
            "_SUCCESS",
            ".hidden.jsonl",
        ] {
            touch(&root.join(n));
        }
        let names = |v: Vec<Input>| v.into_iter().map(|i| i.shard).collect::<Vec<_>>();
        let want = ["a/10.jsonl", "a/9.jsonl.gz", "b/2.jsonl.zst", "c.parquet"];
        assert_eq!(names(expand(root.to_str().unwrap(), None).unwrap()), want);
        let pattern = format!("{}/**/*.jsonl*", root.display());
        assert_eq!(
            names(expand(&pattern, None).unwrap()),
            ["a/10.jsonl", "a/9.jsonl.gz", "b/2.jsonl.zst"]
        );
        let one = expand(root.join("c.parquet").to_str().unwrap(), None).unwrap();
        assert_eq!(names(one), ["c.parquet"]);
        assert!(expand(&format!("{}/*.nothing", root.display()), None).is_err());
        assert!(expand(root.join("missing.jsonl").to_str().unwrap(), None).is_err());
        // Documents only: a directory of documents; mixed: an error.
        let docs = t.path().join("docs");
        touch(&docs.join("x/page.html"));
        let d = expand(docs.to_str().unwrap(), None).unwrap();
        assert_eq!((d.len(), d[0].format), (1, Format::Dir));
        touch(&docs.join("shard.jsonl"));
        assert!(expand(docs.to_str().unwrap(), None).is_err());
    }
}
