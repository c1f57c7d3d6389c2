#![no_main]
//! Any text as the CLI's TOML configuration is an error or a pipeline, never a panic.
use libfuzzer_sys::fuzz_target;
use neardup_cli::config::Params;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = Params::from_toml(text) {
        let _ = p.boilerplate();
        if let Ok((b, _)) = p.builder() {
            let _ = b.build();
        }
    }
});
