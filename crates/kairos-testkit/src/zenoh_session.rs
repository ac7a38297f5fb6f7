//! Zenoh sessions for tests, on loopback only and with multicast scouting off, so that a
//! test meets its own peers and nothing else on the machine or the network, and with a
//! reliable send allowed to wait for a starved link ([`BLOCKED_SEND_BEFORE_CLOSE_US`]).

use zenoh::Wait;

/// How long a test session's reliable (blocking) send may wait for room in its link's
/// queue before zenoh closes the transport (`transport/link/tx/queue/congestion_control/
/// block/wait_before_close`, 5 s by default), in microseconds. On a 2-core machine beside
/// CPU hogs, a router relaying megabytes between two sessions of one test process was
/// seen not to drain a batch within 5 s: zenoh logged "Unable to push non droppable
/// network message ... Closing transport!" and the message was lost. The tests are about
/// kairos, not about how fast a starved router drains; 60 s is longer than any of their
/// waits.
pub const BLOCKED_SEND_BEFORE_CLOSE_US: u64 = 60_000_000;

fn allow_blocked_sends(config: &mut zenoh::Config) {
    config
        .insert_json5(
            "transport/link/tx/queue/congestion_control/block/wait_before_close",
            &BLOCKED_SEND_BEFORE_CLOSE_US.to_string(),
        )
        .expect("a blocking-send bound");
}

/// A session configuration: `mode` ("peer", "client" or "router"), connected to
/// `127.0.0.1:connect` when given, listening on `127.0.0.1:listen` (0: a port of the OS's
/// choice).
pub fn loopback_config(mode: &str, connect: Option<u16>, listen: u16) -> zenoh::Config {
    let mut config = zenoh::Config::default();
    config
        .insert_json5("mode", &format!(r#""{mode}""#))
        .expect("a zenoh mode");
    let endpoint = |port| format!(r#"["tcp/127.0.0.1:{port}"]"#);
    if let Some(port) = connect {
        config
            .insert_json5("connect/endpoints", &endpoint(port))
            .expect("a connect endpoint");
    }
    config
        .insert_json5("listen/endpoints", &endpoint(listen))
        .expect("a listen endpoint");
    config
        .insert_json5("scouting/multicast/enabled", "false")
        .expect("scouting off");
    allow_blocked_sends(&mut config);
    config
}

/// `config` as a peer of the router on `127.0.0.1:router_port`, listening on a loopback port
/// of the OS's choice, multicast scouting off.
pub fn peer_of_router(mut config: zenoh::Config, router_port: u16) -> zenoh::Config {
    for (key, value) in [
        ("mode", r#""peer""#.to_owned()),
        (
            "connect/endpoints",
            format!(r#"["tcp/127.0.0.1:{router_port}"]"#),
        ),
        ("listen/endpoints", r#"["tcp/127.0.0.1:0"]"#.to_owned()),
        ("scouting/multicast/enabled", "false".to_owned()),
    ] {
        config
            .insert_json5(key, &value)
            .expect("a loopback peer setting");
    }
    allow_blocked_sends(&mut config);
    config
}

/// A zenoh router in this process on a free loopback port, and that port. A port found
/// free can be taken before the router binds it (another test's connection gets it as
/// its ephemeral port): then another free port is tried, up to 50 times.
pub fn router_on_free_port() -> (zenoh::Session, u16) {
    let mut last = None;
    for _ in 0..50 {
        let port = crate::router::free_loopback_port();
        match zenoh::open(loopback_config("router", None, port)).wait() {
            Ok(session) => return (session, port),
            Err(e) => last = Some(e),
        }
    }
    panic!("no loopback port could be bound by a router in 50 tries: {last:?}");
}

/// A zenoh router in this process, listening on `127.0.0.1:port` (a test that restarts a
/// router on the port it had; otherwise [`router_on_free_port`]).
pub fn router_session(port: u16) -> zenoh::Session {
    zenoh::open(loopback_config("router", None, port))
        .wait()
        .expect("open the router")
}
