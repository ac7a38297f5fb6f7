//! Running the processes of a launch, and stopping them on time.
//!
//! What this module promises:
//! - Every process's output reaches the terminal line by line, prefixed with its label
//!   (`[talker-1] ...`), as `ros2 launch` prints it; `output: log` writes a file instead.
//! - A stop (Ctrl-C, SIGTERM to the launcher, or the exit of a process marked
//!   `on_exit: shutdown`) sends SIGINT to every process at once; a process still alive
//!   after `sigterm_timeout` gets SIGTERM, one still alive `sigkill_timeout` later gets
//!   SIGKILL. A second Ctrl-C sends SIGKILL at once. The stop therefore ends by
//!   `sigterm_timeout + sigkill_timeout` (plus the kernel's reaping), whatever the
//!   processes do: stuck in a callback, ignoring SIGINT, stopped with SIGSTOP.
//! - The stop report names each process that did not stop by its deadline, what the
//!   kernel said it was doing (`/proc/PID/stat`: stopped by a signal, sleeping, ...) and
//!   the lines its own shutdown report printed (a kairos process prints what its
//!   executors were still running).
//!
//! Ground rules: one thread per child waits for it and one per output stream reads it;
//! they report to the supervisor's channel and nothing else. Only the supervisor sends
//! signals, and only to a process whose exit it has not yet been told of.

use crate::description::{Output, ProcessSpec};
use crate::driver::{Driver, Notice, Request};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How a launch is stopped, and where its processes write.
#[derive(Debug, Clone)]
pub struct Options {
    /// After SIGINT, how long a process may take to exit before it gets SIGTERM.
    pub sigterm_timeout: Duration,
    /// After SIGTERM, how long before SIGKILL.
    pub sigkill_timeout: Duration,
    /// `KAIROS_TRACE` for every process.
    pub trace: Option<PathBuf>,
    /// Where `output: log` files go.
    pub log_dir: PathBuf,
    /// Environment for every process (before each entity's own).
    pub env: Vec<(String, String)>,
}

/// The launcher's exit status.
pub mod status {
    /// Every process ended by itself with success, or stopped on SIGINT in time.
    pub const CLEAN: u8 = 0;
    /// A process had to be stopped with SIGTERM or SIGKILL.
    pub const ESCALATED: u8 = 1;
    /// The launch file or its arguments are wrong; nothing was started.
    pub const BAD_LAUNCH: u8 = 2;
    /// A process ended with a failure by itself (or could not be started).
    pub const PROCESS_FAILED: u8 = 3;
}

enum Event {
    Exited {
        slot: usize,
        generation: u64,
        status: std::io::Result<ExitStatus>,
    },
    Signal(i32),
    /// A line of a process whose driver asked for its output.
    Io {
        slot: usize,
        stderr: bool,
        text: String,
    },
    /// A request of the launch file's driver; `None` when the driver has ended.
    Driver(Option<Request>),
}

/// Lines a process printed that its stop report may quote.
#[derive(Default)]
struct Recent {
    /// Its `kairos:` lines (shutdown reports), the latest few.
    kairos: VecDeque<String>,
    /// Any lines, the latest few.
    any: VecDeque<String>,
}

const RECENT: usize = 4;

impl Recent {
    fn push(&mut self, line: &str) {
        let keep = |q: &mut VecDeque<String>| {
            if q.len() == RECENT {
                q.pop_front();
            }
            q.push_back(line.to_owned());
        };
        if line.starts_with("kairos:") {
            keep(&mut self.kairos);
        }
        keep(&mut self.any);
    }
}

/// How a process's stop went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Running,
    /// Sent SIGINT; then SIGTERM; then SIGKILL.
    Interrupted,
    Terminated,
    Killed,
}

struct Slot {
    spec: ProcessSpec,
    pid: Option<u32>,
    generation: u64,
    started: u64,
    stage: Stage,
    /// What `/proc/PID/stat` said when a deadline passed with it alive.
    state_at_deadline: Option<String>,
    exit: Option<(ExitStatus, Instant)>,
    spawn_error: Option<String>,
    respawn_at: Option<Instant>,
    recent: Arc<Mutex<Recent>>,
    /// The driver's name for it, when a driver asked for it.
    driver_id: Option<u64>,
    /// Whether its lines go to the driver too.
    io: bool,
}

