//! A managed node in one process: transitions drive its publisher, a supervisor drives it
//! through the `lifecycle_msgs` services, every change is an event, and failures, errors,
//! panics, refused and concurrent requests end where ROS 2's machine says. No test
//! sleeps: callbacks step on channels, every wait has a deadline.

use kairos::exec::{ExecError, Executor};
use kairos::graph::{Client, Context, EntityKind, Node, Qos};
use kairos_lifecycle::{
    CallbackReturn, Lifecycle, LifecycleError, LifecycleNode, NoCallbacks, State, Transition,
};
use kairos_msgs::lifecycle_msgs::msg::{Transition as TransitionMsg, TransitionEvent};
use kairos_msgs::lifecycle_msgs::srv::{
    ChangeState, ChangeStateRequest, GetAvailableStates, GetAvailableStatesRequest,
    GetAvailableTransitions, GetAvailableTransitionsRequest, GetState, GetStateRequest,
};
use kairos_msgs::std_msgs::msg::String as StringMsg;
use std::sync::mpsc;
use std::time::Duration as StdDuration;

const LIMIT: StdDuration = StdDuration::from_secs(30);

/// A context with the managed node's node and a supervisor node, spun by two threads.
struct System {
    _context: Context,
    managed: Node,
    supervisor: Node,
    executor: Executor,
    spinner: Option<std::thread::JoinHandle<Result<(), ExecError>>>,
}

impl System {
    fn new() -> Self {
        let context = Context::new();
        let managed = Node::new_in(&context, "camera", "/robot").unwrap();
        let supervisor = Node::new_in(&context, "supervisor", "/").unwrap();
        let executor = Executor::multi_threaded(2).unwrap();
        executor.add_node(&managed).unwrap();
        executor.add_node(&supervisor).unwrap();
        let spinner = {
            let executor = executor.clone();
            Some(std::thread::spawn(move || executor.spin()))
        };
        System {
            _context: context,
            managed,
            supervisor,
            executor,
            spinner,
        }
    }
}

impl Drop for System {
    fn drop(&mut self) {
        let report = self.executor.shutdown(LIMIT);
        assert!(report.is_clean(), "{report}");
        if let Some(spinner) = self.spinner.take() {
            // A test that never needed the executor may shut it down before it spun.
            let spun = spinner.join().unwrap();
            assert!(
                matches!(spun, Ok(()) | Err(ExecError::ShutDown)),
                "{spun:?}"
            );
        }
    }
}

#[test]
fn transitions_drive_a_publisher() {
    let system = System::new();
    let (tx, rx) = mpsc::channel();
    let _sub = system
        .supervisor
        .create_subscription("/robot/image", Qos::keep_last(10), move |m: &StringMsg| {
            let _ = tx.send(m.data.clone());
        })
        .unwrap();
    let camera = LifecycleNode::new(system.managed.clone(), NoCallbacks).unwrap();
    let images = camera
        .create_publisher::<StringMsg>("image", Qos::keep_last(10))
        .unwrap();
    let publish = |text: &str| {
        images.publish(StringMsg {
            data: text.to_owned(),
        })
    };
    assert_eq!(camera.state(), State::Unconfigured);
    assert_eq!(publish("unconfigured"), 0);
    assert_eq!(camera.configure().unwrap(), State::Inactive);
    assert_eq!(publish("inactive"), 0);
    assert!(!images.is_activated());
    assert_eq!(camera.activate().unwrap(), State::Active);
    assert!(images.is_activated());
    assert_eq!(publish("active"), 1);
    assert_eq!(camera.deactivate().unwrap(), State::Inactive);
    assert_eq!(publish("deactivated"), 0);
    assert_eq!(camera.shutdown().unwrap(), State::Finalized);
    assert_eq!(publish("finalized"), 0);
    assert_eq!(images.dropped_while_inactive(), 4);
    assert_eq!(rx.recv_timeout(LIMIT).unwrap(), "active");
    assert!(rx.try_recv().is_err(), "only the active message went out");
    match camera.activate() {
        Err(LifecycleError::NotAllowed { state, .. }) => assert_eq!(state, State::Finalized),
        other => panic!("a finalized node cannot be activated: {other:?}"),
    }
}

