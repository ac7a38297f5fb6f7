//! Reading a trace into a model, and the progress bar every long read shows on stderr:
//! bytes of the trace's stream files read out of their total, with the events so far,
//! only when stderr is a terminal, and only once the read has lasted a second.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use kairos_analyze::{Builder, Digest, Model, Options};
use kairos_trace::read::{Events, Notice, TraceSet};

/// Events between two looks at the clock: cheap enough per event, often enough to
/// draw the bar smoothly.
const CHECK_EVERY: u64 = 65_536;

/// Counts events read and shows a progress bar once a read has lasted a second.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    started: Instant,
    bar: Option<ProgressBar>,
    total_bytes: u64,
    events: u64,
}

/// How long a read goes before the bar shows: a second, or `KAIROS_PROGRESS_AFTER_MS`
/// (tests set it to 0 to see the bar on a short read).
fn show_after() -> Duration {
    std::env::var("KAIROS_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

impl Progress {
    /// `enabled` is false when a bar would garble other output (e.g. stdout is the
    /// same terminal); the bar also stays off when stderr is not a terminal.
    /// `total_bytes` is the size of the stream files being read.
    pub fn new(enabled: bool, total_bytes: u64) -> Self {
        Self {
            enabled: enabled && std::io::stderr().is_terminal(),
            started: Instant::now(),
            bar: None,
            total_bytes,
            events: 0,
        }
    }

    /// Counts one event; every [`CHECK_EVERY`] events, shows or moves the bar.
    pub fn event(&mut self, events: &Events) {
        self.events += 1;
        if !self.enabled || self.events % CHECK_EVERY != 0 {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() > show_after() {
            let bar = ProgressBar::new(self.total_bytes.max(1));
            bar.set_style(
                ProgressStyle::with_template(
                    "reading {bar:30} {bytes}/{total_bytes} ({msg}, {elapsed}, {eta} left)",
                )
                .expect("a valid template"),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(events.bytes_read().min(self.total_bytes));
            bar.set_message(format!("{} events", self.events));
        }
    }

    /// Clears the bar before anything else is printed to stderr.
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

/// Reads a whole trace into a model (`options` says what it keeps).
pub fn load(path: &Path, options: Options) -> anyhow::Result<Model> {
    Ok(read(path, Builder::new(options))?.0)
}

/// Reads a trace through the streaming analyses: the model holds the trace's objects
/// and counts, `digest` everything the analyses need, in memory flat in trace length.
pub fn load_streaming(path: &Path, digest: Digest) -> anyhow::Result<(Model, Digest)> {
    let (m, digest) = read(path, Builder::streaming(digest))?;
    let digest = digest.expect("a streaming builder returns its digest");
    if digest.never_reached > 0 {
        eprintln!(
            "kairos: note: {} message deliveries were taken or queued but no callback started \
             for them (by the end of the trace, or within {} s of trace time); they end no chain",
            digest.never_reached,
            kairos_analyze::build::HORIZON_NS / 1_000_000_000
        );
    }
    if digest.retired_early > 0 {
        eprintln!(
            "kairos: note: more than {} messages were in flight at once; {} message trees were \
             closed before they were quiet",
            kairos_analyze::build::MAX_LIVE,
            digest.retired_early
        );
    }
    Ok((m, digest))
}

fn read(path: &Path, mut builder: Builder) -> anyhow::Result<(Model, Option<Digest>)> {
    let mut set = TraceSet::open(path)?;
    // Traces from several hosts: their clocks are brought onto one time line first.
    builder.clock_offsets(kairos_analyze::build::synchronize(&mut set)?);
    let mut events = set.events_with(Builder::selection())?;
    let mut progress = Progress::new(true, set.stream_bytes());
    while let Some(item) = events.next_ref() {
        match item {
            Ok(ev) => builder.event_ref(ev),
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
        progress.event(&events);
    }
    progress.finish();
    builder.discarded_packets(events.discarded_packets());
    Ok(builder.finish_streaming(events.discarded(), events.backwards()))
}