impl Slot {
    fn new(spec: ProcessSpec, driver_id: Option<u64>, io: bool) -> Slot {
        Slot {
            spec,
            pid: None,
            generation: 0,
            started: 0,
            stage: Stage::Running,
            state_at_deadline: None,
            exit: None,
            spawn_error: None,
            respawn_at: None,
            recent: Arc::default(),
            driver_id,
            io,
        }
    }
}

/// `base-N` for the next process named `base`, as `ros2 launch` numbers them.
fn label_for(slots: &[Slot], base: &str) -> String {
    let taken = slots
        .iter()
        .filter(|s| {
            s.spec
                .label
                .rsplit_once('-')
                .is_some_and(|(b, n)| b == base && n.parse::<u64>().is_ok())
        })
        .count();
    format!("{base}-{}", taken + 1)
}

/// Runs `specs` until they have all ended or a stop has ended them; the exit status is
/// one of [`status`].
pub fn run(specs: Vec<ProcessSpec>, options: &Options) -> u8 {
    let slots = specs
        .into_iter()
        .map(|s| Slot::new(s, None, false))
        .collect();
    supervise(slots, options, None)
}

/// Runs a launch whose file has a driver (a Python launch file): `first` are the
/// requests of its first evaluation; later ones come as the launch runs. The launch ends
/// when no process runs and the driver has no work pending, or when a stop has ended it.
pub fn run_driven(mut driver: Driver, first: Vec<Request>, options: &Options) -> u8 {
    let (tx, rx) = mpsc::channel();
    for request in first {
        let _ = tx.send(Event::Driver(Some(request)));
    }
    driver.forward(tx.clone(), Event::Driver);
    let status = supervise_events(Vec::new(), options, Some(&driver), tx, rx);
    driver.finish();
    status
}

fn supervise(slots: Vec<Slot>, options: &Options, driver: Option<&Driver>) -> u8 {
    let (tx, rx) = mpsc::channel();
    supervise_events(slots, options, driver, tx, rx)
}

