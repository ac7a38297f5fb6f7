//! Waiting lookups: they return once a transform that answers them arrives (never
//! before, never hanging), time out on the buffer's clock with tf2's facts, end on cancel
//! and shutdown, and fail at once with `WouldDeadlock` where the listener could never run
//! while they wait. Every assertion is on order and counts; the only times asserted are
//! "never early" bounds and generous "did not hang" bounds.

use kairos::exec::{DeadlockReason, Executor, GroupKind};
use kairos::graph::{Context, Node, SimStall};
use kairos::time::{CancelToken, ClockKind, Duration, StallPolicy, Time};
use kairos_tf2::{
    Extrapolation, Quaternion, Stamp, Tf2Error, Transform, TransformStamped, Vector3,
};
use kairos_tf2_ros::{Buffer, TransformBroadcaster, TransformError, TransformListener};
use std::sync::mpsc;

/// Far longer than any test: a wait that reaches it has hung.
const FOREVER: Duration = Duration::from_secs(3600);

/// The timeout of a lookup that must fail at once with `WouldDeadlock`: long for a
/// correct check (microseconds), short enough that a missing check fails the test with a
/// timeout instead of hanging it.
const DEADLOCK_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a test waits for a result before it calls the wait hung.
const HUNG: std::time::Duration = std::time::Duration::from_secs(60);

fn odom_base(secs: i64, x: f64) -> TransformStamped {
    let t = Transform::new(Vector3::new(x, 0.0, 0.0), Quaternion::IDENTITY);
    TransformStamped::new("odom", "base_link", Stamp::from_secs(secs), t)
}

/// Spins (bounded) until `ready` holds: synchronization on observable state, not a sleep.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let give_up = std::time::Instant::now() + HUNG;
    while !ready() {
        assert!(
            std::time::Instant::now() < give_up,
            "never happened: {what}"
        );
        std::thread::yield_now();
    }
}

/// Runs `body` on a new thread; the receiver gets its result.
fn on_thread<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    rx
}

/// A listener node spun on its own thread, and a broadcaster on another node.
struct Graph {
    _context: Context,
    buffer: Buffer,
    listener: TransformListener,
    broadcaster: TransformBroadcaster,
    exec: Executor,
    _nodes: (Node, Node),
}

fn graph() -> Graph {
    let context = Context::new();
    let talker = Node::new_in(&context, "talker", "/").unwrap();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    let buffer = Buffer::new(robot.clock());
    let listener = TransformListener::new(&robot, buffer.clone()).unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&robot).unwrap();
    let broadcaster = TransformBroadcaster::new(&talker).unwrap();
    Graph {
        _context: context,
        buffer,
        listener,
        broadcaster,
        exec,
        _nodes: (talker, robot),
    }
}

/// A robot node whose listener fills `buffer`, in the node's default group or in a group
/// of its own, on `exec`.
struct Robot {
    context: Context,
    node: Node,
    buffer: Buffer,
    listener: TransformListener,
    exec: Executor,
}

/// Where a [`Robot`]'s listener takes its callbacks.
#[derive(PartialEq)]
enum Listening {
    /// The node's default group, where its other callbacks are.
    InTheDefaultGroup,
    /// A mutually exclusive group of its own.
    InItsOwnGroup,
}

fn robot(listening: Listening, exec: Executor) -> Robot {
    let context = Context::new();
    let node = Node::new_in(&context, "robot", "/").unwrap();
    let buffer = Buffer::new(node.clock());
    let listener = if listening == Listening::InItsOwnGroup {
        let tf_group = node.create_callback_group("tf", GroupKind::MutuallyExclusive);
        TransformListener::new(&node.with_group(&tf_group).unwrap(), buffer.clone()).unwrap()
    } else {
        TransformListener::new(&node, buffer.clone()).unwrap()
    };
    exec.add_node(&node).unwrap();
    Robot {
        context,
        node,
        buffer,
        listener,
        exec,
    }
}

