//! Reading a trace into a model, with a progress spinner on stderr when stderr is a
//! terminal and the read takes more than a second.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use kairos_analyze::{Builder, Model, Options};
use kairos_trace::read::TraceSet;

pub fn load(path: &Path, options: Options) -> anyhow::Result<Model> {
    let set = TraceSet::open(path)?;
    let mut events = set.events()?;
    let mut builder = Builder::new(options);
    let started = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let mut n: u64 = 0;
    for item in events.by_ref() {
        match item {
            Ok(ev) => builder.event(&ev),
            Err(e) => {
                eprintln!("kairos: error: {e}");
                builder.read_error(e.to_string());
            }
        }
        n += 1;
        if n % 65_536 == 0 && terminal {
            if bar.is_none() && started.elapsed() > Duration::from_secs(1) {
                let b = ProgressBar::new_spinner();
                b.set_style(
                    ProgressStyle::with_template("{spinner} reading {msg} ({elapsed})")
                        .expect("a valid template"),
                );
                bar = Some(b);
            }
            if let Some(b) = &bar {
                b.set_message(format!("{n} events"));
                b.tick();
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(builder.finish(events.discarded(), events.backwards()))
}