fn supervise_events(
    mut slots: Vec<Slot>,
    options: &Options,
    driver: Option<&Driver>,
    tx: mpsc::Sender<Event>,
    rx: mpsc::Receiver<Event>,
) -> u8 {
    watch_signals(tx.clone());
    // Notices sent to the driver, and handled by it (as it last said).
    let sent = std::cell::Cell::new(0u64);
    let mut seen = 0u64;
    let notify = |notice: Notice| {
        if let Some(driver) = driver
            && driver.notify(notice)
        {
            sent.set(sent.get() + 1);
        }
    };
    // A driver's first requests are handled before the loop looks at whether anything runs.
    let mut driver_busy = driver.is_some();
    let mut stop: Option<(String, Instant)> = None;
    for (index, slot) in slots.iter_mut().enumerate() {
        if let Err(err) = start(slot, index, options, &tx) {
            announce(&slot.spec.label, &format!("could not start: {err}"));
            slot.spawn_error = Some(err);
            stop = Some(("a process could not be started".into(), Instant::now()));
            break;
        }
    }
    if let Some((_, at)) = &stop {
        begin_stop(&mut slots, *at);
    }
    loop {
        let alive = slots
            .iter()
            .filter(|s| s.pid.is_some() && s.exit.is_none())
            .count();
        let respawning = stop.is_none() && slots.iter().any(|s| s.respawn_at.is_some());
        // A driver with notices to handle (an exit, the stop) is waited for, on a stop
        // too (its OnShutdown handlers), but never past the stop's bound below.
        let driving = seen < sent.get() || (stop.is_none() && driver_busy);
        if alive == 0 && !respawning && !driving {
            break;
        }
        let now = Instant::now();
        // Every turn, whatever woke it: a deadline that passed while events came in is
        // acted on now, in order (SIGTERM before SIGKILL).
        match &stop {
            Some((_, at)) => {
                escalate(&mut slots, *at, now, options);
                if now >= *at + options.sigterm_timeout + options.sigkill_timeout + REAP_GRACE {
                    break;
                }
            }
            None => {
                for (index, slot) in slots.iter_mut().enumerate() {
                    if slot.respawn_at.is_some_and(|t| t <= now) {
                        slot.respawn_at = None;
                        match start(slot, index, options, &tx) {
                            Err(err) => {
                                announce(&slot.spec.label, &format!("could not restart: {err}"))
                            }
                            Ok(pid) => {
                                if let Some(id) = slot.driver_id {
                                    notify(Notice::Started { id, pid });
                                }
                            }
                        }
                    }
                }
            }
        }
        let next = next_deadline(&slots, stop.as_ref().map(|(_, at)| *at), options);
        let event = match next {
            Some(at) if at <= now => None,
            Some(at) => match rx.recv_timeout(at - now) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(event) => Some(event),
                Err(_) => break,
            },
        };
        match event {
            Some(Event::Signal(signal)) => match &stop {
                None => {
                    let name = if signal == libc::SIGTERM {
                        "SIGTERM"
                    } else {
                        "Ctrl-C"
                    };
                    let at = Instant::now();
                    announce(
                        "launch",
                        &format!(
                            "{name}: stopping every process (SIGINT now, SIGTERM after {:.1} s, SIGKILL {:.1} s later)",
                            options.sigterm_timeout.as_secs_f64(),
                            options.sigkill_timeout.as_secs_f64()
                        ),
                    );
                    stop = Some((name.into(), at));
                    begin_stop(&mut slots, at);
                    notify(Notice::Shutdown {
                        reason: name.into(),
                    });
                }
                Some(_) => {
                    announce("launch", "signal again: SIGKILL to every process now");
                    for slot in &mut slots {
                        send(slot, libc::SIGKILL, Stage::Killed);
                    }
                }
            },
            Some(Event::Exited {
                slot: index,
                generation,
                status,
            }) => {
                let slot = &mut slots[index];
                if generation != slot.generation {
                    continue;
                }
                let status = match status {
                    Ok(status) => status,
                    Err(err) => {
                        announce(
                            &slot.spec.label,
                            &format!("lost track of the process: {err}"),
                        );
                        continue;
                    }
                };
                slot.exit = Some((status, Instant::now()));
                report_exit(slot, status);
                if let Some(id) = slot.driver_id {
                    use std::os::unix::process::ExitStatusExt;
                    notify(Notice::Exited {
                        id,
                        code: status.code(),
                        signal: status.signal(),
                    });
                }
                if stop.is_some() {
                    continue;
                }
                if slot.spec.required {
                    let reason = format!("{} exited (on_exit: shutdown)", slot.spec.label);
                    announce("launch", &format!("{reason}: stopping every process"));
                    let at = Instant::now();
                    notify(Notice::Shutdown {
                        reason: reason.clone(),
                    });
                    stop = Some((reason, at));
                    begin_stop(&mut slots, at);
                } else if slot.spec.respawn {
                    slot.respawn_at = Some(Instant::now() + slot.spec.respawn_delay);
                }
            }
            Some(Event::Io {
                slot: index,
                stderr,
                text,
            }) => {
                if let Some(id) = slots[index].driver_id {
                    notify(Notice::Io { id, stderr, text });
                }
            }
            Some(Event::Driver(None)) => {
                driver_busy = false;
                seen = sent.get();
            }
            Some(Event::Driver(Some(request))) => match request {
                Request::Start { id, mut spec, io } => {
                    if let Some((reason, _)) = &stop {
                        announce(
                            "launch",
                            &format!(
                                "not starting {} ({}): the launch is stopping ({reason})",
                                spec.label, spec.origin
                            ),
                        );
                        continue;
                    }
                    spec.label = label_for(&slots, &spec.label);
                    let index = slots.len();
                    slots.push(Slot::new(spec, Some(id), io));
                    let slot = &mut slots[index];
                    match start(slot, index, options, &tx) {
                        Ok(pid) => notify(Notice::Started { id, pid }),
                        Err(err) => {
                            announce(&slot.spec.label, &format!("could not start: {err}"));
                            slot.spawn_error = Some(err);
                            let at = Instant::now();
                            let reason = "a process could not be started".to_owned();
                            notify(Notice::Shutdown {
                                reason: reason.clone(),
                            });
                            stop = Some((reason, at));
                            begin_stop(&mut slots, at);
                        }
                    }
                }
                Request::Shutdown { reason } => {
                    if stop.is_none() {
                        let reason = format!("the launch file asked to shut down ({reason})");
                        announce("launch", &format!("{reason}: stopping every process"));
                        let at = Instant::now();
                        notify(Notice::Shutdown {
                            reason: reason.clone(),
                        });
                        stop = Some((reason, at));
                        begin_stop(&mut slots, at);
                    }
                }
                Request::Signal { id, signal } => {
                    if let Some(slot) = slots.iter_mut().find(|s| s.driver_id == Some(id)) {
                        let stage = slot.stage;
                        send(slot, signal, stage);
                    }
                }
                Request::Log { text } => announce("launch.user", &text),
                Request::Busy {
                    busy,
                    seen: handled,
                } => {
                    driver_busy = busy;
                    seen = handled;
                }
                Request::Ready => {}
                Request::Error(err) => {
                    announce("launch", &format!("error: {err}"));
                    if stop.is_none() {
                        let reason = "the launch file failed".to_owned();
                        let at = Instant::now();
                        notify(Notice::Shutdown {
                            reason: reason.clone(),
                        });
                        stop = Some((reason, at));
                        begin_stop(&mut slots, at);
                    }
                }
            },
            None => {}
        }
    }
    match &stop {
        Some((reason, at)) => print_stop_report(&slots, reason, *at, options),
        None => exit_status(&slots),
    }
}

