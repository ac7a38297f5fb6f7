//! The graph of a running system from the command line, shaped like the ros2 CLI and
//! taking the same arguments: `kairos router`, `node`, `topic`, `service`, `action`,
//! `lifecycle`, `component`, [`param`] and [`tf`]. Each command is a kairos process on the Zenoh
//! transport (rmw_zenoh's wire format), so it sees and talks to ROS 2 nodes on rmw_zenoh
//! as well as kairos nodes. The `kairos` binary parses these commands and calls them.
//!
//! Every command that waits has a bound (`--timeout`, `--count`, `--times`, `--duration`).

mod action;
mod component;
mod lifecycle;
mod node;
pub mod param;
mod router;
mod service;
pub mod tf;
mod topic;
mod values;

pub use action::{ActionCmd, action};
pub use component::{ComponentCmd, component};
pub use lifecycle::{LifecycleCmd, lifecycle};
pub use node::{NodeCmd, node};
pub use router::{RouterArgs, router};
pub use service::{ServiceCmd, service};
pub use topic::{TopicCmd, topic};

use anyhow::{anyhow, bail};
use clap::Args;
use kairos::graph::{Node, Qos};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::{EntityKind, Token};
use kairos_zenoh::message::ros_type_name;
use std::collections::BTreeMap;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Seconds to gather the graph (returns earlier once --wait-for is seen).
    #[arg(long, default_value_t = 1.0)]
    spin_time: f64,
    /// Return as soon as this name (node, topic or service) is in the graph.
    #[arg(long)]
    wait_for: Option<String>,
    #[arg(long)]
    json: bool,
}

