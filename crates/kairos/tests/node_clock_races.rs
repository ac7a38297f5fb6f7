//! Review: races between a node clock's use_sim_time switch and a sleep or timer that
//! reads the clock's kind twice. Both make a wait end *before* its deadline (never-early
//! broken). They are races, so each test retries for a bounded time; on the code they were
//! written against they failed within milliseconds.

use futures::task::noop_waker;
use kairos::time::{CancelToken, ClockKind, Duration, RosClock, SimClock, Time, Timer};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

const HOUR_NS: i64 = 3_600_000_000_000;
const TRY_FOR: std::time::Duration = std::time::Duration::from_secs(3);

/// The races need both cores: the tests of this file run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A node clock on a frozen simulated clock, with a thread switching use_sim_time on and
/// off until the returned flag is set.
fn toggled_node_clock() -> (RosClock, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let sim = SimClock::new();
    sim.publish(Time::new(ClockKind::Sim, 0)).unwrap();
    let ros = RosClock::new(sim);
    let stop = Arc::new(AtomicBool::new(false));
    let (r, s) = (ros.clone(), Arc::clone(&stop));
    let toggler = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            r.set_use_sim_time(true);
            r.set_use_sim_time(false);
        }
    });
    (ros, stop, toggler)
}

/// An async sleep of an hour of *simulation* time, on a simulated clock that never moves,
/// must never complete with `Ok`: at most `ClockChanged` (or a mismatch) when the node
/// clock switches.
#[test]
fn async_sleep_on_a_node_clock_never_completes_early_across_a_switch() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (ros, stop, toggler) = toggled_node_clock();
    let clock = ros.clock();
    let token = CancelToken::new();
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    let give_up = Instant::now() + TRY_FOR;
    let mut early = None;
    let mut polls = 0u64;
    while Instant::now() < give_up && early.is_none() {
        let mut sleep =
            Box::pin(clock.sleep_until_async(Time::new(ClockKind::Sim, HOUR_NS), &token));
        polls += 1;
        if let Poll::Ready(Ok(())) = sleep.as_mut().poll(&mut cx) {
            early = Some(polls);
        }
    }
    stop.store(true, Ordering::Relaxed);
    toggler.join().unwrap();
    assert_eq!(
        early, None,
        "an hour-long sim sleep completed Ok at once (poll #{early:?}) while simulation time \
         stood at 0"
    );
}

/// A timer of an hour on a node clock whose simulated source stands still must not fire:
/// a switch restarts its period on the new source, it never fires it.
#[test]
fn timer_on_a_node_clock_never_fires_early_across_a_switch() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (ros, stop, toggler) = toggled_node_clock();
    let timer = Timer::new(ros.clock(), Duration::from_nanos(HOUR_NS)).unwrap();
    let give_up = Instant::now() + TRY_FOR;
    let mut fired = None;
    while Instant::now() < give_up && fired.is_none() {
        fired = timer.try_fire();
    }
    stop.store(true, Ordering::Relaxed);
    toggler.join().unwrap();
    assert_eq!(
        fired, None,
        "an hour timer fired at once across a use_sim_time switch"
    );
}
