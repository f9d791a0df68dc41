//! What the exit status of `gpdp` says (documented in `gpdp release --help`):
//!
//! | status | meaning |
//! |---|---|
//! | 0 | done: every output written |
//! | 1 | refused or failed: nothing was published (a ledger reservation made before the failure stays counted) |
//! | 2 | the command line did not parse |
//! | 3 | the release WAS published, but a later step (recording it in the ledger, the operator log, printing the report) failed |
//! | 128 + n | interrupted by signal n (SIGINT 130, SIGTERM 143): partial output removed, nothing published |

use std::path::PathBuf;

/// The exit status of a run that published its release and then failed.
pub const EXIT_PUBLISHED_THEN_FAILED: u8 = 3;

/// A failure after the release was published: the folder is in place (and,
/// with a ledger, the release is counted), so running the command again
/// would make a second release of the data. `main` exits with
/// [`EXIT_PUBLISHED_THEN_FAILED`] and this message.
#[derive(Debug)]
pub struct PublishedThenFailed {
    /// The published folder.
    pub out: PathBuf,
    /// What the ledger knows of the release, e.g. "ledger entry #4 of 'pm25', committed".
    pub ledger: Option<String>,
    /// The step that failed, e.g. "writing the operator log --log run.json".
    pub step: String,
    /// Why it failed.
    pub cause: anyhow::Error,
}

impl std::fmt::Display for PublishedThenFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ledger = self.ledger.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
        write!(
            f,
            "the release WAS published in {}{ledger}, but {} failed: {:#} — do not run the release again (that would release the data a second time); fix the cause and finish the step by hand",
            self.out.display(),
            self.step,
            self.cause
        )
    }
}

impl std::error::Error for PublishedThenFailed {}

/// The exit status for a command's error: [`EXIT_PUBLISHED_THEN_FAILED`]
/// after publishing, else 1.
pub fn exit_status(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<PublishedThenFailed>().is_some() { EXIT_PUBLISHED_THEN_FAILED } else { 1 }
}
