//! The `neardup` binary; everything is in the `neardup_cli` library.

fn main() {
    std::process::exit(neardup_cli::run());
}
