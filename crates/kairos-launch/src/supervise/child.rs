//! Starting a process and reading its output: one thread waits for it, one per stream
//! forwards its lines, labelled, to the terminal or its log file.

use super::*;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;

pub(super) fn start(
    slot: &mut Slot,
    index: usize,
    options: &Options,
    tx: &mpsc::Sender<Event>,
) -> Result<u32, String> {
    let spec = &slot.spec;
    let mut command = Command::new(&spec.program);
    // Each process in a group of its own: the terminal's Ctrl-C reaches the launcher
    // only, and each process gets exactly one SIGINT, from the launcher (a kairos process
    // takes a second SIGINT as "exit at once", skipping its clean shutdown).
    command.process_group(0);
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // prctl(2), which is async-signal-safe; it allocates nothing and touches no lock.
    // PR_SET_PDEATHSIG makes the kernel send SIGTERM to the process if the launcher dies
    // (even by SIGKILL): a kairos process then shuts down as on Ctrl-C.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.args(&spec.args).stdin(Stdio::null());
    // With emulate_tty, the launcher keeps the terminals' reading ends; the child gets
    // the other ends (dropped here once it is spawned, so its exit ends the reading).
    let terminals = if spec.emulate_tty {
        let (out, out_child) = terminal().map_err(|e| format!("emulate_tty: {e}"))?;
        let (err, err_child) = terminal().map_err(|e| format!("emulate_tty: {e}"))?;
        command.stdout(out_child).stderr(err_child);
        Some((out, err))
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        None
    };
    if spec.env_only {
        command.env_clear();
    } else {
        for (name, value) in &options.env {
            command.env(name, value);
        }
    }
    if let Some(trace) = &options.trace {
        command.env("KAIROS_TRACE", trace);
    }
    for (name, value) in &spec.env {
        command.env(name, value);
    }
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("{}: {e}", spec.program.display()))?;
    // The child's ends of the terminals are the child's alone now.
    drop(command);
    let pid = child.id();
    slot.generation += 1;
    slot.started += 1;
    slot.pid = Some(pid);
    slot.exit = None;
    slot.stage = Stage::Running;
    slot.state_at_deadline = None;
    let label = if slot.started > 1 {
        format!("{} (restart {})", spec.label, slot.started - 1)
    } else {
        spec.label.clone()
    };
    announce(&spec.label, &format!("process started with pid [{pid}]"));
    let log = match spec.output {
        Output::Screen => None,
        Output::Log | Output::Both => {
            std::fs::create_dir_all(&options.log_dir).map_err(|e| {
                format!(
                    "cannot create the log folder {}: {e}",
                    options.log_dir.display()
                )
            })?;
            let path = options.log_dir.join(format!("{}.log", spec.label));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            Some(Arc::new(Mutex::new(file)))
        }
    };
    let screen = spec.output != Output::Log;
    let io = slot.io.then(|| (tx.clone(), index));
    // Each reader holds a clone of `drained` until its stream ends: the exit is reported
    // after the process's last lines (an exit handler sees all it printed).
    let (drained, all_read) = mpsc::channel::<()>();
    let (out, err): (Option<Stream>, Option<Stream>) = match terminals {
        Some((out, err)) => (Some(Box::new(out)), Some(Box::new(err))),
        None => (
            child.stdout.take().map(|o| Box::new(o) as Stream),
            child.stderr.take().map(|e| Box::new(e) as Stream),
        ),
    };
    if let Some(out) = out {
        let sink = Sink {
            label: label.clone(),
            is_stderr: false,
            screen,
            log: log.clone(),
            recent: slot.recent.clone(),
            io: io.clone(),
            _drained: drained.clone(),
        };
        pipe(out, sink);
    }
    if let Some(err) = err {
        let sink = Sink {
            label,
            is_stderr: true,
            screen,
            log,
            recent: slot.recent.clone(),
            io,
            _drained: drained,
        };
        pipe(err, sink);
    }
    let tx = tx.clone();
    let generation = slot.generation;
    std::thread::spawn(move || {
        let status = child.wait();
        // Its output ends with it, unless a process it left behind holds the pipes: then
        // the exit is reported after OUTPUT_GRACE without the rest.
        let _ = all_read.recv_timeout(OUTPUT_GRACE);
        let _ = tx.send(Event::Exited {
            slot: index,
            generation,
            status,
        });
    });
    Ok(pid)
}

/// One output stream of a process: a pipe, or a terminal's reading end.
type Stream = Box<dyn Read + Send>;

/// A pseudo-terminal: the launcher's end (read; a read after the child's end has closed
/// fails, which ends the reading as an end of file does) and the child's end.
fn terminal() -> std::io::Result<(std::fs::File, std::fs::File)> {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use std::os::unix::fs::OpenOptionsExt;
    let ours = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&ours)?;
    unlockpt(&ours)?;
    let name = ptsname(&ours, Vec::new())?;
    let theirs = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(std::ffi::OsStr::from_bytes(name.as_bytes()))?;
    Ok((std::fs::File::from(ours), theirs))
}

/// Where the lines of one output stream of a process go.
pub(super) struct Sink {
    label: String,
    is_stderr: bool,
    /// The terminal, prefixed with the label.
    screen: bool,
    /// The process's log file.
    log: Option<Arc<Mutex<std::fs::File>>>,
    /// What its stop report may quote.
    recent: Arc<Mutex<Recent>>,
    /// The supervisor, for the driver (`OnProcessIO`), with the process's slot.
    io: Option<(mpsc::Sender<Event>, usize)>,
    /// Dropped when the stream ends.
    _drained: mpsc::Sender<()>,
}

/// How long after a process exits its exit waits for the rest of its output.
pub(super) const OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// Copies `stream` line by line to where `sink` says.
pub(super) fn pipe(stream: impl std::io::Read + Send + 'static, sink: Sink) {
    std::thread::spawn(move || {
        // The whole sink, not only the fields used below (a closure captures fields
        // apart): `_drained` must live until the stream ends.
        let sink = sink;
        let mut reader = BufReader::new(stream);
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match reader.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            sink.recent
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(line);
            if sink.screen {
                let text = format!("[{}] {line}\n", sink.label);
                if sink.is_stderr {
                    let _ = std::io::stderr().lock().write_all(text.as_bytes());
                } else {
                    let _ = std::io::stdout().lock().write_all(text.as_bytes());
                }
            }
            if let Some(file) = &sink.log {
                let mut file = file.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = writeln!(file, "{line}");
            }
            if let Some((tx, slot)) = &sink.io {
                let _ = tx.send(Event::Io {
                    slot: *slot,
                    stderr: sink.is_stderr,
                    text: line.to_owned(),
                });
            }
        }
    });
}
