//! Stopping on time: SIGINT to every process at once, SIGTERM and SIGKILL to whoever
//! outlives its deadline, and the launcher's own signals that begin a stop.

use super::*;

/// How long after SIGKILL the supervisor waits for the kernel to reap a process.
pub(super) const REAP_GRACE: Duration = Duration::from_secs(2);

/// When a process gets SIGTERM and SIGKILL in a stop begun at `at`: its own timeouts
/// (a launch file's `sigterm_timeout`, `sigkill_timeout`), else the launch's.
pub(super) fn deadlines(slot: &Slot, at: Instant, options: &Options) -> (Instant, Instant) {
    let term = at + slot.spec.sigterm_timeout.unwrap_or(options.sigterm_timeout);
    let kill = term + slot.spec.sigkill_timeout.unwrap_or(options.sigkill_timeout);
    (term, kill)
}

/// When a stop begun at `at` is over whatever the processes do: the last SIGKILL (the
/// launch's own, or a process's later one), plus the kernel's reaping. A busy driver
/// (its `OnShutdown` handlers) is waited for until then too, processes or not.
pub(super) fn stop_bound(slots: &[Slot], at: Instant, options: &Options) -> Instant {
    slots
        .iter()
        .map(|slot| deadlines(slot, at, options).1)
        .chain([at + options.sigterm_timeout + options.sigkill_timeout])
        .max()
        .unwrap_or(at)
        + REAP_GRACE
}

pub(super) fn next_deadline(
    slots: &[Slot],
    stop: Option<Instant>,
    options: &Options,
) -> Option<Instant> {
    match stop {
        Some(at) => {
            let now = Instant::now();
            slots
                .iter()
                .flat_map(|slot| {
                    let (term, kill) = deadlines(slot, at, options);
                    [term, kill]
                })
                .chain([stop_bound(slots, at, options)])
                .filter(|t| *t > now)
                .min()
                .or(Some(now))
        }
        None => slots
            .iter()
            .filter_map(|s| s.respawn_at)
            .chain(options.deadline)
            .min(),
    }
}

pub(super) fn begin_stop(slots: &mut [Slot], _at: Instant) {
    for slot in slots.iter_mut() {
        slot.respawn_at = None;
        send(slot, libc::SIGINT, Stage::Interrupted);
    }
}

/// SIGTERM, then SIGKILL, to whoever outlived its deadline.
pub(super) fn escalate(slots: &mut [Slot], at: Instant, now: Instant, options: &Options) {
    for slot in slots.iter_mut() {
        let (term, kill) = deadlines(slot, at, options);
        if now >= kill && slot.stage != Stage::Killed {
            note_state(slot);
            send(slot, libc::SIGKILL, Stage::Killed);
        } else if now >= term && slot.stage == Stage::Interrupted {
            note_state(slot);
            send(slot, libc::SIGTERM, Stage::Terminated);
        }
    }
}

pub(super) fn note_state(slot: &mut Slot) {
    if let (Some(pid), None) = (slot.pid, slot.exit) {
        slot.state_at_deadline = Some(process_state(pid));
    }
}

/// Sends `signal` to the slot's process if it is alive, and records the stage.
pub(super) fn send(slot: &mut Slot, signal: i32, stage: Stage) {
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
pub(super) fn process_state(pid: u32) -> String {
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

/// Forwards SIGINT and SIGTERM to the supervisor as events.
pub(super) fn watch_signals(tx: mpsc::Sender<Event>) {
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