impl Robot {
    /// A broadcaster on a talker node beside the robot.
    fn talker(&self) -> (TransformBroadcaster, Node) {
        let talker = Node::new_in(&self.context, "talker", "/").unwrap();
        (TransformBroadcaster::new(&talker).unwrap(), talker)
    }

    /// A timer of the robot's default group whose first run looks up odom -> base_link at
    /// `stamp` and sends the result; later runs do nothing.
    fn lookup_in_a_timer(
        &self,
        stamp: Stamp,
    ) -> (
        kairos::exec::CallbackTimer,
        mpsc::Receiver<Result<TransformStamped, TransformError>>,
    ) {
        let (tx, rx) = mpsc::channel();
        let tx = parking_lot::Mutex::new(Some(tx));
        let buffer = self.buffer.clone();
        let timer = self
            .node
            .create_timer(Duration::from_millis(1), move |_| {
                if let Some(tx) = tx.lock().take() {
                    let _ = tx.send(buffer.lookup_transform_timeout(
                        "odom",
                        "base_link",
                        stamp,
                        FOREVER,
                    ));
                }
            })
            .unwrap();
        (timer, rx)
    }
}

#[test]
fn a_blocked_lookup_returns_once_the_transform_for_its_stamp_arrives() {
    let g = graph();
    let spin = g.exec.spin_thread().unwrap();
    g.broadcaster.send_transform(&odom_base(1, 1.0));
    wait_for("the first transform stored", || g.listener.stored() == 1);

    let buffer = g.buffer.clone();
    let result = on_thread(move || {
        let start = std::time::Instant::now();
        let found =
            buffer.lookup_transform_timeout("odom", "base_link", Stamp::from_secs(3), FOREVER);
        (found, start.elapsed())
    });
    wait_for("the lookup waits", || g.buffer.waiters() == 1);

    // 2 s is not 3 s: the lookup still cannot be answered, and must go on waiting.
    g.broadcaster.send_transform(&odom_base(2, 2.0));
    wait_for("the second transform stored", || g.listener.stored() == 2);
    assert!(
        result.try_recv().is_err(),
        "returned before its stamp was held"
    );

    g.broadcaster.send_transform(&odom_base(3, 3.0));
    let (found, took) = result.recv_timeout(HUNG).expect("the lookup hung");
    let found = found.expect("the transform at 3 s arrived");
    // The listener counts after it stored (and woke the lookup): wait for the count.
    wait_for("the third transform counted", || g.listener.stored() == 3);
    assert_eq!(found.header.stamp, Stamp::from_secs(3));
    assert_eq!(found.transform.translation.x, 3.0);
    assert!(
        took < HUNG,
        "woken by the arrival, not by the timeout: {took:?}"
    );
    assert_eq!(
        g.buffer.waiters(),
        0,
        "a returned wait leaves no waiter behind"
    );
    spin.stop().unwrap();
}

#[test]
fn an_answerable_lookup_returns_at_once_whatever_its_timeout() {
    let g = graph();
    g.buffer
        .set_transform(&odom_base(1, 1.0), "test", false)
        .unwrap();
    let found = g
        .buffer
        .lookup_transform_timeout("odom", "base_link", Stamp::LATEST, FOREVER)
        .unwrap();
    assert_eq!(found.header.stamp, Stamp::from_secs(1));
    assert!(
        g.buffer
            .can_transform_timeout("odom", "base_link", Stamp::from_secs(1), FOREVER)
    );
}