/// How long after SIGKILL the supervisor waits for the kernel to reap a process.
const REAP_GRACE: Duration = Duration::from_secs(2);

fn next_deadline(slots: &[Slot], stop: Option<Instant>, options: &Options) -> Option<Instant> {
    match stop {
        Some(at) => {
            let term = at + options.sigterm_timeout;
            let kill = term + options.sigkill_timeout;
            let now = Instant::now();
            [term, kill, kill + REAP_GRACE]
                .into_iter()
                .find(|t| *t > now)
                .or(Some(now))
        }
        None => slots.iter().filter_map(|s| s.respawn_at).min(),
    }
}

fn begin_stop(slots: &mut [Slot], _at: Instant) {
    for slot in slots.iter_mut() {
        slot.respawn_at = None;
        send(slot, libc::SIGINT, Stage::Interrupted);
    }
}

/// SIGTERM, then SIGKILL, to whoever outlived its deadline.
fn escalate(slots: &mut [Slot], at: Instant, now: Instant, options: &Options) {
    let term = at + options.sigterm_timeout;
    let kill = term + options.sigkill_timeout;
    for slot in slots.iter_mut() {
        if now >= kill && slot.stage != Stage::Killed {
            note_state(slot);
            send(slot, libc::SIGKILL, Stage::Killed);
        } else if now >= term && slot.stage == Stage::Interrupted {
            note_state(slot);
            send(slot, libc::SIGTERM, Stage::Terminated);
        }
    }
}

fn note_state(slot: &mut Slot) {
    if let (Some(pid), None) = (slot.pid, slot.exit) {
        slot.state_at_deadline = Some(process_state(pid));
    }
}

/// Sends `signal` to the slot's process if it is alive, and records the stage.
fn send(slot: &mut Slot, signal: i32, stage: Stage) {
    let (Some(pid), None) = (slot.pid, slot.exit) else {
        return;
    };
    let Ok(pid) = i32::try_from(pid) else { return };
    // SAFETY: kill(2) on the pid of a child this supervisor has not been told has exited
    // (so not yet reaped by its waiter, and not reused), with a valid signal number; it
    // has no memory effects, and an error (it exited just now) is harmless.
    unsafe {
        libc::kill(pid, signal);
    }
    slot.stage = stage;
}

/// What the kernel says the process is doing, from `/proc/PID/stat`.
fn process_state(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("?");
    match state {
        "R" => "running on a CPU".into(),
        "S" => "sleeping (waiting for something)".into(),
        "D" => "in uninterruptible sleep (waiting on I/O)".into(),
        "T" => "stopped by a signal (SIGSTOP/SIGTSTP): it cannot handle SIGINT or SIGTERM".into(),
        "t" => "stopped by a debugger".into(),
        "Z" => "exited, not yet reaped".into(),
        other => format!("state {other}"),
    }
}

