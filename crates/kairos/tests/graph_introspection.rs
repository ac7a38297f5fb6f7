//! Service introspection (`configure_introspection`): a server and a client publish each
//! moment of a call on `<service>/_service_event` as ROS 2 does, off until asked, with
//! the request and response only when asked for contents, every event of one call naming
//! the same client and sequence number, stamped by the clock given.

use kairos::exec::Executor;
use kairos::graph::{Client, Context, EntityKind, IntrospectionState, Node, Qos, Service};
use kairos::time::{ClockKind, Duration, SimClock, Time};
use kairos_msgs::example_interfaces::srv::{
    AddTwoInts, AddTwoIntsEvent, AddTwoIntsRequest, AddTwoIntsResponse,
};
use kairos_msgs::service_msgs::msg::ServiceEventInfo;
use std::sync::{Arc, Mutex};

const TIMEOUT: Duration = Duration::from_secs(20);

struct Setup {
    exec: Executor,
    service: Service<AddTwoIntsRequest, AddTwoIntsResponse>,
    client: Client<AddTwoInts>,
    events: Arc<Mutex<Vec<AddTwoIntsEvent>>>,
    _listener: kairos::graph::Subscription<AddTwoIntsEvent>,
    server_node: Node,
}

fn setup() -> Setup {
    let ctx = Context::new();
    let server_node = Node::new_in(&ctx, "adder", "/").unwrap();
    let service = server_node
        .create_service("add", |r: AddTwoIntsRequest| AddTwoIntsResponse {
            sum: r.a + r.b,
        })
        .unwrap();
    let caller = Node::new_in(&ctx, "caller", "/").unwrap();
    let client = caller.create_client::<AddTwoInts>("add").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let listener = caller
        .create_subscription(
            "/add/_service_event",
            Qos::keep_last(100),
            move |e: Arc<AddTwoIntsEvent>| sink.lock().unwrap().push((*e).clone()),
        )
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&server_node).unwrap();
    exec.add_node(&caller).unwrap();
    Setup {
        exec,
        service,
        client,
        events,
        _listener: listener,
        server_node,
    }
}

impl Setup {
    /// Calls `a + b` and spins until `expected` events were heard (or the timeout).
    fn call(&self, a: i64, b: i64, expected: usize) -> Vec<AddTwoIntsEvent> {
        self.events.lock().unwrap().clear();
        let response = self.client.call_async(AddTwoIntsRequest { a, b });
        self.exec
            .spin_until_future_complete(response, TIMEOUT)
            .expect("the executor ran")
            .expect("the call completes");
        let deadline = std::time::Instant::now() + TIMEOUT.to_std().unwrap();
        while self.events.lock().unwrap().len() < expected && std::time::Instant::now() < deadline {
            self.exec.spin_some().unwrap();
        }
        // Whatever else was coming has come: the executor has nothing left to run.
        self.exec.spin_some().unwrap();
        self.events.lock().unwrap().clone()
    }
}

fn kinds(events: &[AddTwoIntsEvent]) -> Vec<u8> {
    let mut kinds: Vec<u8> = events.iter().map(|e| e.info.event_type).collect();
    kinds.sort();
    kinds
}

fn by_kind(events: &[AddTwoIntsEvent], kind: u8) -> &AddTwoIntsEvent {
    events
        .iter()
        .find(|e| e.info.event_type == kind)
        .unwrap_or_else(|| panic!("no event of type {kind} in {events:?}"))
}

#[test]
fn nothing_is_published_until_introspection_is_configured() {
    let s = setup();
    let heard = s.call(2, 3, 0);
    assert!(heard.is_empty(), "{heard:?}");
    let view = s.server_node.graph();
    assert_eq!(
        view.count(EntityKind::Publisher, "/add/_service_event"),
        0,
        "no event publisher exists while introspection is off"
    );
}

