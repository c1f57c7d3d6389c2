//! Saved sketches: write the sketches of a snapshot once, dedup later snapshots against
//! them without re-reading the old records.
//!
//! # File format (versions 3, 4 and 5)
//!
//! The [`crate::persist::container`] format of every saved file, kind `"NDSKETCH"` /
//! `"NDSKEND1"`; its header is the [`SketchConfig`] as JSON (sketches are comparable only
//! under it); each record:
//!
//! ```text
//! id_len u32, id bytes (UTF-8),
//! site_len u32, site bytes (UTF-8; u32::MAX: no site)          (version 3 only)
//! supershingles m' × u64, charikar b/64 × u64, simhash u64, exact u128, terms u32,
//! pugh R·L × u64 (only when the settings have Pugh checksums)
//! ```
//!
//! Version 5 is written for sketches of tokenizer version 2 (the header's
//! `"tokenizer": 2`, [`SketchConfig::tokenizer`]), with or without simhashes (the
//! header says which): a build before it would read the header without the field and
//! compare the terms of two tokenizers. Sketches of tokenizer version 1 are written as
//! before (versions 3 and 4, no `tokenizer` in the header), and files of versions 2 to 4
//! read as tokenizer version 1; comparing them with sketches of another tokenizer is
//! refused with both versions named (`Pipeline::dedup_against`, the online state).
//!
//! Version 4 is written for settings without the simhash (`"simhash": false` in the
//! header, [`SketchConfig::simhash`]): the records keep their layout and their simhash
//! field holds 0, which a version-3 reader would take for simhashes (a build before
//! the setting ignores it in the header), so such a file has a version of its own.
//! Files of sketches with simhashes are still written as version 3 and read by older
//! builds. A version-4 file that says it has simhashes, or a version 2 or 3 that says
//! it has none, is refused as damaged.
//!
//! Version 3 added each record's site, so that a pair of an old and a new record is
//! judged in the class (same site, cross site) a batch run would give it. Version 2
//! files are still read, their records without sites (their pairs are of the unknown
//! class, as when they were written). Version 1 files may hold sketches made before
//! min-hash values became 32-bit, which would compare silently wrongly with this
//! build's, so they are refused with that reason (make them again with `neardup
//! sketch`). Committed files of versions 2, 3 and 4 (`fixtures/compat/v2.sketches`,
//! `fixtures/compat/v3.sketches`, `fixtures/compat/v4.sketches`) are read by the tests,
//! and those of versions 3 and 4 are re-written byte for byte.
//!
//! Files are written atomically (temporary file, fsync, rename). Loading checks magic,
//! version, lengths and the checksum before using anything, and reports a damaged,
//! truncated, foreign or outdated file as [`Error::Corrupt`] — never a panic, never
//! wrong sketches.

use crate::error::{Error, Result};
use crate::persist::container::{self, Cursor, Kind, Parts};
use crate::sketch::tokenize::TokenizerVersion;
use crate::sketch::{Sketch, SketchConfig, SketchRef, Sketches};
use std::path::Path;

/// Magic bytes at the start of a sketch file.
pub const MAGIC: &[u8; 8] = b"NDSKETCH";
/// Magic bytes at the end of a sketch file.
pub const END_MAGIC: &[u8; 8] = b"NDSKEND1";
/// The newest format version: written for sketches of tokenizer version 2 and later.
pub const VERSION: u32 = 5;
/// The version written for tokenizer-1 sketches without the simhash.
pub const VERSION_V1_WITHOUT_SIMHASH: u32 = 4;
/// The version written for tokenizer-1 sketches with simhashes.
pub const VERSION_WITH_SIMHASH: u32 = 3;

const KIND: Kind = Kind {
    name: "sketch file",
    magic: MAGIC,
    end: END_MAGIC,
    version: VERSION,
    readable: &[2, 3, 4],
    refused: &[
        "",
        "version 1 files may hold sketches made before min-hash values became 32-bit, which \
         would compare silently wrongly with this build's; make the file again with \
         `neardup sketch`",
    ],
};

/// Sketches of a snapshot with their ids and settings.
#[derive(Debug, Clone)]
pub struct SavedSketches {
    /// The settings the sketches were made with.
    pub config: SketchConfig,
    /// Record ids, by position.
    pub ids: Vec<String>,
    /// Record sites, by position (`None`: no site, or a version-2 file).
    pub sites: Vec<Option<String>>,
    /// The sketches, by position.
    pub sketches: Sketches,
}