/// The QoS options of `ros2 topic pub|echo`.
#[derive(Debug, Args)]
pub struct QosArgs {
    /// History depth.
    #[arg(long, default_value_t = 10)]
    qos_depth: usize,
    /// keep_last or keep_all.
    #[arg(long, value_enum, default_value_t = QosHistory::KeepLast)]
    qos_history: QosHistory,
    /// reliable or best_effort.
    #[arg(long, value_enum, default_value_t = QosReliability::Reliable)]
    qos_reliability: QosReliability,
    /// volatile or transient_local (late joiners get the last depth messages).
    #[arg(long, value_enum, default_value_t = QosDurability::Volatile)]
    qos_durability: QosDurability,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
enum QosHistory {
    KeepLast,
    KeepAll,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
enum QosReliability {
    Reliable,
    BestEffort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
enum QosDurability {
    Volatile,
    TransientLocal,
}

impl QosArgs {
    fn qos(&self) -> anyhow::Result<Qos> {
        let mut qos = match self.qos_history {
            QosHistory::KeepLast => Qos::keep_last(self.qos_depth),
            QosHistory::KeepAll => Qos::keep_all(self.qos_depth),
        };
        qos.capacity()
            .map_err(|e| anyhow!("--qos-depth {}: {e}", self.qos_depth))?;
        if self.qos_reliability == QosReliability::BestEffort {
            qos = qos.best_effort();
        }
        if self.qos_durability == QosDurability::TransientLocal {
            qos = qos.transient_local();
        }
        Ok(qos)
    }
}

/// The longest span a command takes, 100 years: "wait forever" in practice, and far from
/// where adding it to the clock overflows.
pub const MAX_SECONDS: f64 = 100.0 * 365.25 * 24.0 * 3600.0;

/// `s` seconds, given on the command line as `flag`, as a duration; the error names the
/// flag and its value when `s` is negative, not a number or above [`MAX_SECONDS`]. Every
/// command that takes seconds reads them with this, so they all refuse bad input the same
/// way, and a deadline computed from the result cannot overflow.
pub fn seconds(flag: &str, s: f64) -> anyhow::Result<Duration> {
    if !(0.0..=MAX_SECONDS).contains(&s) {
        bail!("{flag} {s} is not a number of seconds from 0 to {MAX_SECONDS} (100 years)");
    }
    Ok(Duration::from_secs_f64(s))
}

/// The period of `hz` events per second, given as `flag`; the error names the flag when
/// `hz` is not above 0 or so low that its period exceeds [`MAX_SECONDS`].
pub fn period(flag: &str, hz: f64) -> anyhow::Result<Duration> {
    if !(hz > 0.0 && 1.0 / hz <= MAX_SECONDS) {
        bail!("{flag} {hz} is not a rate above 0 per second (at least one per 100 years)");
    }
    Ok(Duration::from_secs_f64(1.0 / hz))
}

/// The transport every command runs on, whatever the environment says.
pub fn open_transport() -> anyhow::Result<Arc<ZenohTransport>> {
    open()
}

fn open() -> anyhow::Result<Arc<ZenohTransport>> {
    let transport = ZenohTransport::open()?;
    transport.install(&kairos::graph::Context::global())?;
    Ok(transport)
}

fn cli_node(transport: &ZenohTransport, role: &str) -> anyhow::Result<Node> {
    let name = format!("kairos_{role}_{}", std::process::id());
    let _ = transport;
    Ok(Node::new(&name)?)
}

/// How long the graph's routers and peers have to say what they know, once the
/// command has waited; they answer in milliseconds.
const GRAPH_QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Gathers the graph for `spin_time`, or until `wait_for` is in it; then asks for every
/// token the routers and peers know (a node's first token comes before the rest of its
/// entities, and a snapshot at that moment would miss them).
fn gather(transport: &ZenohTransport, args: &GraphArgs) -> anyhow::Result<Vec<Token>> {
    let deadline = Instant::now() + seconds("--spin-time", args.spin_time)?;
    let wait_for = args.wait_for.clone();
    transport.graph().wait_until(deadline, |tokens| {
        wait_for.as_deref().is_some_and(|name| {
            tokens.iter().any(|t| {
                node_name(t) == name || t.endpoint.as_ref().is_some_and(|e| e.name == name)
            })
        })
    });
    Ok(transport.graph_now(GRAPH_QUERY_TIMEOUT))
}

fn node_name(token: &Token) -> String {
    let ns = &token.node.namespace;
    if ns == "/" {
        format!("/{}", token.node.name)
    } else {
        format!("{ns}/{}", token.node.name)
    }
}

fn endpoint_type(token: &Token) -> String {
    token
        .endpoint
        .as_ref()
        .map(|e| ros_type_name(&e.dds_type).unwrap_or_else(|| e.dds_type.clone()))
        .unwrap_or_default()
}

fn names_and_types(tokens: &[Token], kinds: &[EntityKind]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for token in tokens.iter().filter(|t| kinds.contains(&t.kind)) {
        let Some(endpoint) = &token.endpoint else {
            continue;
        };
        let types = out.entry(endpoint.name.clone()).or_default();
        let ty = endpoint_type(token);
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    out
}

fn print_names(
    map: &BTreeMap<String, Vec<String>>,
    show_types: bool,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let list: Vec<_> = map
            .iter()
            .map(|(name, types)| serde_json::json!({"name": name, "types": types}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    for (name, types) in map {
        if show_types {
            println!("{name} [{}]", types.join(", "));
        } else {
            println!("{name}");
        }
    }
    Ok(())
}

/// A topic, service, action or node name made absolute as the ROS 2 command line takes
/// it (`chatter`: `/chatter`).
pub fn absolute_name(name: &str) -> String {
    if name.starts_with('/') {
        name.to_owned()
    } else {
        format!("/{name}")
    }
}

/// Shuts the executor down (bounded) when the command ends.
struct ExecGuard(kairos::exec::Executor);

impl Drop for ExecGuard {
    fn drop(&mut self) {
        let _ = self.0.shutdown(kairos::time::Duration::from_secs(2));
    }
}

/// A message as ros2 prints it (`data: hello` then `---`), or one JSON line.
fn render(value: &serde_json::Value, json: bool) -> String {
    if json {
        return value.to_string();
    }
    fn lines(value: &serde_json::Value, indent: usize, out: &mut String) {
        if let serde_json::Value::Object(map) = value {
            for (key, v) in map {
                if v.is_object() {
                    out.push_str(&format!("{}{key}:\n", "  ".repeat(indent)));
                    lines(v, indent + 1, out);
                } else {
                    out.push_str(&format!("{}{key}: {v}\n", "  ".repeat(indent)));
                }
            }
        }
    }
    let mut out = String::new();
    lines(value, 0, &mut out);
    out.push_str("---");
    out
}

/// What a command's wait for its next item ended with.
pub(crate) enum Next<T> {
    Item(T),
    TimedOut,
    /// Ctrl-C (or SIGTERM): the runtime's shutdown token was cancelled.
    Interrupted,
    Closed,
}

/// How often a waiting command looks at the shutdown token: Ctrl-C ends it within this.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// The next item of `rx` before `deadline`; a Ctrl-C ends the wait within
/// [`INTERRUPT_POLL`] (a channel cannot wait on the token itself).
pub(crate) fn next_before<T>(rx: &mpsc::Receiver<T>, deadline: Instant) -> Next<T> {
    let shutdown = kairos::signal::shutdown_token();
    loop {
        if shutdown.is_cancelled() {
            return Next::Interrupted;
        }
        let now = Instant::now();
        if now >= deadline {
            return Next::TimedOut;
        }
        match rx.recv_timeout((deadline - now).min(INTERRUPT_POLL)) {
            Ok(item) => return Next::Item(item),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Next::Closed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_a_duration_from_zero_to_a_hundred_years() {
        assert_eq!(seconds("--t", 0.0).unwrap(), Duration::ZERO);
        assert_eq!(seconds("--t", 0.25).unwrap(), Duration::from_millis(250));
        assert!(seconds("--t", MAX_SECONDS).is_ok());
        // A deadline that far away still fits the clock.
        assert!(
            Instant::now()
                .checked_add(seconds("--t", MAX_SECONDS).unwrap())
                .is_some()
        );
        for bad in [
            -1.0,
            -0.0001,
            f64::NAN,
            f64::INFINITY,
            MAX_SECONDS * 1.01,
            1e30,
        ] {
            let error = seconds("--timeout", bad).unwrap_err().to_string();
            assert!(error.starts_with(&format!("--timeout {bad} ")), "{error}");
        }
    }

    #[test]
    fn a_rate_is_a_period_of_at_most_a_hundred_years() {
        assert_eq!(period("--rate", 4.0).unwrap(), Duration::from_millis(250));
        assert_eq!(
            period("--rate", 1.0 / MAX_SECONDS).unwrap().as_secs_f64(),
            MAX_SECONDS
        );
        for bad in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY, 1e-12] {
            let error = period("--rate", bad).unwrap_err().to_string();
            assert!(error.starts_with(&format!("--rate {bad} ")), "{error}");
        }
        // Infinitely many per second is a period of zero, as fast as can be.
        assert_eq!(period("--rate", f64::INFINITY).unwrap(), Duration::ZERO);
    }
}
