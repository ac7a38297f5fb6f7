//! The buffer server (`tf2_msgs/action/LookupTransform`) asked by an action client, as
//! tf2_ros's `BufferClient` asks it: a lookup answered by a transform that arrives while
//! it waits, a lookup that fails with tf2's error code and the facts, a waiting lookup
//! ended by cancel and by dropping the server, and the bound on waiting lookups. Every
//! assertion is on outcomes and counts; times are only "did not hang" bounds.

use kairos::exec::Executor;
use kairos::graph::{Context, Node};
use kairos::time::Duration;
use kairos_action::{ActionClient, ActionError, ClientGoalHandle, GoalStatus};
use kairos_msgs::builtin_interfaces::msg::{Duration as DurationMsg, Time as TimeMsg};
use kairos_msgs::tf2_msgs::action::{LookupTransform, LookupTransformGoal};
use kairos_tf2::{Quaternion, Stamp, Transform, TransformStamped, Vector3};
use kairos_tf2_ros::server::MAX_LOOKUPS;
use kairos_tf2_ros::{Buffer, BufferServer, TransformBroadcaster, TransformListener};

/// How long a call or a result may take before the test calls it hung.
const LIMIT: Duration = Duration::from_secs(60);

/// A goal's wait: far longer than any test, so only an answer, a cancel or a drop ends it.
const FOREVER: DurationMsg = DurationMsg {
    sec: 3600,
    nanosec: 0,
};

struct System {
    _context: Context,
    _server_node: Node,
    buffer: Buffer,
    _listener: TransformListener,
    server: Option<BufferServer>,
    broadcaster: TransformBroadcaster,
    client: ActionClient<LookupTransform>,
    executor: Executor,
}

impl System {
    fn new() -> System {
        let context = Context::new();
        let server_node = Node::new_in(&context, "buffer_server", "/").unwrap();
        let client_node = Node::new_in(&context, "buffer_client", "/").unwrap();
        let buffer = Buffer::new(server_node.clock());
        let listener = TransformListener::new(&server_node, buffer.clone()).unwrap();
        let server = BufferServer::new(&server_node, buffer.clone(), "tf2_buffer_server").unwrap();
        let broadcaster = TransformBroadcaster::new(&client_node).unwrap();
        let client = ActionClient::new(&client_node, "tf2_buffer_server").unwrap();
        let executor = Executor::multi_threaded(2).unwrap();
        executor.add_node(&server_node).unwrap();
        executor.add_node(&client_node).unwrap();
        let spinner = executor.clone();
        std::thread::spawn(move || spinner.spin());
        assert!(
            client.wait_for_server(LIMIT),
            "the buffer server never appeared"
        );
        System {
            _context: context,
            _server_node: server_node,
            buffer,
            _listener: listener,
            server: Some(server),
            broadcaster,
            client,
            executor,
        }
    }

    fn ask(
        &self,
        goal: LookupTransformGoal,
    ) -> Result<ClientGoalHandle<LookupTransform>, ActionError> {
        self.client.send_goal(goal, LIMIT)
    }

    fn waiting(&self) -> usize {
        self.server.as_ref().map_or(0, BufferServer::waiting)
    }

    /// Spins (bounded) until `n` lookups wait in the server.
    fn wait_until_waiting(&self, n: usize) {
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self.waiting() != n {
            assert!(
                std::time::Instant::now() < give_up,
                "{} lookups wait, never {n}",
                self.waiting()
            );
            std::thread::yield_now();
        }
    }
}

impl Drop for System {
    fn drop(&mut self) {
        self.server.take();
        let report = self.executor.shutdown(LIMIT);
        if !std::thread::panicking() {
            assert!(report.is_clean(), "{report}");
        }
    }
}

fn goal(target: &str, source: &str, timeout: DurationMsg) -> LookupTransformGoal {
    LookupTransformGoal {
        target_frame: target.into(),
        source_frame: source.into(),
        source_time: TimeMsg { sec: 5, nanosec: 0 },
        timeout,
        ..Default::default()
    }
}

