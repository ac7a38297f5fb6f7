//! Running the processes of a launch, and stopping them on time.
//!
//! What this module promises:
//! - Every process's output reaches the terminal line by line, prefixed with its label
//!   (`[talker-1] ...`), as `ros2 launch` prints it; `output: log` writes a file instead.
//! - A stop (Ctrl-C, SIGTERM to the launcher, or the exit of a process marked
//!   `on_exit: shutdown`) sends SIGINT to every process at once; a process still alive
//!   after `sigterm_timeout` gets SIGTERM, one still alive `sigkill_timeout` later gets
//!   SIGKILL (a process's own timeouts, from its launch file, in place of the launch's).
//!   A second Ctrl-C sends SIGKILL at once. The stop therefore ends by the longest
//!   `sigterm_timeout + sigkill_timeout` (plus the kernel's reaping), whatever the
//!   processes do: stuck in a callback, ignoring SIGINT, stopped with SIGSTOP.
//! - A process with `emulate_tty` writes to pseudo-terminals (one for its output, one
//!   for its errors) instead of pipes, so it behaves as at a terminal; its lines are read
//!   and labelled as any other's.
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

mod child;
mod report;
mod stop;

use child::*;
use report::*;
use stop::*;

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
    /// When the launch is stopped if it still runs (`kairos launch-test --timeout`); the
    /// stop then keeps its own bound.
    pub deadline: Option<Instant>,
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
    let status = drive(&mut driver, first, options);
    driver.finish();
    status
}

/// As [`run_driven`], leaving the driver running once the launch has ended, for the
/// caller to end it (a launch test's driver then runs its post-shutdown tests).
pub fn drive(driver: &mut Driver, first: Vec<Request>, options: &Options) -> u8 {
    let (tx, rx) = mpsc::channel();
    for request in first {
        let _ = tx.send(Event::Driver(Some(request)));
    }
    driver.forward(tx.clone(), Event::Driver);
    supervise_events(Vec::new(), options, Some(driver), tx, rx)
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
        // A driver with notices to handle (an exit, the stop) or work pending (a timer
        // that a stop does not cancel) is waited for, on a stop too (its OnShutdown
        // handlers), but never past the stop's bound below.
        let driving = seen < sent.get() || driver_busy;
        if alive == 0 && !respawning && !driving {
            break;
        }
        let now = Instant::now();
        // Every turn, whatever woke it: a deadline that passed while events came in is
        // acted on now, in order (SIGTERM before SIGKILL).
        match &stop {
            Some((_, at)) => {
                escalate(&mut slots, *at, now, options);
                if now >= stop_bound(&slots, *at, options) {
                    break;
                }
            }
            None if options.deadline.is_some_and(|d| d <= now) => {
                let reason = "the run reached its deadline (--timeout)".to_owned();
                announce("launch", &format!("{reason}: stopping every process"));
                notify(Notice::Shutdown {
                    reason: reason.clone(),
                });
                stop = Some((reason, now));
                begin_stop(&mut slots, now);
                continue;
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
                                    let label = slot.spec.label.clone();
                                    notify(Notice::Started { id, pid, label });
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
                } else if slot.spec.respawn
                    && slot
                        .spec
                        .respawn_max_retries
                        .is_none_or(|max| slot.started <= u64::from(max))
                {
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
                        Ok(pid) => notify(Notice::Started {
                            id,
                            pid,
                            label: slot.spec.label.clone(),
                        }),
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
                Request::Ready | Request::Runs { .. } => {}
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
