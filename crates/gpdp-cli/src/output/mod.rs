//! What the commands write: files and directories that appear whole or not
//! at all ([`files`]), the release folder ([`release`]), figures ([`plot`]),
//! human-readable privacy reports ([`report`]) and what the exit status
//! says ([`outcome`]).

pub mod files;
pub mod gis;
pub mod outcome;
pub mod plot;
pub mod progress;
pub mod release;
pub mod report;
