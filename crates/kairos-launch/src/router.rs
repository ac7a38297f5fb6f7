//! The Zenoh router a launched system meets at: found where the processes will look for
//! it, or started on this host when nothing answers there (`kairos router`, a child that
//! dies with its handle).

use crate::process::{Running, expect_line, lines_of};
use anyhow::{Context as _, bail};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The router the processes will connect to: the first `tcp/HOST:PORT` of
/// `connect/endpoints` in `ZENOH_CONFIG_OVERRIDE`, or rmw_zenoh's default
/// `127.0.0.1:7447`.
pub fn router_endpoint() -> String {
    let from_override = std::env::var("ZENOH_CONFIG_OVERRIDE")
        .ok()
        .and_then(|text| {
            let rest = &text[text.find("connect/endpoints")?..];
            let start = rest.find("tcp/")? + 4;
            let end = rest[start..].find(['"', '\'', ',', ']'])? + start;
            Some(rest[start..end].to_owned())
        });
    from_override.unwrap_or_else(|| "127.0.0.1:7447".to_owned())
}

/// Starts a `kairos router` on the endpoint when nothing listens there and it is on this
/// host; the router lives as long as the returned handle.
pub fn ensure_router() -> anyhow::Result<Option<LocalRouter>> {
    let endpoint = router_endpoint();
    let addrs: Vec<SocketAddr> = endpoint
        .to_socket_addrs()
        .with_context(|| format!("the router endpoint {endpoint} is not an address"))?
        .collect();
    let reachable = addrs
        .iter()
        .any(|a| TcpStream::connect_timeout(a, Duration::from_millis(300)).is_ok());
    if reachable {
        println!("[INFO] [launch]: using the router at {endpoint}");
        return Ok(None);
    }
    if !addrs
        .iter()
        .any(|a| a.ip().is_loopback() || a.ip().is_unspecified())
    {
        bail!(
            "no router answers at {endpoint}, and it is not on this host: start one there \
             (kairos router) or point ZENOH_CONFIG_OVERRIDE at one"
        );
    }
    let exe = std::env::current_exe().context("cannot find the kairos binary")?;
    let router =
        LocalRouter::start_listening(&exe, &format!("tcp/{endpoint}"), Duration::from_secs(30))?;
    println!("[INFO] [launch]: no router answered at {endpoint}; started kairos router there");
    Ok(Some(router))
}

/// A `kairos router` on a loopback port, stopped when dropped.
#[derive(Debug)]
pub struct LocalRouter {
    _process: Running,
    port: u16,
}

impl LocalRouter {
    /// Starts `exe router` on a loopback port of the OS's choosing and waits (at most
    /// `timeout`) until it says it runs, and where. The router binds port 0 itself: a port
    /// picked here and handed to it could be taken in between by any process's
    /// connection.
    pub fn start(exe: &Path, timeout: Duration) -> anyhow::Result<Self> {
        Self::start_listening(exe, "tcp/127.0.0.1:0", timeout)
    }

    /// Starts `exe router --listen endpoint` and waits (at most `timeout`) until it says
    /// it runs; its port is the one it says it listens on (the endpoint's, unless that is
    /// 0).
    pub fn start_listening(exe: &Path, endpoint: &str, timeout: Duration) -> anyhow::Result<Self> {
        let mut process = Running(
            Command::new(exe)
                .args(["router", "--listen", endpoint])
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .context("cannot start kairos router")?,
        );
        let lines = lines_of(&mut process.0)?;
        let running = expect_line(&lines, "kairos router", timeout, "the router")?;
        let asked = endpoint
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .filter(|&p: &u16| p != 0);
        let port = listening_port(&running)
            .or(asked)
            .with_context(|| format!("the router did not say where it listens: {running}"))?;
        Ok(Self {
            _process: process,
            port,
        })
    }

    /// A kairos command on the Zenoh transport, connected to this router only.
    pub fn command(&self, exe: &Path) -> Command {
        let mut command = Command::new(exe);
        command
            .env("KAIROS_TRANSPORT", "zenoh")
            .env(
                "ZENOH_CONFIG_OVERRIDE",
                format!(
                    "connect/endpoints=[\"tcp/127.0.0.1:{}\"];listen/endpoints=[\"tcp/127.0.0.1:0\"]",
                    self.port
                ),
            )
            .env_remove("ROS_DOMAIN_ID");
        command
    }
}

/// The port of the first TCP locator in `kairos router`'s line
/// `kairos router ZID running on tcp/127.0.0.1:PORT[, ...]; ...`.
fn listening_port(running: &str) -> Option<u16> {
    let (_, on) = running.split_once(" running on ")?;
    let locators = on.split(';').next()?;
    locators
        .split(", ")
        .find_map(|locator| locator.trim().strip_prefix("tcp/"))
        .and_then(|address| address.rsplit_once(':'))
        .and_then(|(_, port)| port.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::listening_port;

    #[test]
    fn the_port_is_read_from_the_routers_first_tcp_locator() {
        let line = "kairos router 83ab running on tls/127.0.0.1:7000, tcp/[::1]:45451, \
                    tcp/127.0.0.1:1; stop it with Ctrl-C";
        assert_eq!(listening_port(line), Some(45451));
        assert_eq!(
            listening_port("kairos router 83ab running; stop it with Ctrl-C"),
            None
        );
    }
}
