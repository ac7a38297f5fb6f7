//! Reading a trace into a model, and the progress spinner every long read shows on
//! stderr: only when stderr is a terminal, and only after the first second.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use kairos_analyze::{Builder, Model, Options};
use kairos_trace::read::{Notice, TraceSet};

/// Counts events read and shows a spinner once a read has lasted a second.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    started: Instant,
    bar: Option<ProgressBar>,
    events: u64,
}

impl Progress {
    /// `enabled` is false when a spinner would garble other output (e.g. stdout is the
    /// same terminal); the spinner also stays off when stderr is not a terminal.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled: enabled && std::io::stderr().is_terminal(),
            started: Instant::now(),
            bar: None,
            events: 0,
        }
    }

    pub fn event(&mut self) {
        self.events += 1;
        if !self.enabled || self.events % 65_536 != 0 {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() > Duration::from_secs(1) {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} reading: {msg} ({elapsed})")
                    .expect("a valid template"),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{} events", self.events));
            bar.tick();
        }
    }

    /// Clears the spinner before anything else is printed to stderr.
    pub fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

pub fn load(path: &Path, options: Options) -> anyhow::Result<Model> {
    let set = TraceSet::open(path)?;
    let mut events = set.events_with(Builder::selection())?;
    let mut builder = Builder::new(options);
    let mut progress = Progress::new(true);
    while let Some(item) = events.next() {
        match item {
            Ok(ev) => builder.event(&ev),
            Err(e) => {
                progress.suspend(|| eprintln!("kairos: error: {e}"));
                builder.read_error(e.to_string());
            }
        }
        // Discards and backward steps are counted in the model; a clock overflow
        // changes every timestamp after it, so it is said at once (once per clock).
        for n in events.take_notices() {
            if matches!(n, Notice::ClockOverflow { .. }) {
                progress.suspend(|| eprintln!("kairos: warning: {n}"));
            }
        }
        progress.event();
    }
    progress.finish();
    Ok(builder.finish(events.discarded(), events.backwards()))
}