#[test]
fn a_supervisor_drives_the_node_through_its_services_and_sees_every_change() {
    let system = System::new();
    let (tx, events) = mpsc::channel();
    let _events = system
        .supervisor
        .create_subscription(
            "/robot/camera/transition_event",
            Qos::keep_last(100),
            move |e: &TransitionEvent| {
                let _ = tx.send((e.transition.id, e.start_state.id, e.goal_state.id));
            },
        )
        .unwrap();
    let camera = LifecycleNode::new(system.managed.clone(), NoCallbacks).unwrap();
    let change: Client<ChangeState> = system
        .supervisor
        .create_client("/robot/camera/change_state")
        .unwrap();
    let get: Client<GetState> = system
        .supervisor
        .create_client("/robot/camera/get_state")
        .unwrap();
    let available: Client<GetAvailableTransitions> = system
        .supervisor
        .create_client("/robot/camera/get_available_transitions")
        .unwrap();
    let graph: Client<GetAvailableTransitions> = system
        .supervisor
        .create_client("/robot/camera/get_transition_graph")
        .unwrap();
    let states: Client<GetAvailableStates> = system
        .supervisor
        .create_client("/robot/camera/get_available_states")
        .unwrap();
    let ask = |id: u8, label: &str| {
        change
            .call(
                ChangeStateRequest {
                    transition: TransitionMsg {
                        id,
                        label: label.into(),
                    },
                },
                LIMIT,
            )
            .unwrap()
            .success
    };
    assert!(ask(1, ""), "configure by id");
    let state = get.call(GetStateRequest::default(), LIMIT).unwrap();
    assert_eq!(
        (state.current_state.id, state.current_state.label.as_str()),
        (2, "inactive")
    );
    let from_inactive: Vec<u8> = available
        .call(GetAvailableTransitionsRequest::default(), LIMIT)
        .unwrap()
        .available_transitions
        .iter()
        .map(|t| t.transition.id)
        .collect();
    assert_eq!(from_inactive, [2, 3, 6]);
    assert!(!ask(4, ""), "deactivate is not a transition of inactive");
    assert!(!ask(0, "jump"), "no such label");
    assert_eq!(camera.refused_requests(), 2);
    assert!(ask(0, "activate"), "activate by label");
    assert_eq!(camera.state(), State::Active);
    assert!(ask(7, "shutdown"));
    assert_eq!(camera.state(), State::Finalized);
    assert_eq!(
        graph
            .call(GetAvailableTransitionsRequest::default(), LIMIT)
            .unwrap()
            .available_transitions
            .len(),
        25
    );
    assert_eq!(
        states
            .call(GetAvailableStatesRequest::default(), LIMIT)
            .unwrap()
            .available_states
            .len(),
        11
    );
    let seen: Vec<(u8, u8, u8)> = (0..6)
        .map(|_| events.recv_timeout(LIMIT).unwrap())
        .collect();
    assert_eq!(
        seen,
        [
            (1, 1, 10),
            (10, 10, 2),
            (3, 2, 13),
            (30, 13, 3),
            (7, 3, 12),
            (50, 12, 4)
        ]
    );
    assert!(
        events.try_recv().is_err(),
        "refused requests change nothing"
    );
}

/// Callbacks that return what the test scripted, in order.
struct Scripted(mpsc::Receiver<CallbackReturn>);

impl Scripted {
    fn next(&mut self) -> CallbackReturn {
        self.0
            .recv_timeout(LIMIT)
            .expect("the test scripted this callback")
    }
}

impl Lifecycle for Scripted {
    fn on_configure(&mut self, _: State) -> CallbackReturn {
        self.next()
    }
    fn on_activate(&mut self, _: State) -> CallbackReturn {
        self.next()
    }
    fn on_error(&mut self, previous: State) -> CallbackReturn {
        assert!(
            !previous.is_primary(),
            "on_error gets the transition state: {previous}"
        );
        self.next()
    }
}