impl SavedSketches {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        save_records(
            path,
            &self.config,
            self.ids.len() as u64,
            self.ids.iter().enumerate().map(|(i, id)| {
                (
                    id.as_str(),
                    self.sites.get(i).and_then(|s| s.as_deref()),
                    self.sketches.get(i),
                )
            }),
        )
    }

    /// Loads and checks a file.
    pub fn load(path: &Path) -> Result<SavedSketches> {
        container::load(path, Self::from_bytes)
    }

    /// Parses the bytes of a file; a damaged, truncated, foreign or outdated one is
    /// [`Error::Corrupt`] (with the path `(bytes)`).
    pub fn from_bytes(data: &[u8]) -> Result<SavedSketches> {
        let Parts {
            version,
            header,
            count,
            records: mut r,
        } = container::read(data, &KIND)?;
        let config: SketchConfig =
            serde_json::from_slice(header).map_err(|e| r.error(format!("bad settings: {e}")))?;
        config
            .validate()
            .map_err(|e| r.error(format!("bad settings: {e}")))?;
        if (version < 5) != (config.tokenizer == TokenizerVersion::V1) {
            return Err(r.error(format!(
                "a version-{version} file whose settings say tokenizer version {}",
                config.tokenizer
            )));
        }
        if version < 5 && config.simhash != (version < 4) {
            return Err(r.error(format!(
                "a version-{version} file whose settings say the sketches have {} simhash",
                if config.simhash { "a" } else { "no" }
            )));
        }
        let ss = config.supershingles;
        let words = config.charikar_bits / 64;
        let pw = config.pugh.map_or(0, |p| p.width());
        let with_sites = version >= 3;
        let min_record = 4 + 4 * usize::from(with_sites) + 8 * (ss + words + 1) + 16 + 4 + 8 * pw;
        if count > (r.remaining() / min_record) as u64 {
            return Err(r.error(format!("record count {count} does not fit the file")));
        }
        let mut ids = Vec::with_capacity(count as usize);
        let mut sites = Vec::with_capacity(count as usize);
        let mut sketches = Sketches::new(&config);
        for i in 0..count {
            let (id, site, sketch) = decode_record(&mut r, &config, with_sites, i)?;
            sites.push(site);
            sketches.push(&sketch);
            ids.push(id);
        }
        if r.remaining() != 0 {
            return Err(r.error(format!(
                "{} unexpected bytes after the records",
                r.remaining()
            )));
        }
        Ok(SavedSketches {
            config,
            ids,
            sites,
            sketches,
        })
    }
}

/// Writes a sketch file atomically from `count` records `(id, site, sketch)` made with
/// `config`, streamed: what [`SavedSketches::save`] writes, without the records
/// gathered in one first. Fewer or more records than `count` is an error (the file is
/// not written).
pub(crate) fn save_records<'a>(
    path: &Path,
    config: &SketchConfig,
    count: u64,
    records: impl Iterator<Item = (&'a str, Option<&'a str>, SketchRef<'a>)>,
) -> Result<()> {
    let header = serde_json::to_vec(config).map_err(|e| Error::Config(e.to_string()))?;
    let kind = Kind {
        version: file_version(config),
        ..KIND
    };
    container::write(path, &kind, &header, count, |put| {
        let mut buf = Vec::with_capacity(256);
        let mut n = 0u64;
        for (id, site, s) in records {
            buf.clear();
            encode_record(&mut buf, id, site, s);
            put(&buf)?;
            n += 1;
        }
        if n != count {
            return Err(Error::Config(format!(
                "a sketch file of {count} records was given {n}"
            )));
        }
        Ok(())
    })
}

/// The format version a file of sketches made with `config` is written in.
pub(crate) fn file_version(config: &SketchConfig) -> u32 {
    match (config.tokenizer, config.simhash) {
        (TokenizerVersion::V1, true) => VERSION_WITH_SIMHASH,
        (TokenizerVersion::V1, false) => VERSION_V1_WITHOUT_SIMHASH,
        _ => VERSION,
    }
}

/// Appends one record (id, site, sketch) in the version-3 layout to `buf`.
pub(crate) fn encode_record(buf: &mut Vec<u8>, id: &str, site: Option<&str>, s: SketchRef<'_>) {
    buf.extend_from_slice(&(id.len() as u32).to_le_bytes());
    buf.extend_from_slice(id.as_bytes());
    match site {
        Some(site) => {
            buf.extend_from_slice(&(site.len() as u32).to_le_bytes());
            buf.extend_from_slice(site.as_bytes());
        }
        None => buf.extend_from_slice(&u32::MAX.to_le_bytes()),
    }
    for v in s.supershingles.iter().chain(s.charikar) {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    buf.extend_from_slice(&s.simhash.to_le_bytes());
    buf.extend_from_slice(&s.exact.to_le_bytes());
    buf.extend_from_slice(&s.terms.to_le_bytes());
    for v in s.pugh {
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads one record (record number `i`, for errors) laid out for `config`; `with_sites`
/// for version 3.
pub(crate) fn decode_record(
    r: &mut Cursor<'_>,
    config: &SketchConfig,
    with_sites: bool,
    i: u64,
) -> Result<(String, Option<String>, Sketch)> {
    let ss = config.supershingles;
    let words = config.charikar_bits / 64;
    let pw = config.pugh.map_or(0, |p| p.width());
    let idlen = r.u32()? as usize;
    let id = std::str::from_utf8(r.bytes(idlen)?)
        .map_err(|_| r.error(format!("record {i}: id is not UTF-8")))?
        .to_string();
    let site = match with_sites.then(|| r.u32()).transpose()? {
        None | Some(u32::MAX) => None,
        Some(len) => Some(
            std::str::from_utf8(r.bytes(len as usize)?)
                .map_err(|_| r.error(format!("record {i}: site is not UTF-8")))?
                .to_string(),
        ),
    };
    let mut vals = Vec::with_capacity(ss + words);
    for _ in 0..ss + words {
        vals.push(r.u64()?);
    }
    let simhash = r.u64()?;
    let exact = r.u128()?;
    let terms = r.u32()?;
    let mut pugh = Vec::with_capacity(pw);
    for _ in 0..pw {
        pugh.push(r.u64()?);
    }
    let charikar = vals.split_off(ss);
    Ok((
        id,
        site,
        Sketch {
            supershingles: vals,
            charikar,
            simhash,
            exact,
            terms,
            pugh,
        },
    ))
}
