//! Directory inputs: every `.txt`, `.html` and `.htm` file, recursively, in sorted path
//! order.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

pub(super) fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ft.is_dir() {
            walk(root, &path, out)?;
        } else {
            let lower = path.to_string_lossy().to_ascii_lowercase();
            if lower.ends_with(".txt") || lower.ends_with(".html") || lower.ends_with(".htm") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                out.push((path, rel));
            }
        }
    }
    Ok(())
}
