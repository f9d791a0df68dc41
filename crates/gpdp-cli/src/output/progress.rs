//! A spinner on stderr for the long steps of a release (hidden when stderr
//! is not a terminal, or with `--quiet`).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Shows the current step and the time spent in it.
pub struct Spinner {
    bar: ProgressBar,
}

impl Spinner {
    /// A spinner on stderr; drawn only when stderr is a terminal and not `quiet`.
    pub fn new(quiet: bool) -> Self {
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"));
        bar.enable_steady_tick(Duration::from_millis(200));
        Spinner { bar }
    }

    /// Starts a step (also from the CLI itself, e.g. writing the outputs).
    pub fn set(&self, what: &str) {
        self.bar.reset_elapsed();
        self.bar.set_message(what.to_string());
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl gpdp::Progress for Spinner {
    fn step(&self, what: &str) {
        self.set(what);
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
