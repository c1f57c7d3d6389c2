//! The library has no command-line dependencies: `cargo tree -p neardup -e normal`
//! (what a user of the library compiles) lists none of clap, indicatif, anyhow. (It
//! reads the settings file itself, `settings::Params::from_toml`, for every front end:
//! `toml` is a dependency of the library.)

use std::process::Command;

#[test]
fn the_library_depends_on_no_cli_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "-p",
            "neardup",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"neardup"), "{tree}");
    assert!(
        crates.contains(&"rayon"),
        "the tree lists dependencies: {tree}"
    );
    for banned in ["clap", "indicatif", "anyhow"] {
        assert!(
            !crates.contains(&banned),
            "the library depends on {banned}:\n{tree}"
        );
    }
}
