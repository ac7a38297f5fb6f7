//! Zenoh sessions for tests, on loopback only and with multicast scouting off, so that a
//! test meets its own peers and nothing else on the machine or the network.

use zenoh::Wait;

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
    config
}

/// A zenoh router in this process, listening on `127.0.0.1:port`.
pub fn router_session(port: u16) -> zenoh::Session {
    zenoh::open(loopback_config("router", None, port))
        .wait()
        .expect("open the router")
}