#[test]
fn contents_carry_the_request_and_response_and_one_call_is_named_alike_on_both_sides() {
    let s = setup();
    let sim = SimClock::new();
    sim.publish(Time::new(ClockKind::Sim, 42_000_000_007))
        .unwrap();
    let clock = sim.clock();
    let qos = Qos::keep_last(10);
    s.service
        .configure_introspection(&clock, qos, IntrospectionState::Contents)
        .unwrap();
    s.client
        .configure_introspection(&clock, qos, IntrospectionState::Contents)
        .unwrap();

    let events = s.call(2, 3, 4);
    assert_eq!(
        kinds(&events),
        [
            ServiceEventInfo::REQUEST_SENT,
            ServiceEventInfo::REQUEST_RECEIVED,
            ServiceEventInfo::RESPONSE_SENT,
            ServiceEventInfo::RESPONSE_RECEIVED
        ]
    );
    for kind in [
        ServiceEventInfo::REQUEST_SENT,
        ServiceEventInfo::REQUEST_RECEIVED,
    ] {
        let e = by_kind(&events, kind);
        assert_eq!(e.request, [AddTwoIntsRequest { a: 2, b: 3 }], "{e:?}");
        assert!(e.response.is_empty(), "{e:?}");
    }
    for kind in [
        ServiceEventInfo::RESPONSE_SENT,
        ServiceEventInfo::RESPONSE_RECEIVED,
    ] {
        let e = by_kind(&events, kind);
        assert_eq!(e.response, [AddTwoIntsResponse { sum: 5 }], "{e:?}");
        assert!(e.request.is_empty(), "{e:?}");
    }
    let first = &events[0].info;
    assert_ne!(first.client_gid, [0u8; 16]);
    for e in &events {
        assert_eq!(
            e.info.client_gid, first.client_gid,
            "one client: {events:?}"
        );
        assert_eq!(e.info.sequence_number, first.sequence_number, "{events:?}");
        assert_eq!(
            (e.info.stamp.sec, e.info.stamp.nanosec),
            (42, 7),
            "stamped by the simulated clock given"
        );
    }

    // The next call is the client's next sequence number.
    let next = s.call(10, -4, 4);
    assert!(
        next.iter()
            .all(|e| e.info.sequence_number == first.sequence_number + 1)
    );
}

#[test]
fn metadata_leaves_out_the_contents_and_off_stops_the_events() {
    let s = setup();
    let clock = kairos::time::Clock::system();
    let qos = Qos::keep_last(10);
    s.service
        .configure_introspection(&clock, qos, IntrospectionState::Metadata)
        .unwrap();
    s.client
        .configure_introspection(&clock, qos, IntrospectionState::Metadata)
        .unwrap();
    let events = s.call(1, 1, 4);
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| e.request.is_empty() && e.response.is_empty()),
        "{events:?}"
    );

    // Only the server's side now.
    s.client
        .configure_introspection(&clock, qos, IntrospectionState::Off)
        .unwrap();
    let events = s.call(1, 1, 2);
    assert_eq!(
        kinds(&events),
        [
            ServiceEventInfo::REQUEST_RECEIVED,
            ServiceEventInfo::RESPONSE_SENT
        ]
    );
    s.service
        .configure_introspection(&clock, qos, IntrospectionState::Off)
        .unwrap();
    assert!(s.call(1, 1, 0).is_empty());
}

#[test]
fn a_call_that_never_left_is_not_reported_sent() {
    let ctx = Context::new();
    let caller = Node::new_in(&ctx, "caller", "/").unwrap();
    let client = caller.create_client::<AddTwoInts>("nobody").unwrap();
    client
        .configure_introspection(
            &kairos::time::Clock::system(),
            Qos::keep_last(10),
            IntrospectionState::Contents,
        )
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let _listener = caller
        .create_subscription(
            "/nobody/_service_event",
            Qos::keep_last(10),
            move |e: Arc<AddTwoIntsEvent>| sink.lock().unwrap().push((*e).clone()),
        )
        .unwrap();
    let exec = Executor::single_threaded();
    exec.add_node(&caller).unwrap();
    let response = client.call_async(AddTwoIntsRequest { a: 1, b: 2 });
    let outcome = exec
        .spin_until_future_complete(response, TIMEOUT)
        .expect("the executor ran");
    assert!(
        matches!(
            outcome,
            Err(kairos::graph::CallError::ServiceUnavailable { .. })
        ),
        "{outcome:?}"
    );
    exec.spin_some().unwrap();
    assert!(events.lock().unwrap().is_empty(), "{:?}", events.lock());
}
