//! `kairos trace dump`: every event as one line of babeltrace2-style text.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use kairos_trace::read::{TraceSet, text};

use super::load::Progress;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A trace folder, or a folder of traces such as an LTTng session folder.
    pub trace: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let set = TraceSet::open(&args.trace)?;
    let mut events = set.events()?;
    let stdout = std::io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let mut line = String::with_capacity(512);
    let mut damaged = false;
    // A progress bar only when the events go elsewhere than the terminal.
    let mut progress = Progress::new(!std::io::stdout().is_terminal(), set.stream_bytes());
    while let Some(item) = events.next() {
        match item {
            Ok(ev) => {
                line.clear();
                text::write_event(&mut line, &ev);
                line.push('\n');
                if let Err(e) = out.write_all(line.as_bytes()) {
                    if e.kind() == std::io::ErrorKind::BrokenPipe {
                        return Ok(ExitCode::SUCCESS);
                    }
                    return Err(e.into());
                }
            }
            Err(e) => {
                damaged = true;
                out.flush()?;
                progress.suspend(|| eprintln!("kairos: error: {e}"));
            }
        }
        for notice in events.take_notices() {
            out.flush()?;
            progress.suspend(|| eprintln!("kairos: warning: {notice}"));
        }
        progress.event(&events);
    }
    progress.finish();
    if let Err(e) = out.flush()
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(if damaged {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
