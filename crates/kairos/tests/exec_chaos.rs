//! Issue 13's defects, found by a randomized campaign, each replayed here as a
//! deterministic probe (barriers, channels and observable state; no timing guesses), plus
//! the shutdown token and the counts that make the runtime's state visible.

mod exec_support;
use exec_support::{node_in, wait_until};
use kairos::exec::{DeadlockReason, Executor, GroupKind, SpinThread};
use kairos::graph::{CallError, Client, Context, Node, Service};
use kairos::time::{CancelToken, Clock, Duration, SimClock, WaitError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::time::Instant;

/// The tests' adder: two numbers in, their sum out.
type Add = fn((i64, i64)) -> i64;

const TEN_S: std::time::Duration = std::time::Duration::from_secs(10);

/// An "add" service spun on its own single-threaded executor, and a caller node with a
/// client of it on another one, both spinning on threads of their own.
struct Served {
    caller: Node,
    client: Client<Add>,
    exec: Executor,
    spin: Option<SpinThread>,
    server_exec: Executor,
    server_spin: Option<SpinThread>,
    _service: Service<(i64, i64), i64>,
    _server: Node,
}

fn served() -> Served {
    let context = Context::new();
    let server = node_in(&context, "server");
    let service = server
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let server_exec = Executor::single_threaded();
    server_exec.add_node(&server).unwrap();
    let server_spin = Some(server_exec.spin_thread().unwrap());
    let caller = node_in(&context, "caller");
    let client = caller.create_client("add").unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&caller).unwrap();
    let spin = Some(exec.spin_thread().unwrap());
    Served {
        caller,
        client,
        exec,
        spin,
        server_exec,
        server_spin,
        _service: service,
        _server: server,
    }
}

impl Served {
    /// Stops both spins and shuts both executors down.
    fn stop(mut self) {
        drop(self.spin.take());
        drop(self.server_spin.take());
        self.exec.shutdown(Duration::from_secs(5));
        self.server_exec.shutdown(Duration::from_secs(5));
    }
}

/// A guard condition whose callback holds its group until `release` is sent.
struct Blocker {
    guard: kairos::exec::GuardCondition,
    entered: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
}

fn blocker(node: &Node) -> Blocker {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let entered_tx = Mutex::new(entered_tx);
    let release_rx = Mutex::new(release_rx);
    let guard = node.create_guard_condition("long", move || {
        let _ = entered_tx.lock().unwrap().send(());
        let _ = release_rx.lock().unwrap().recv_timeout(TEN_S);
    });
    Blocker {
        guard,
        entered,
        release,
    }
}

impl Blocker {
    fn hold(&self) {
        self.guard.trigger();
        self.entered
            .recv_timeout(TEN_S)
            .expect("the long callback ran");
    }
}

// --- 13.1: a timer parked behind a dropped entity is not starved ------------------------