#[test]
fn a_timeout_gives_the_extrapolation_error_of_the_last_attempt() {
    let g = graph();
    g.buffer
        .set_transform(&odom_base(1, 1.0), "test", false)
        .unwrap();
    g.buffer
        .set_transform(&odom_base(2, 2.0), "test", false)
        .unwrap();
    let timeout = Duration::from_millis(20);
    let err = g
        .buffer
        .lookup_transform_timeout("odom", "base_link", Stamp::from_secs(5), timeout)
        .unwrap_err();
    let TransformError::Tf2(Tf2Error::Timeout {
        waited, last_error, ..
    }) = &err
    else {
        panic!("expected a timeout, got {err:?}");
    };
    assert!(
        *waited >= std::time::Duration::from_millis(20),
        "never early: {waited:?}"
    );
    match last_error.as_deref() {
        Some(Tf2Error::Extrapolation {
            frame,
            requested,
            kind: Extrapolation::Future { earliest, latest },
            ..
        }) => {
            assert_eq!(frame, "base_link");
            assert_eq!(*requested, Stamp::from_secs(5));
            assert_eq!(
                (*earliest, *latest),
                (Stamp::from_secs(1), Stamp::from_secs(2))
            );
        }
        other => panic!("expected a future extrapolation, got {other:?}"),
    }
    assert_eq!(err.last_tf2_error().map(Tf2Error::tf2_code), Some(3));
    let text = err.to_string();
    assert!(
        text.contains("into the future") && text.contains("Fix:"),
        "{text}"
    );
    assert_eq!(g.buffer.waiters(), 0);
}

#[test]
fn a_timeout_on_an_unknown_frame_says_which_frames_exist() {
    let g = graph();
    g.buffer
        .set_transform(&odom_base(1, 1.0), "test", false)
        .unwrap();
    assert!(!g.buffer.can_transform_timeout(
        "odom",
        "lidar",
        Stamp::LATEST,
        Duration::from_millis(5)
    ));
    let err = g
        .buffer
        .check_transform_timeout(
            "odom",
            "lidar",
            Stamp::LATEST,
            Duration::from_millis(5),
            &CancelToken::new(),
        )
        .unwrap_err();
    match err.last_tf2_error() {
        Some(Tf2Error::Lookup { frame, known, .. }) => {
            assert_eq!(frame, "lidar");
            let mut known = known.clone();
            known.sort();
            assert_eq!(known, ["base_link", "odom"]);
        }
        other => panic!("expected a lookup error, got {other:?}"),
    }
    // A timeout of zero does not wait: the lookup's own error.
    let err = g
        .buffer
        .lookup_transform_timeout("odom", "lidar", Stamp::LATEST, Duration::ZERO)
        .unwrap_err();
    assert!(
        matches!(err, TransformError::Tf2(Tf2Error::Lookup { .. })),
        "{err:?}"
    );
    // Nor does a frame id no transform could ever fix.
    let err = g
        .buffer
        .lookup_transform_timeout("/odom", "lidar", Stamp::LATEST, FOREVER)
        .unwrap_err();
    assert!(
        matches!(err, TransformError::Tf2(Tf2Error::InvalidArgument { .. })),
        "{err:?}"
    );
}

#[test]
fn a_cancel_token_ends_the_wait() {
    let g = graph();
    let cancel = CancelToken::new();
    let (buffer, token) = (g.buffer.clone(), cancel.clone());
    let result = on_thread(move || {
        buffer.lookup_transform_with_cancel("odom", "base_link", Stamp::LATEST, FOREVER, &token)
    });
    wait_for("the lookup waits", || g.buffer.waiters() == 1);
    cancel.cancel();
    let err = result
        .recv_timeout(HUNG)
        .expect("cancel did not end the wait")
        .unwrap_err();
    match &err {
        TransformError::Cancelled { last_error, .. } => assert!(
            matches!(last_error.as_deref(), Some(Tf2Error::Lookup { .. })),
            "{err:?}"
        ),
        other => panic!("expected Cancelled, got {other:?}"),
    }
    assert_eq!(g.buffer.waiters(), 0);
}

#[test]
fn the_executor_shutting_down_ends_a_wait_made_in_its_callback() {
    let r = robot(
        Listening::InItsOwnGroup,
        Executor::multi_threaded(2).unwrap(),
    );
    let (_timer, rx) = r.lookup_in_a_timer(Stamp::LATEST);
    let spin = r.exec.spin_thread().unwrap();
    wait_for("the lookup waits", || r.buffer.waiters() == 1);
    let report = r.exec.shutdown(Duration::from_secs(30));
    let result = rx
        .recv_timeout(HUNG)
        .expect("shutdown did not end the wait");
    assert!(
        matches!(result, Err(TransformError::ShutDown { program: false, .. })),
        "{result:?}"
    );
    assert!(report.is_clean(), "{report:?}");
    let _ = spin.stop();
}

