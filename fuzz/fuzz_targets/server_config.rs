//! `server.toml` (`gpdp_server::Config::load`, what `gpdp serve --config`
//! reads): any file gives a configuration or a configuration error, never a
//! panic; an accepted one has every limit ≥ 1 (max_grid ≥ 2), its state and
//! ledger under the file's folder, and a refused one's message names the file.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use gpdp_server::{Config, ServerError};
use libfuzzer_sys::fuzz_target;

/// This process's configuration file (rewritten for every input).
fn file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("gpdp-fuzz-server-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("server.toml")
    })
}

fuzz_target!(|bytes: &[u8]| {
    let path = file();
    std::fs::write(path, bytes).unwrap();
    match Config::load(path) {
        Ok(c) => {
            assert!(c.max_batch >= 1 && c.max_body_bytes >= 1 && c.max_revealed >= 1 && c.max_grid >= 2);
            let dir = path.parent().unwrap();
            assert!(c.state.starts_with(dir) || c.state.is_absolute(), "{}", c.state.display());
            if let Some(l) = &c.ledger {
                assert!(l.starts_with(dir) || l.is_absolute(), "{}", l.display());
            }
        }
        Err(ServerError::Config(m)) => assert!(m.contains(&path.display().to_string()), "{m}"),
        Err(e) => panic!("not a configuration error: {e:?}"),
    }
});