#[test]
fn failure_returns_where_it_came_from_and_error_goes_through_error_processing() {
    let system = System::new();
    let (script, scripted) = mpsc::channel();
    let node = LifecycleNode::new(system.managed.clone(), Scripted(scripted)).unwrap();
    script.send(CallbackReturn::Failure).unwrap();
    match node.configure() {
        Err(LifecycleError::Callback {
            returned: CallbackReturn::Failure,
            state: State::Unconfigured,
            ..
        }) => {}
        other => panic!("a failed configure stays unconfigured: {other:?}"),
    }
    script.send(CallbackReturn::Success).unwrap();
    assert_eq!(node.configure().unwrap(), State::Inactive);
    // An error in activation, recovered by on_error: back to unconfigured.
    script.send(CallbackReturn::Error).unwrap();
    script.send(CallbackReturn::Success).unwrap();
    assert!(matches!(
        node.activate(),
        Err(LifecycleError::Callback {
            returned: CallbackReturn::Error,
            state: State::Unconfigured,
            ..
        })
    ));
    // An error on_error cannot recover from: finalized.
    script.send(CallbackReturn::Error).unwrap();
    script.send(CallbackReturn::Failure).unwrap();
    assert!(node.configure().is_err());
    assert_eq!(node.state(), State::Finalized);
}

struct Panicking;

impl Lifecycle for Panicking {
    fn on_configure(&mut self, _: State) -> CallbackReturn {
        panic!("the camera is unplugged");
    }
}

#[test]
fn a_callback_that_panics_is_an_error_not_an_unwind() {
    let system = System::new();
    let node = LifecycleNode::new(system.managed.clone(), Panicking).unwrap();
    assert!(matches!(
        node.configure(),
        Err(LifecycleError::Callback {
            returned: CallbackReturn::Error,
            state: State::Unconfigured,
            ..
        })
    ));
}

/// Blocks in `on_configure` until the test lets it go.
struct Slow {
    entered: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
}

impl Lifecycle for Slow {
    fn on_configure(&mut self, _: State) -> CallbackReturn {
        self.entered.send(()).unwrap();
        self.release.recv_timeout(LIMIT).unwrap();
        CallbackReturn::Success
    }
}

#[test]
fn a_transition_asked_for_during_another_is_refused_at_once() {
    let system = System::new();
    let (entered, in_configure) = mpsc::channel();
    let (release, released) = mpsc::channel();
    let node = std::sync::Arc::new(
        LifecycleNode::new(
            system.managed.clone(),
            Slow {
                entered,
                release: released,
            },
        )
        .unwrap(),
    );
    let configuring = {
        let node = node.clone();
        std::thread::spawn(move || node.configure())
    };
    in_configure.recv_timeout(LIMIT).unwrap();
    assert_eq!(node.state(), State::Configuring);
    assert!(matches!(
        node.trigger(Transition::Shutdown),
        Err(LifecycleError::InProgress {
            transition: Transition::Shutdown,
            ..
        })
    ));
    release.send(()).unwrap();
    assert_eq!(configuring.join().unwrap().unwrap(), State::Inactive);
}

#[test]
fn without_its_interface_a_node_serves_nothing_and_still_transitions() {
    let system = System::new();
    let camera = LifecycleNode::with_interface(system.managed.clone(), NoCallbacks, false).unwrap();
    let graph = system.supervisor.graph();
    let of_camera = |kind| {
        graph
            .names_and_types_by_node(kind, "/robot", "camera")
            .unwrap()
    };
    assert_eq!(
        of_camera(EntityKind::Service),
        Default::default(),
        "no services"
    );
    assert!(
        !of_camera(EntityKind::Publisher).contains_key("/robot/camera/transition_event"),
        "no transition events"
    );
    assert_eq!(camera.configure().unwrap(), State::Inactive);
    assert_eq!(camera.activate().unwrap(), State::Active);
    // The same name may be managed again with the interface: nothing was taken.
    let twin = Node::new_in(&system._context, "camera", "/robot").unwrap();
    let served = LifecycleNode::new(twin, NoCallbacks).unwrap();
    assert_eq!(served.state(), State::Unconfigured);
}