/// What a callback's lookup gave, and how long it took.
type Outcome = (
    Result<TransformStamped, TransformError>,
    std::time::Duration,
);

/// Spins `exec` until the first run of the callback `start` creates on `node` has looked
/// up with a long timeout, and returns what it got.
fn first_lookup_in_callback(
    exec: &Executor,
    buffer: &Buffer,
    start: impl FnOnce(Box<dyn Fn() + Send + Sync>) -> Box<dyn std::any::Any>,
) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let tx = parking_lot::Mutex::new(Some(tx));
    let (buffer, stopper) = (buffer.clone(), exec.clone());
    let body = move || {
        if let Some(tx) = tx.lock().take() {
            let began = std::time::Instant::now();
            let result = buffer.lookup_transform_timeout(
                "odom",
                "base_link",
                Stamp::LATEST,
                DEADLOCK_TIMEOUT,
            );
            let _ = tx.send((result, began.elapsed()));
            stopper.cancel();
        }
    };
    let _keep = start(Box::new(body));
    exec.spin().unwrap();
    rx.recv_timeout(HUNG).expect("the callback ran")
}

fn assert_would_deadlock(outcome: Outcome, reason: DeadlockReason, group: &str) {
    let (result, took) = outcome;
    match result {
        Err(TransformError::WouldDeadlock(err)) => {
            assert_eq!(err.reason, reason, "{err}");
            assert_eq!(err.group, group, "{err}");
            let text = err.to_string();
            assert!(
                text.contains("lookup_transform('odom', 'base_link'"),
                "{text}"
            );
            assert!(
                text.contains("Fix:") && text.contains("TransformListener"),
                "{text}"
            );
        }
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
    assert!(
        took < HUNG,
        "WouldDeadlock must come at once, took {took:?}"
    );
}

#[test]
fn a_lookup_in_a_timer_of_the_listeners_group_would_deadlock() {
    let r = robot(Listening::InTheDefaultGroup, Executor::single_threaded());
    let outcome = first_lookup_in_callback(&r.exec, &r.buffer, |body| {
        Box::new(
            r.node
                .create_timer(Duration::from_millis(1), move |_| body())
                .unwrap(),
        )
    });
    assert_would_deadlock(
        outcome,
        DeadlockReason::GroupHeld,
        r.node.default_callback_group().name(),
    );
    assert_eq!(r.buffer.waiters(), 0, "an impossible wait never waits");
}

#[test]
fn a_lookup_in_a_subscription_callback_of_the_listeners_group_would_deadlock() {
    let r = robot(Listening::InTheDefaultGroup, Executor::single_threaded());
    let publisher = r
        .node
        .create_publisher::<i64>("scan", kairos::graph::Qos::keep_last(1))
        .unwrap();
    let outcome = first_lookup_in_callback(&r.exec, &r.buffer, |body| {
        let sub = r
            .node
            .create_subscription("scan", kairos::graph::Qos::keep_last(1), move |_: &i64| {
                body()
            })
            .unwrap();
        publisher.publish(1);
        Box::new(sub)
    });
    assert_would_deadlock(
        outcome,
        DeadlockReason::GroupHeld,
        r.node.default_callback_group().name(),
    );
}

#[test]
fn a_listener_in_its_own_group_still_needs_a_second_worker() {
    let r = robot(Listening::InItsOwnGroup, Executor::single_threaded());
    let outcome = first_lookup_in_callback(&r.exec, &r.buffer, |body| {
        Box::new(
            r.node
                .create_timer(Duration::from_millis(1), move |_| body())
                .unwrap(),
        )
    });
    let text = match &outcome.0 {
        Err(e) => e.to_string(),
        Ok(_) => String::new(),
    };
    assert!(
        text.contains("single-threaded") && text.contains("wait_for_transform"),
        "{text}"
    );
    assert_would_deadlock(
        outcome,
        DeadlockReason::NoFreeWorker,
        r.node.default_callback_group().name(),
    );
}

#[test]
fn a_listener_in_its_own_group_on_a_multi_threaded_executor_answers_a_callback() {
    let r = robot(
        Listening::InItsOwnGroup,
        Executor::multi_threaded(2).unwrap(),
    );
    let (broadcaster, _talker) = r.talker();
    let (_timer, rx) = r.lookup_in_a_timer(Stamp::from_secs(1));
    let spin = r.exec.spin_thread().unwrap();
    wait_for("the lookup waits", || r.buffer.waiters() == 1);
    broadcaster.send_transform(&odom_base(1, 1.0));
    let found = rx.recv_timeout(HUNG).expect("the lookup hung").unwrap();
    assert_eq!(found.transform.translation.x, 1.0);
    wait_for("the transform counted", || r.listener.stored() == 1);
    spin.stop().unwrap();
}

#[test]
fn an_async_callback_awaits_a_transform_the_same_executor_delivers() {
    // One worker: the listener runs while the async callback is suspended.
    let r = robot(Listening::InItsOwnGroup, Executor::single_threaded());
    let (broadcaster, _talker) = r.talker();
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Arc::new(parking_lot::Mutex::new(Some(tx)));
    let in_timer = r.buffer.clone();
    let _timer = r
        .node
        .create_timer_async(Duration::from_millis(1), async move |_| {
            let Some(tx) = tx.lock().take() else {
                return;
            };
            let wait = in_timer.wait_for_transform(
                "odom",
                "base_link",
                Stamp::from_secs(1),
                FOREVER,
                &CancelToken::new(),
            );
            let _ = tx.send(wait.await);
        })
        .unwrap();
    let spin = r.exec.spin_thread().unwrap();
    wait_for("the future waits", || r.buffer.waiters() == 1);
    broadcaster.send_transform(&odom_base(1, 1.0));
    let found = rx.recv_timeout(HUNG).expect("the await hung").unwrap();
    assert_eq!(found.transform.translation.x, 1.0);
    assert_eq!(r.buffer.waiters(), 0);
    spin.stop().unwrap();
}

#[test]
fn awaiting_in_the_listeners_own_group_would_deadlock() {
    let r = robot(
        Listening::InTheDefaultGroup,
        Executor::multi_threaded(2).unwrap(),
    );
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Arc::new(parking_lot::Mutex::new(Some(tx)));
    let (in_timer, stopper) = (r.buffer.clone(), r.exec.clone());
    let _timer = r
        .node
        .create_timer_async(Duration::from_millis(1), async move |_| {
            let Some(tx) = tx.lock().take() else {
                return;
            };
            let wait = in_timer.wait_for_transform(
                "odom",
                "base_link",
                Stamp::LATEST,
                DEADLOCK_TIMEOUT,
                &CancelToken::new(),
            );
            let _ = tx.send(wait.await);
            stopper.cancel();
        })
        .unwrap();
    r.exec.spin().unwrap();
    let result = rx.recv_timeout(HUNG).expect("the await hung");
    match result {
        Err(TransformError::WouldDeadlock(err)) => {
            assert_eq!(err.reason, DeadlockReason::GroupHeld);
            assert_eq!(err.group, r.node.default_callback_group().name());
        }
        other => panic!("expected WouldDeadlock, got {other:?}"),
    }
}

#[test]
fn a_timeout_on_simulation_time_ends_when_simulation_time_passes_it() {
    let context = Context::new();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    robot.set_use_sim_time(true).unwrap();
    let sim = context.sim_clock().unwrap();
    let at = |ms: i64| Time::new(ClockKind::Sim, ms * 1_000_000);
    sim.publish(at(1_000)).unwrap();
    let buffer = Buffer::new(robot.clock());
    buffer
        .set_transform(&odom_base(1, 1.0), "test", false)
        .unwrap();

    let waiting = buffer.clone();
    let result = on_thread(move || {
        waiting.lookup_transform_timeout(
            "odom",
            "base_link",
            Stamp::from_secs(9),
            Duration::from_secs(5),
        )
    });
    wait_for("the lookup waits on the simulated clock", || {
        buffer.waiters() == 1 && sim.pending_waits() == 1
    });
    // 3 s of simulation time: the 5 s timeout (due at 6 s) has not passed.
    sim.publish(at(3_000)).unwrap();
    wait_for("the wait is still registered", || sim.pending_waits() == 1);
    assert!(
        result.try_recv().is_err(),
        "ended before its simulated deadline"
    );

    sim.publish(at(6_500)).unwrap();
    let err = result
        .recv_timeout(HUNG)
        .expect("simulation time passed the timeout, the wait hung")
        .unwrap_err();
    match &err {
        TransformError::Tf2(Tf2Error::Timeout {
            waited, last_error, ..
        }) => {
            assert_eq!(
                *waited,
                std::time::Duration::from_millis(5_500),
                "measured on the simulated clock"
            );
            assert!(
                matches!(last_error.as_deref(), Some(Tf2Error::Extrapolation { .. })),
                "{err:?}"
            );
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(buffer.waiters(), 0);
}

#[test]
fn a_transform_inserted_during_a_simulated_wait_ends_it_before_the_deadline() {
    // A stall timeout of an hour: a silent /clock never makes the wait look again, so
    // only the insertion can end it.
    let stall = SimStall::new(StallPolicy::Wait, FOREVER);
    let context = Context::with_sim_stall(stall).unwrap();
    let robot = Node::new_in(&context, "robot", "/").unwrap();
    robot.set_use_sim_time(true).unwrap();
    let sim = context.sim_clock().unwrap();
    sim.publish(Time::new(ClockKind::Sim, 1_000_000_000))
        .unwrap();
    let buffer = Buffer::new(robot.clock());
    let waiting = buffer.clone();
    let result = on_thread(move || {
        waiting.lookup_transform_timeout(
            "odom",
            "base_link",
            Stamp::from_secs(1),
            Duration::from_secs(5),
        )
    });
    wait_for("the lookup waits", || buffer.waiters() == 1);
    // Simulation time stands still; the insertion alone ends the wait.
    buffer
        .set_transform(&odom_base(1, 1.0), "test", false)
        .unwrap();
    let found = result
        .recv_timeout(HUNG)
        .expect("the insertion did not wake the wait")
        .unwrap();
    assert_eq!(found.transform.translation.x, 1.0);
    assert_eq!(
        robot.clock().now(),
        Time::new(ClockKind::Sim, 1_000_000_000)
    );
}

#[test]
fn the_async_form_times_out_and_cancels_as_the_blocking_one_does() {
    let g = graph();
    g.buffer
        .set_transform(&odom_base(1, 1.0), "test", false)
        .unwrap();
    let timeout = Duration::from_millis(20);
    let wait = g.buffer.wait_for_transform(
        "odom",
        "base_link",
        Stamp::from_secs(2),
        timeout,
        &CancelToken::new(),
    );
    let err = futures::executor::block_on(wait).unwrap_err();
    match &err {
        TransformError::Tf2(Tf2Error::Timeout {
            waited, last_error, ..
        }) => {
            assert!(
                *waited >= std::time::Duration::from_millis(20),
                "never early"
            );
            assert!(
                matches!(last_error.as_deref(), Some(Tf2Error::Extrapolation { .. })),
                "{err:?}"
            );
        }
        other => panic!("expected a timeout, got {other:?}"),
    }

    let cancel = CancelToken::new();
    let wait =
        g.buffer
            .wait_for_transform("odom", "base_link", Stamp::from_secs(2), FOREVER, &cancel);
    let result = on_thread(move || futures::executor::block_on(wait));
    wait_for("the future waits", || g.buffer.waiters() == 1);
    cancel.cancel();
    let result = result
        .recv_timeout(HUNG)
        .expect("cancel did not end the await");
    assert!(
        matches!(result, Err(TransformError::Cancelled { .. })),
        "{result:?}"
    );
    assert_eq!(g.buffer.waiters(), 0, "a finished future leaves no waiter");
}