#[test]
fn a_timer_parked_behind_a_dropped_guard_condition_runs_when_the_group_frees() {
    let node = node_in(&Context::new(), "node");
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    let long = blocker(&node);
    long.hold();
    let group = node.default_callback_group().clone();
    let parked = node.create_guard_condition("parked", || {});
    parked.trigger();
    wait_until("the guard condition parks", || group.parked() == 1);
    let ticks = Arc::new(AtomicU64::new(0));
    let count = ticks.clone();
    let timer = node
        .create_timer(Duration::from_millis(2), move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    wait_until("the timer parks", || group.parked() == 2);
    assert_eq!(exec.parked_entities(), 2);
    drop(parked);
    long.release.send(()).unwrap();
    wait_until("the timer ticks three times", || {
        ticks.load(Ordering::Relaxed) >= 3
    });
    drop(spin);
    assert!(exec.shutdown(Duration::from_secs(30)).is_clean());
    drop(timer);
}

// --- 13.2: a done callback is never lost at shutdown -----------------------------------

#[test]
fn a_done_callback_whose_response_is_queued_at_shutdown_runs_with_an_error() {
    let served = served();
    let (caller, client, exec) = (&served.caller, &served.client, &served.exec);
    let (done_tx, done_rx) = mpsc::channel();
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (calling, done_tx, entered_tx, release_rx) = (
        client.clone(),
        Mutex::new(done_tx),
        Mutex::new(entered_tx),
        Mutex::new(release_rx),
    );
    let busy = caller.create_guard_condition("busy", move || {
        let done_tx = done_tx.lock().unwrap().clone();
        calling.call_async((2, 3)).on_done(move |result| {
            let _ = done_tx.send(result);
        });
        let _ = entered_tx.lock().unwrap().send(());
        let _ = release_rx.lock().unwrap().recv_timeout(TEN_S);
    });
    busy.trigger();
    entered_rx.recv_timeout(TEN_S).unwrap();
    wait_until("the response is queued behind the busy callback", || {
        client.queued_responses() == 1
    });
    assert_eq!(exec.queued_responses(), 1);
    let report = exec.shutdown(Duration::ZERO);
    assert_eq!(report.queued_responses, 1, "{report}");
    assert_eq!(report.still_running.len(), 1, "{report}");
    match done_rx.recv_timeout(TEN_S).expect("the done callback ran") {
        Err(CallError::ExecutorShutDown { seq: 1, service }) => assert_eq!(service, "/add"),
        other => panic!("expected ExecutorShutDown, got {other:?}"),
    }
    assert_eq!(
        client.late_responses(),
        1,
        "the dropped response is counted"
    );
    release_tx.send(()).unwrap();
    served.stop();
}

#[test]
fn a_done_callback_given_after_its_response_arrived_still_runs_on_the_clients_executor() {
    let served = served();
    let client = served.client.clone();
    let (done_tx, done_rx) = mpsc::channel();
    let (queued_tx, queued_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (done_tx, queued_tx, release_rx) = (
        Mutex::new(done_tx),
        Mutex::new(queued_tx),
        Mutex::new(release_rx),
    );
    let busy = served.caller.create_guard_condition("busy", move || {
        let response = client.call_async((2, 3));
        wait_until("the server answers", || response.is_done());
        let done_tx = done_tx.lock().unwrap().clone();
        let calling_thread = std::thread::current().id();
        response.on_done(move |result| {
            let _ = done_tx.send((result, std::thread::current().id() == calling_thread));
        });
        let _ = queued_tx.lock().unwrap().send(client.queued_responses());
        let _ = release_rx.lock().unwrap().recv_timeout(TEN_S);
    });
    busy.trigger();
    let queued = queued_rx
        .recv_timeout(TEN_S)
        .expect("the busy callback ran");
    assert_eq!(
        queued, 1,
        "the response waits for the client's group instead of running inside on_done"
    );
    assert!(
        done_rx.try_recv().is_err(),
        "the done callback ran inside the callback that gave it"
    );
    release_tx.send(()).unwrap();
    let (result, same_thread) = done_rx.recv_timeout(TEN_S).expect("the done callback ran");
    assert_eq!(result.unwrap(), 5);
    assert!(
        same_thread,
        "a single-threaded executor runs it on its own thread"
    );
    served.stop();
}

#[test]
fn dropping_a_client_ends_its_pending_calls_with_an_error() {
    let context = Context::new();
    let server = node_in(&context, "server");
    // Never spun: the request is never answered.
    let _service = server
        .create_service("add", |(a, b): (i64, i64)| a + b)
        .unwrap();
    let caller = node_in(&context, "caller");
    let client: Client<Add> = caller.create_client("add").unwrap();
    let (tx, rx) = mpsc::channel();
    client.call_async((1, 2)).on_done(move |result| {
        let _ = tx.send(result);
    });
    assert_eq!(client.pending_requests(), 1);
    drop(client);
    match rx.recv_timeout(TEN_S).expect("the done callback ran") {
        Err(CallError::ClientDropped { seq: 1, .. }) => {}
        other => panic!("expected ClientDropped, got {other:?}"),
    }
}

// --- 13.4: a cross-group call cycle fails fast -----------------------------------------

#[test]
fn a_cross_group_call_cycle_fails_at_once_naming_both_callbacks() {
    let node = node_in(&Context::new(), "node");
    let g1 = node.create_callback_group("one", GroupKind::MutuallyExclusive);
    let g2 = node.create_callback_group("two", GroupKind::MutuallyExclusive);
    let n1 = node.with_group(&g1).unwrap();
    let n2 = node.with_group(&g2).unwrap();
    let _s1 = n1.create_service("s1", |x: i64| x + 1).unwrap();
    let _s2 = n2.create_service("s2", |x: i64| x + 2).unwrap();
    let c1: Client<fn(i64) -> i64> = n1.create_client("s2").unwrap();
    let c2: Client<fn(i64) -> i64> = n2.create_client("s1").unwrap();
    let exec = Executor::multi_threaded(4).unwrap();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    let both_running = Arc::new(Barrier::new(2));
    let (tx, rx) = mpsc::channel();
    let make = |client: Client<fn(i64) -> i64>, name: &'static str| {
        let (barrier, tx) = (both_running.clone(), Mutex::new(tx.clone()));
        move || {
            barrier.wait();
            let start = Instant::now();
            // Long enough that a missed cycle fails the test by its 10 s receive bound.
            let result = client.call(0, Duration::from_secs(60));
            let _ = tx.lock().unwrap().send((name, result, start.elapsed()));
        }
    };
    let a = n1.create_guard_condition("caller_one", make(c1, "caller_one"));
    let b = n2.create_guard_condition("caller_two", make(c2, "caller_two"));
    a.trigger();
    b.trigger();
    let first = rx.recv_timeout(TEN_S).expect("one caller returned at once");
    let second = rx.recv_timeout(TEN_S).expect("the other completed");
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    let (failed, succeeded) = match (&first.1, &second.1) {
        (Err(_), Ok(_)) => (&first, &second),
        (Ok(_), Err(_)) => (&second, &first),
        _ => panic!("exactly one call fails: {first:?} {second:?}"),
    };
    let Err(CallError::WouldDeadlock(err)) = &failed.1 else {
        panic!("expected WouldDeadlock: {failed:?}")
    };
    assert_eq!(err.reason, DeadlockReason::WaitCycle, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("caller_one") && message.contains("caller_two"),
        "both callbacks are named: {message}"
    );
    // Far under the calls' 60 s timeout, which a missed cycle would wait out.
    assert!(failed.2 < TEN_S, "{failed:?}");
    let expected = if succeeded.0 == "caller_one" { 2 } else { 1 };
    assert_eq!(succeeded.1.as_ref().unwrap(), &expected);
}

// --- 13.5 and the shutdown token: nothing left behind ----------------------------------

#[test]
fn async_callbacks_asleep_at_shutdown_are_freed_on_every_clock() {
    let sim = SimClock::new();
    for clock in [Clock::system(), Clock::steady(), sim.clock()] {
        let node = Node::new_in(&Context::new(), "sleeper", "/").unwrap();
        node.set_clock(Clock::steady());
        let exec = Executor::single_threaded();
        exec.add_node(&node).unwrap();
        let held = Arc::new(());
        let witness = Arc::downgrade(&held);
        let (tx, rx) = mpsc::sync_channel(1);
        let sleep_clock = clock.clone();
        let timer = node
            .create_timer_async(Duration::from_millis(1), move |_| {
                let (tx, held, clock) = (tx.clone(), held.clone(), sleep_clock.clone());
                async move {
                    let _ = tx.try_send(());
                    let _ = clock
                        .sleep_for_async(Duration::from_secs(3600), &CancelToken::new())
                        .await;
                    drop(held);
                }
            })
            .unwrap();
        let spin = exec.spin_thread().unwrap();
        rx.recv_timeout(TEN_S).unwrap();
        wait_until("the callback is suspended", || exec.live_tasks() == 1);
        spin.stop().unwrap();
        let report = exec.shutdown(Duration::from_secs(5));
        assert_eq!(report.suspended.len(), 1, "{:?}: {report}", clock.kind());
        drop((timer, node, exec));
        assert!(
            witness.upgrade().is_none(),
            "{:?}: the suspended callback was freed",
            clock.kind()
        );
    }
    assert_eq!(
        sim.pending_waits(),
        0,
        "no sleep left on the simulated clock"
    );
}

#[test]
fn work_parked_behind_a_busy_group_at_shutdown_is_counted_and_freed() {
    let node = node_in(&Context::new(), "node");
    let exec = Executor::multi_threaded(2).unwrap();
    exec.add_node(&node).unwrap();
    let spin = exec.spin_thread().unwrap();
    let long = blocker(&node);
    long.hold();
    let held = Arc::new(());
    let witness = Arc::downgrade(&held);
    let parked = node.create_guard_condition("parked", move || {
        let _ = &held;
    });
    parked.trigger();
    wait_until("the guard condition parks", || exec.parked_entities() == 1);
    let stopper = std::thread::spawn(move || spin.stop());
    let report = exec.shutdown(Duration::ZERO);
    assert_eq!(report.parked_entities, 1, "{report}");
    assert_eq!(node.default_callback_group().parked(), 0, "the gate let go");
    long.release.send(()).unwrap();
    stopper.join().unwrap().unwrap();
    drop((parked, long, node, exec));
    assert!(witness.upgrade().is_none(), "the parked entity was freed");
}

#[test]
fn shutdown_wakes_a_callback_blocked_in_a_kairos_sleep_or_call() {
    let context = Context::new();
    let node = node_in(&context, "node");
    let others = node.create_callback_group("others", GroupKind::Reentrant);
    let server = node.with_group(&others).unwrap();
    let entered = Arc::new(AtomicU64::new(0));
    let count = entered.clone();
    // A service that is never answered in time: its callback waits for the shutdown too.
    let _service = server
        .create_service("slow", move |_: ()| {
            count.fetch_add(1, Ordering::SeqCst);
            let _ = Clock::steady().sleep_for(Duration::from_secs(3600), &CancelToken::new());
        })
        .unwrap();
    let client: Client<fn(()) -> ()> = node.create_client("slow").unwrap();
    let exec = Executor::multi_threaded(3).unwrap();
    exec.add_node(&node).unwrap();
    let (tx, rx) = mpsc::channel();
    let (sleep_tx, call_tx) = (Mutex::new(tx.clone()), Mutex::new(tx));
    let (count_sleep, count_call) = (entered.clone(), entered.clone());
    let sleeper = node.create_guard_condition("sleeper", move || {
        count_sleep.fetch_add(1, Ordering::SeqCst);
        let result = Clock::steady().sleep_for(Duration::from_secs(3600), &CancelToken::new());
        let _ = sleep_tx.lock().unwrap().send(format!("sleep: {result:?}"));
    });
    let caller = server.create_guard_condition("caller", move || {
        count_call.fetch_add(1, Ordering::SeqCst);
        let result = client.call((), Duration::from_secs(3600));
        let _ = call_tx.lock().unwrap().send(format!("call: {result:?}"));
    });
    let user_token = exec.shutdown_token();
    let spin = exec.spin_thread().unwrap();
    sleeper.trigger();
    caller.trigger();
    wait_until("three callbacks block", || {
        entered.load(Ordering::SeqCst) == 3
    });
    drop(spin);
    let start = Instant::now();
    let report = exec.shutdown(Duration::from_secs(30));
    assert!(report.is_clean(), "every blocked wait woke: {report}");
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert!(user_token.is_cancelled(), "the executor's token is tripped");
    let mut ends = vec![
        rx.recv_timeout(TEN_S).unwrap(),
        rx.recv_timeout(TEN_S).unwrap(),
    ];
    ends.sort();
    // The call ends either way: its wait woke, or the woken service answered first.
    let call_ended = ends[0] == "call: Err(ExecutorShutDown { service: \"/slow\", seq: 1 })"
        || ends[0] == "call: Ok(())";
    assert!(call_ended, "{ends:?}");
    assert_eq!(ends[1], format!("sleep: Err({:?})", WaitError::Cancelled));
}

/// Where a done callback runs, whatever the race between the server's answer and the
/// `on_done` call: on the client's executor, after the callback that gave it has returned
/// (single-threaded), never on the thread that called `on_done` from outside the executor.
fn done_callback_placement(spins: u32, from_callback: bool) -> Result<(), String> {
    let served = served();

    let log = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let (done_tx, done_rx) = mpsc::channel();
    let give = {
        let log = log.clone();
        move |client: &Client<Add>, done_tx: mpsc::Sender<_>| {
            let response = client.call_async((2, 3));
            // Busy-waits rather than yields: on a loaded machine each yield may cost a
            // time slice, and the race to shift is the server's answer, microseconds away.
            for _ in 0..spins {
                std::hint::spin_loop();
            }
            let giver = std::thread::current().id();
            let log = log.clone();
            response.on_done(move |result| {
                log.lock().unwrap().push("done");
                let _ = done_tx.send((result, std::thread::current().id() == giver));
            });
        }
    };
    let _busy = if from_callback {
        let (client, done_tx, log) = (served.client.clone(), Mutex::new(done_tx), log.clone());
        let busy = served.caller.create_guard_condition("give", move || {
            give(&client, done_tx.lock().unwrap().clone());
            log.lock().unwrap().push("giver returned");
        });
        busy.trigger();
        Some(busy)
    } else {
        give(&served.client, done_tx);
        None
    };
    let outcome = done_rx.recv_timeout(TEN_S);
    served.stop();
    let (result, on_giver_thread) = outcome.map_err(|_| "the done callback never ran")?;
    if result.map_err(|e| e.to_string())? != 5 {
        return Err("wrong sum".into());
    }
    if !from_callback && on_giver_thread {
        return Err("ran on the thread that called on_done, outside the executor".into());
    }
    let log = log.lock().unwrap().clone();
    if from_callback && log != ["giver returned", "done"] {
        return Err(format!("ran inside the callback that gave it: {log:?}"));
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 64, failure_persistence: None, ..proptest::prelude::ProptestConfig::default()
    })]
    #[test]
    fn a_done_callback_runs_on_the_clients_executor_whoever_wins_the_race(
        spins in 0u32..100_000,
        from_callback: bool,
    ) {
        if let Err(why) = done_callback_placement(spins, from_callback) {
            proptest::prop_assert!(false, "spins {} from_callback {}: {}", spins, from_callback, why);
        }
    }
}