fn start(
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
    command
        .args(&spec.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in &options.env {
        command.env(name, value);
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
    if let Some(out) = child.stdout.take() {
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
    if let Some(err) = child.stderr.take() {
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

/// Where the lines of one output stream of a process go.
struct Sink {
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
const OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// Copies `stream` line by line to where `sink` says.
fn pipe(stream: impl std::io::Read + Send + 'static, sink: Sink) {
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

/// A line of the launcher's own, in `ros2 launch`'s shape.
fn announce(who: &str, what: &str) {
    println!("[INFO] [{who}]: {what}");
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => "exit code 0".into(),
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {}", signal_name(signal)),
        _ => "unknown status".into(),
    }
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        other => other.to_string(),
    }
}

fn report_exit(slot: &Slot, status: ExitStatus) {
    let pid = slot.pid.unwrap_or(0);
    if status.success() {
        announce(
            &slot.spec.label,
            &format!("process has finished cleanly [pid {pid}]"),
        );
    } else {
        println!(
            "[ERROR] [{}]: process has died [pid {pid}, {}, from {}]",
            slot.spec.label,
            describe(status),
            slot.spec.origin
        );
    }
}

fn failed(slot: &Slot) -> bool {
    slot.spawn_error.is_some()
        || slot
            .exit
            .is_some_and(|(status, _)| !status.success() && slot.stage == Stage::Running)
}

fn exit_status(slots: &[Slot]) -> u8 {
    if slots.iter().any(failed) {
        status::PROCESS_FAILED
    } else {
        status::CLEAN
    }
}

fn print_stop_report(slots: &[Slot], reason: &str, at: Instant, options: &Options) -> u8 {
    let term = options.sigterm_timeout.as_secs_f64();
    let kill = term + options.sigkill_timeout.as_secs_f64();
    println!(
        "kairos launch: stop report ({reason}; SIGINT at 0 s, SIGTERM at {term:.1} s, SIGKILL at {kill:.1} s)"
    );
    let mut escalated = false;
    for slot in slots {
        let label = &slot.spec.label;
        let pid = slot.pid.map_or("-".into(), |p| p.to_string());
        let (what, late) = match (slot.exit, &slot.spawn_error) {
            (_, Some(err)) => (format!("could not start: {err}"), false),
            (None, None) if slot.pid.is_none() => ("never started".into(), false),
            (None, None) => (
                "still alive after SIGKILL: the kernel has not reaped it (uninterruptible I/O?)"
                    .into(),
                true,
            ),
            (Some((status, when)), None) => {
                let after = when.saturating_duration_since(at).as_secs_f64() * 1e3;
                match slot.stage {
                    Stage::Running => {
                        (format!("had ended by itself ({})", describe(status)), false)
                    }
                    Stage::Interrupted => (
                        format!(
                            "stopped on SIGINT after {after:.0} ms ({})",
                            describe(status)
                        ),
                        false,
                    ),
                    Stage::Terminated => (
                        format!(
                            "did not stop on SIGINT within {term:.1} s; ended by SIGTERM after {after:.0} ms ({})",
                            describe(status)
                        ),
                        true,
                    ),
                    Stage::Killed => (
                        format!(
                            "did not stop on SIGINT or SIGTERM; killed by SIGKILL after {after:.0} ms"
                        ),
                        true,
                    ),
                }
            }
        };
        escalated |= late;
        println!("  {label:<24} pid {pid:<8} {what}");
        if late {
            if let Some(state) = &slot.state_at_deadline {
                println!("  {:<24} at its deadline it was {state}", "");
            }
            let recent = slot.recent.lock().unwrap_or_else(PoisonError::into_inner);
            let lines = if recent.kairos.is_empty() {
                &recent.any
            } else {
                &recent.kairos
            };
            for line in lines {
                println!("  {:<24} it said: {line}", "");
            }
        }
    }
    if escalated {
        status::ESCALATED
    } else if slots.iter().any(failed) {
        status::PROCESS_FAILED
    } else {
        status::CLEAN
    }
}

/// Forwards SIGINT and SIGTERM to the supervisor as events.
fn watch_signals(tx: mpsc::Sender<Event>) {
    match signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM]) {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                for signal in signals.forever() {
                    if tx.send(Event::Signal(signal)).is_err() {
                        break;
                    }
                }
            });
        }
        Err(err) => eprintln!("kairos launch: cannot watch Ctrl-C ({err}); stop with SIGKILL"),
    }
}