fn odom_base(secs: i64, x: f64) -> TransformStamped {
    let t = Transform::new(Vector3::new(x, 0.0, 0.0), Quaternion::IDENTITY);
    TransformStamped::new("odom", "base_link", Stamp::from_secs(secs), t)
}

#[test]
fn a_waiting_lookup_is_answered_by_the_transform_that_arrives() {
    let system = System::new();
    let handle = system.ask(goal("odom", "base_link", FOREVER)).unwrap();
    system.wait_until_waiting(1);
    // Two transforms around the requested time 5 s: the answer is interpolated.
    system.broadcaster.send_transform(&odom_base(4, 4.0));
    system.broadcaster.send_transform(&odom_base(6, 6.0));
    let outcome = handle.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Succeeded);
    assert_eq!(
        outcome.result.error.error, 0,
        "{}",
        outcome.result.error.error_string
    );
    let t = &outcome.result.transform;
    assert_eq!(
        (t.header.frame_id.as_str(), t.child_frame_id.as_str()),
        ("odom", "base_link")
    );
    assert!((t.transform.translation.x - 5.0).abs() < 1e-9, "{t:?}");
    assert_eq!(system.waiting(), 0);
}

#[test]
fn a_lookup_that_cannot_be_answered_is_aborted_with_tf2s_code_and_the_facts() {
    let system = System::new();
    system
        .buffer
        .set_transform(&odom_base(4, 4.0), "test", false)
        .unwrap();
    let short = DurationMsg {
        sec: 0,
        nanosec: 50_000_000,
    };
    let handle = system.ask(goal("odom", "camera", short)).unwrap();
    let outcome = handle.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Aborted);
    // tf2_msgs/TF2Error: LOOKUP_ERROR = 1.
    assert_eq!(
        outcome.result.error.error, 1,
        "{}",
        outcome.result.error.error_string
    );
    let text = &outcome.result.error.error_string;
    assert!(text.contains("camera") && text.contains("odom"), "{text}");
}

#[test]
fn a_cancel_ends_a_waiting_lookup_as_canceled() {
    let system = System::new();
    let handle = system.ask(goal("odom", "base_link", FOREVER)).unwrap();
    system.wait_until_waiting(1);
    handle.cancel(LIMIT).unwrap();
    let outcome = handle.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Canceled);
    system.wait_until_waiting(0);
}

#[test]
fn dropping_the_server_ends_its_waiting_lookups() {
    let mut system = System::new();
    let _handle = system.ask(goal("odom", "base_link", FOREVER)).unwrap();
    // The server counts a goal when it admits it; its thread joins the buffer's waiters
    // a moment later.
    wait_for("the lookup waits in the buffer", || {
        system.buffer.waiters() == 1
    });
    drop(system.server.take());
    // The goal's end never reaches the client once the server is gone, so the proof is
    // that the buffer no longer has the lookup's waiter (which would stay for an hour).
    wait_for("the lookup ends with its server", || {
        system.buffer.waiters() == 0
    });
}

/// Spins (bounded) until `ready` holds: synchronization on observable state, not a sleep.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready() {
        assert!(
            std::time::Instant::now() < give_up,
            "never happened: {what}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn lookups_beyond_the_bound_are_rejected_not_queued() {
    let system = System::new();
    let mut handles = Vec::new();
    for _ in 0..MAX_LOOKUPS {
        handles.push(system.ask(goal("odom", "base_link", FOREVER)).unwrap());
    }
    system.wait_until_waiting(MAX_LOOKUPS);
    match system.ask(goal("odom", "base_link", FOREVER)) {
        Err(ActionError::Rejected { .. }) => {}
        other => panic!("lookup {} was not rejected: {other:?}", MAX_LOOKUPS + 1),
    }
    // One transform answers them all.
    system.broadcaster.send_transform(&odom_base(5, 5.0));
    for handle in &handles {
        assert_eq!(
            handle.get_result(LIMIT).unwrap().status,
            GoalStatus::Succeeded
        );
    }
    system.wait_until_waiting(0);
    // And room is made again.
    let again = system.ask(goal("odom", "base_link", FOREVER)).unwrap();
    assert_eq!(
        again.get_result(LIMIT).unwrap().status,
        GoalStatus::Succeeded
    );
}
