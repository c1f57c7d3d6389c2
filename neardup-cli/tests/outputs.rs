//! Output paths that are not regular files: a FIFO is written in place (its reader gets
//! the bytes), a character device stays a device, a symlink stays a link and its target
//! gets the bytes — for every output flag of `dedup` and for index files. Only paths in a
//! temporary directory are used (never the machine's /dev/null).
#![cfg(unix)]
mod common;
use common::bin;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const FLAGS: [&str; 7] = [
    "-o",
    "--clusters",
    "--pairs",
    "--rejects",
    "--report",
    "--mirrors",
    "--save-sketches",
];

/// The bytes `flag` writes for the demo corpus into a regular file.
fn reference(dir: &Path, flag: &str) -> Vec<u8> {
    let p = dir.join(format!("ref{}", flag.trim_start_matches('-')));
    let out = bin().args(["dedup", "-q", flag]).arg(&p).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(p).unwrap()
}

fn run_into(flag: &str, path: &Path) {
    let out = bin()
        .args(["dedup", "-q", flag])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{flag}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The report carries timings: compare its accounting; every other output byte for byte.
fn same(flag: &str, got: &[u8], want: &[u8]) {
    if flag == "--report" {
        let accounting = |b: &[u8]| {
            serde_json::from_slice::<serde_json::Value>(b).unwrap()["accounting"].clone()
        };
        assert!(accounting(want).is_object());
        assert_eq!(accounting(got), accounting(want));
    } else {
        assert_eq!(got, want, "{flag}");
    }
}

#[test]
fn a_symlink_stays_a_link_and_its_target_gets_the_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    for flag in FLAGS {
        let want = reference(dir.path(), flag);
        let target = dir
            .path()
            .join("real")
            .join(format!("t{}", flag.trim_start_matches('-')));
        std::fs::write(&target, "old").unwrap();
        let link = dir
            .path()
            .join(format!("link{}", flag.trim_start_matches('-')));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        run_into(flag, &link);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{flag}"
        );
        same(flag, &std::fs::read(&target).unwrap(), &want);
    }
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    for flag in FLAGS {
        let want = reference(dir.path(), flag);
        let fifo: PathBuf = dir
            .path()
            .join(format!("fifo{}", flag.trim_start_matches('-')));
        let made = Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available here");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        run_into(flag, &fifo);
        let got = reader.join().unwrap();
        assert!(
            std::fs::metadata(&fifo).unwrap().file_type().is_fifo(),
            "{flag}"
        );
        same(flag, &got, &want);
    }
}

#[test]
fn a_character_device_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("null");
    // The null device (1, 3), made in the temporary directory.
    let made = Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "3"])
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mknod is not permitted here");
        return;
    }
    for flag in FLAGS {
        run_into(flag, &dev);
        let m = std::fs::metadata(&dev).unwrap();
        assert!(m.file_type().is_char_device(), "{flag} replaced the device");
    }
    // Index files too.
    let fps = dir.path().join("fps.txt");
    std::fs::write(&fps, "1 00000000000000ff\n2 0000000000000fff\n").unwrap();
    let out = bin()
        .args(["index", "build"])
        .arg(&fps)
        .arg("-o")
        .arg(&dev)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::metadata(&dev)
        .unwrap()
        .file_type()
        .is_char_device());
}
