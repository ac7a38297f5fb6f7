//! Issue 13, defect 5: once a process is idle (everything shut down and dropped) the
//! wall-clock jump monitor thread sleeps: it does not keep waking ~100 times a second for a
//! system-clock sleep that a shutdown left behind.
//!
//! Its own test binary: no other test may have system-clock sleepers meanwhile.

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::{CancelToken, Clock, Duration};
use std::future::Future;
use std::sync::mpsc;

/// Voluntary context switches so far of the thread named `kairos-jump-mon(itor)`, if it
/// exists: each sleep it wakes from costs one. (Involuntary ones are preemptions, which
/// grow with the machine's load, not with the monitor's wake-ups.)
fn monitor_switches() -> Option<u64> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("procfs is mounted");
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != "kairos-jump-mon" {
            continue;
        }
        let status = std::fs::read_to_string(task.path().join("status")).ok()?;
        let switches = status
            .lines()
            .filter(|line| line.starts_with("voluntary_ctxt_switches"))
            .filter_map(|line| line.split_whitespace().last()?.parse::<u64>().ok())
            .sum();
        return Some(switches);
    }
    None
}

/// The monitor's context switches, once its thread has started and named itself.
fn started_monitor_switches() -> u64 {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(switches) = monitor_switches() {
            return switches;
        }
        assert!(
            std::time::Instant::now() < give_up,
            "no kairos-jump-monitor thread: a system-clock sleep starts it"
        );
        std::thread::yield_now();
    }
}

#[test]
fn the_jump_monitor_sleeps_once_a_shut_down_sleeper_is_gone() {
    let node = Node::new_in(&Context::new(), "sleeper", "/").unwrap();
    node.set_clock(Clock::steady());
    let exec = Executor::single_threaded();
    exec.add_node(&node).unwrap();
    let (tx, rx) = mpsc::sync_channel(1);
    let timer = node
        .create_timer_async(Duration::from_millis(1), move |_| {
            let tx = tx.clone();
            async move {
                // Registers with the wall monitor while it waits (on its first poll).
                let mut hour = std::pin::pin!(
                    Clock::system().sleep_for_async(Duration::from_secs(3600), &CancelToken::new())
                );
                let _ = std::future::poll_fn(|cx| {
                    let polled = hour.as_mut().poll(cx);
                    let _ = tx.try_send(());
                    polled
                })
                .await;
            }
        })
        .unwrap();
    let spin = exec.spin_thread().unwrap();
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    spin.stop().unwrap();
    let report = exec.shutdown(Duration::from_secs(5));
    assert_eq!(report.suspended.len(), 1, "{report}");
    drop((timer, node, exec));

    // Real time must pass to see what an idle monitor does; 1 s at 100 Hz would be ~100
    // wake-ups, an idle monitor has at most the one that finds nobody interested.
    let before = started_monitor_switches();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let woke = started_monitor_switches() - before;
    assert!(
        woke <= 5,
        "the jump monitor woke {woke} times in 1 s of an idle process"
    );
}
