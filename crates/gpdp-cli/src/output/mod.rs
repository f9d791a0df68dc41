//! What the commands write: files and directories that appear whole or not
//! at all ([`files`]), the release folder ([`release`]), figures ([`plot`])
//! and human-readable privacy reports ([`report`]).

pub mod files;
pub mod gis;
pub mod plot;
pub mod progress;
pub mod release;
pub mod report;
