//! What the launcher says about its processes: each start and exit as it happens, the
//! stop report that names whoever did not stop in time, and the exit status.

use super::*;

/// A line of the launcher's own, in `ros2 launch`'s shape.
pub(super) fn announce(who: &str, what: &str) {
    println!("[INFO] [{who}]: {what}");
}

pub(super) fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => "exit code 0".into(),
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {}", signal_name(signal)),
        _ => "unknown status".into(),
    }
}

pub(super) fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        other => other.to_string(),
    }
}

pub(super) fn report_exit(slot: &Slot, status: ExitStatus) {
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

pub(super) fn failed(slot: &Slot) -> bool {
    slot.spawn_error.is_some()
        || slot
            .exit
            .is_some_and(|(status, _)| !status.success() && slot.stage == Stage::Running)
}

pub(super) fn exit_status(slots: &[Slot]) -> u8 {
    if slots.iter().any(failed) {
        status::PROCESS_FAILED
    } else {
        status::CLEAN
    }
}

pub(super) fn print_stop_report(
    slots: &[Slot],
    reason: &str,
    at: Instant,
    options: &Options,
) -> u8 {
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
                            "did not stop on SIGINT within {:.1} s; ended by SIGTERM after {after:.0} ms ({})",
                            slot.spec.sigterm_timeout.map_or(term, |t| t.as_secs_f64()),
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
