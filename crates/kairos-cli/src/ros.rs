//! `kairos router`, `kairos node|topic|service ...`: the graph across processes, shaped
//! like the ros2 CLI and taking the same arguments. Each command is a kairos process on
//! the Zenoh transport (rmw_zenoh's wire format), so it sees and talks to ROS 2 nodes on
//! rmw_zenoh as well as kairos nodes.
//!
//! Every command that waits has a bound (`--timeout`, `--count`, `--times`).

use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use kairos::graph::{Node, Qos};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::{EntityKind, History, Token};
use kairos_zenoh::interfaces;
use kairos_zenoh::message::ros_type_name;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct RouterArgs {
    /// Endpoints to listen on (default rmw_zenoh's: tcp/[::]:7447).
    #[arg(long)]
    listen: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Nodes in the graph.
    List(GraphArgs),
}

#[derive(Debug, Subcommand)]
pub enum TopicCmd {
    /// Topics in the graph.
    List {
        /// Show each topic's type.
        #[arg(short = 't', long = "show-types")]
        show_types: bool,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Type, publishers and subscriptions of a topic.
    Info {
        topic: String,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Print messages of a topic.
    Echo(EchoArgs),
    /// Rate of messages on a topic.
    Hz(HzArgs),
    /// Publish messages to a topic.
    Pub(PubArgs),
}

#[derive(Debug, Subcommand)]
pub enum ServiceCmd {
    /// Services in the graph.
    List {
        #[arg(short = 't', long = "show-types")]
        show_types: bool,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Call a service.
    Call {
        service: String,
        /// e.g. example_interfaces/srv/AddTwoInts
        service_type: String,
        /// The request, e.g. "{a: 2, b: 3}".
        #[arg(default_value = "{}")]
        values: String,
        /// Seconds to wait for the server and then for the response.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        #[arg(long)]
        json: bool,
    },
    /// Serve example_interfaces/srv/AddTwoInts (a kairos service), for demos and tests.
    #[command(hide = true)]
    ServeAddTwoInts {
        #[arg(default_value = "/add_two_ints")]
        service: String,
        /// Exit after this many requests.
        #[arg(long, default_value_t = 1)]
        count: u64,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
    },
}

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

#[derive(Debug, Args)]
pub struct EchoArgs {
    topic: String,
    /// The message type (default: the type its publishers announce).
    message_type: Option<String>,
    #[command(flatten)]
    qos: QosArgs,
    /// Exit after this many messages.
    #[arg(long)]
    count: Option<u64>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct HzArgs {
    topic: String,
    /// Messages to measure over.
    #[arg(long, default_value_t = 100)]
    count: u64,
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct PubArgs {
    topic: String,
    message_type: String,
    /// The message, e.g. "{data: hello}".
    #[arg(default_value = "{}")]
    values: String,
    /// Publish this many messages, then exit.
    #[arg(short = 't', long, default_value_t = 1)]
    times: u64,
    /// Messages per second.
    #[arg(short = 'r', long, default_value_t = 1.0)]
    rate: f64,
    /// Wait up to this many seconds for a subscription before the first message.
    #[arg(long, default_value_t = 5.0)]
    wait_matching: f64,
    /// Same as --qos-durability transient_local.
    #[arg(long)]
    transient_local: bool,
    #[command(flatten)]
    qos: QosArgs,
    /// Seconds to stay after the last message (a transient-local publisher's cache lives
    /// as long as it does, for late joiners).
    #[arg(long, default_value_t = 0.0)]
    keep_alive: f64,
}

fn secs(s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| anyhow!("{s} is not a number of seconds ≥ 0"))
}

/// The transport every command runs on, whatever the environment says.
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

pub fn router(args: RouterArgs) -> anyhow::Result<ExitCode> {
    let mut config = kairos_zenoh::config::router_config()?;
    if !args.listen.is_empty() {
        let endpoints = serde_json::to_string(&args.listen)?;
        config
            .insert_json5("listen/endpoints", &endpoints)
            .map_err(|e| anyhow!("--listen {endpoints}: {e}"))?;
    }
    use zenoh::Wait;
    let session = zenoh::open(config).wait().map_err(|e| anyhow!("{e}"))?;
    println!(
        "kairos router {} running; stop it with Ctrl-C",
        session.zid()
    );
    // A router runs until it is stopped (a signal ends the process).
    loop {
        std::thread::park();
    }
}

/// Gathers the graph for `spin_time`, or until `wait_for` is in it.
fn gather(transport: &ZenohTransport, args: &GraphArgs) -> anyhow::Result<Vec<Token>> {
    let deadline = Instant::now() + secs(args.spin_time)?;
    let wait_for = args.wait_for.clone();
    transport.graph().wait_until(deadline, |tokens| {
        wait_for.as_deref().is_some_and(|name| {
            tokens.iter().any(|t| {
                node_name(t) == name || t.endpoint.as_ref().is_some_and(|e| e.name == name)
            })
        })
    });
    Ok(transport.graph().tokens())
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

pub fn node(cmd: NodeCmd) -> anyhow::Result<ExitCode> {
    let NodeCmd::List(args) = cmd;
    let transport = open()?;
    let tokens = gather(&transport, &args)?;
    let mut nodes: Vec<String> = tokens
        .iter()
        .filter(|t| t.kind == EntityKind::Node)
        .map(node_name)
        .collect();
    nodes.sort();
    nodes.dedup();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&nodes)?);
    } else {
        for node in nodes {
            println!("{node}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn topic(cmd: TopicCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TopicCmd::List { show_types, graph } => {
            let transport = open()?;
            let tokens = gather(&transport, &graph)?;
            let map = names_and_types(&tokens, &[EntityKind::Publisher, EntityKind::Subscription]);
            print_names(&map, show_types, graph.json)?;
        }
        TopicCmd::Info { topic, graph } => {
            let transport = open()?;
            let tokens = gather(&transport, &graph)?;
            info(&tokens, &topic, graph.json)?;
        }
        TopicCmd::Echo(args) => return echo(args),
        TopicCmd::Hz(args) => return hz(args),
        TopicCmd::Pub(args) => return publish(args),
    }
    Ok(ExitCode::SUCCESS)
}

fn info(tokens: &[Token], topic: &str, json: bool) -> anyhow::Result<()> {
    let on_topic = |kind| {
        tokens
            .iter()
            .filter(move |t| t.kind == kind && t.endpoint.as_ref().is_some_and(|e| e.name == topic))
    };
    let describe = |t: &Token| {
        let qos = &t.endpoint.as_ref().expect("endpoint token").qos;
        let depth = match qos.history {
            History::KeepLast(d) => format!("keep last {d}"),
            History::KeepAll(_) => "keep all".into(),
        };
        serde_json::json!({
            "node": node_name(t),
            "type": endpoint_type(t),
            "gid": t.gid().iter().map(|b| format!("{b:02x}")).collect::<String>(),
            "reliability": format!("{:?}", qos.reliability),
            "durability": format!("{:?}", qos.durability),
            "history": depth,
        })
    };
    let publishers: Vec<_> = on_topic(EntityKind::Publisher).map(describe).collect();
    let subscriptions: Vec<_> = on_topic(EntityKind::Subscription).map(describe).collect();
    let mut types: Vec<String> = on_topic(EntityKind::Publisher)
        .chain(on_topic(EntityKind::Subscription))
        .map(endpoint_type)
        .collect();
    types.sort();
    types.dedup();
    if json {
        let info = serde_json::json!({
            "topic": topic, "types": types,
            "publishers": publishers, "subscriptions": subscriptions,
        });
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        println!("Type: {}", types.join(", "));
        println!("Publisher count: {}", publishers.len());
        println!("Subscription count: {}", subscriptions.len());
        for (label, list) in [("Publisher", &publishers), ("Subscription", &subscriptions)] {
            for e in list {
                println!(
                    "  {label}: node {} gid {} ({}, {}, {})",
                    e["node"].as_str().unwrap_or(""),
                    e["gid"].as_str().unwrap_or(""),
                    e["reliability"].as_str().unwrap_or(""),
                    e["durability"].as_str().unwrap_or(""),
                    e["history"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(())
}

/// The type announced on `topic`, waiting for one up to `deadline`.
fn announced_type(transport: &ZenohTransport, topic: &str, deadline: Instant) -> Option<String> {
    let found = |tokens: &[Token]| {
        tokens
            .iter()
            .filter(|t| matches!(t.kind, EntityKind::Publisher | EntityKind::Subscription))
            .find(|t| t.endpoint.as_ref().is_some_and(|e| e.name == topic))
            .map(endpoint_type)
    };
    transport
        .graph()
        .wait_until(deadline, |tokens| found(tokens).is_some());
    found(&transport.graph().tokens())
}

fn resolve_topic(topic: &str) -> String {
    if topic.starts_with('/') {
        topic.to_owned()
    } else {
        format!("/{topic}")
    }
}

fn echo(args: EchoArgs) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    let topic = resolve_topic(&args.topic);
    let deadline = Instant::now() + secs(args.timeout)?;
    let ty = match args.message_type {
        Some(ty) => ty,
        None => announced_type(&transport, &topic, deadline)
            .ok_or_else(|| anyhow!("no publisher announces a type for {topic}; pass the type"))?,
    };
    let (tx, rx) = mpsc::channel::<String>();
    let json = args.json;
    // Held for as long as messages are wanted.
    let _entity: Box<dyn std::any::Any> = match interfaces::message_for_topic(&ty, &topic) {
        Some(codec) => {
            let node = cli_node(&transport, "echo")?;
            let exec = kairos::exec::Executor::single_threaded();
            let held = codec.json_subscription(
                &node,
                &topic,
                args.qos.qos()?,
                Box::new(move |value| {
                    let _ = tx.send(render(&value, json));
                }),
            )?;
            exec.add_node(&node)?;
            let spinner = exec.clone();
            std::thread::spawn(move || spinner.spin());
            Box::new((held, node, ExecGuard(exec)))
        }
        None => Box::new(raw_subscriber(&transport, &topic, tx, json)?),
    };
    let mut received = 0u64;
    let limit = args.count.unwrap_or(u64::MAX);
    while received < limit {
        let now = Instant::now();
        if now >= deadline {
            eprintln!(
                "kairos topic echo: {received} message(s) before the {}s timeout",
                args.timeout
            );
            return Ok(ExitCode::from(1));
        }
        match rx.recv_timeout(deadline - now) {
            Ok(line) => {
                println!("{line}");
                received += 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(ExitCode::SUCCESS)
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

/// For types kairos does not know: size and hex of each payload.
fn raw_subscriber(
    transport: &ZenohTransport,
    topic: &str,
    tx: mpsc::Sender<String>,
    json: bool,
) -> anyhow::Result<zenoh::pubsub::Subscriber<()>> {
    use zenoh::Wait;
    let key = format!(
        "{}/{}/**",
        transport.domain(),
        topic.trim_start_matches('/')
    );
    transport
        .session()
        .declare_subscriber(key)
        .callback(move |sample| {
            let bytes = sample.payload().to_bytes();
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let line = if json {
                serde_json::json!({"size": bytes.len(), "hex": hex}).to_string()
            } else {
                format!("size: {}\nhex: {hex}\n---", bytes.len())
            };
            let _ = tx.send(line);
        })
        .wait()
        .map_err(|e| anyhow!("{e}"))
}

fn hz(args: HzArgs) -> anyhow::Result<ExitCode> {
    use zenoh::Wait;
    let transport = open()?;
    let topic = resolve_topic(&args.topic);
    let deadline = Instant::now() + secs(args.timeout)?;
    let (tx, rx) = mpsc::channel::<Instant>();
    let key = format!(
        "{}/{}/**",
        transport.domain(),
        topic.trim_start_matches('/')
    );
    let _subscriber = transport
        .session()
        .declare_subscriber(key)
        .callback(move |_| {
            let _ = tx.send(Instant::now());
        })
        .wait()
        .map_err(|e| anyhow!("{e}"))?;
    let mut stamps = Vec::new();
    while (stamps.len() as u64) < args.count.max(2) {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        if let Ok(t) = rx.recv_timeout(deadline - now) {
            stamps.push(t);
        }
    }
    if stamps.len() < 2 {
        bail!("fewer than 2 messages on {topic} within {}s", args.timeout);
    }
    let gaps: Vec<f64> = stamps
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let min = gaps.iter().cloned().fold(f64::MAX, f64::min);
    let max = gaps.iter().cloned().fold(0.0, f64::max);
    let std = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    let rate = if mean > 0.0 {
        1.0 / mean
    } else {
        f64::INFINITY
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({"topic": topic, "rate_hz": rate, "min_s": min, "max_s": max, "std_dev_s": std, "window": gaps.len()})
        );
    } else {
        println!(
            "average rate: {rate:.3}\n\tmin: {min:.6}s max: {max:.6}s std dev: {std:.6}s window: {}",
            gaps.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn publish(args: PubArgs) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    let topic = resolve_topic(&args.topic);
    let codec = interfaces::message_for_topic(&args.message_type, &topic).ok_or_else(|| {
        anyhow!(
            "kairos does not know the type {}; known types are registered with kairos_zenoh::register",
            args.message_type
        )
    })?;
    let value = parse_values(&args.values)?;
    let node = cli_node(&transport, "pub")?;
    let mut qos = args.qos.qos()?;
    if args.transient_local {
        qos = qos.transient_local();
    }
    let publisher = codec.json_publisher(&node, &topic, qos)?;
    wait_matching(
        &transport,
        &codec.data_key(transport.domain(), &topic),
        secs(args.wait_matching)?,
    )?;
    let period = if args.rate > 0.0 {
        secs(1.0 / args.rate)?
    } else {
        Duration::ZERO
    };
    let clock = kairos::time::Clock::steady();
    let token = kairos::time::CancelToken::new();
    let mut next = clock.now();
    for i in 0..args.times {
        if i > 0 {
            next = next + kairos::time::Duration::from_nanos(period.as_nanos() as i64);
            clock.sleep_until(next, &token)?;
        }
        publisher(value.clone()).map_err(|e| anyhow!("{e}"))?;
        println!("publishing #{}: {}", i + 1, args.values);
    }
    if args.keep_alive > 0.0 {
        // Bounded: the sleep ends at its deadline (no one cancels this token).
        let stay = kairos::time::Duration::from_secs_f64(args.keep_alive);
        clock.sleep_until(clock.now() + stay, &token)?;
    }
    // Closing flushes what zenoh still queues; exiting without it may lose the last messages.
    drop(publisher);
    transport.close(Duration::from_secs(5))?;
    Ok(ExitCode::SUCCESS)
}

/// Waits up to `timeout` until a subscriber in another process matches `key` (zenoh's own
/// matching, which a liveliness token may precede).
fn wait_matching(transport: &ZenohTransport, key: &str, timeout: Duration) -> anyhow::Result<()> {
    use zenoh::Wait;
    let zerr = |e: zenoh::Error| anyhow!("{e}");
    let probe = transport
        .session()
        .declare_publisher(key.to_owned())
        .allowed_destination(zenoh::sample::Locality::Remote)
        .wait()
        .map_err(zerr)?;
    let (tx, rx) = mpsc::channel();
    let _listener = probe
        .matching_listener()
        .callback(move |status| {
            if status.matching() {
                let _ = tx.send(());
            }
        })
        .wait()
        .map_err(zerr)?;
    if !probe.matching_status().wait().map_err(zerr)?.matching() {
        let _ = rx.recv_timeout(timeout);
    }
    Ok(())
}

pub fn service(cmd: ServiceCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ServiceCmd::List { show_types, graph } => {
            let transport = open()?;
            let tokens = gather(&transport, &graph)?;
            print_names(
                &names_and_types(&tokens, &[EntityKind::Service]),
                show_types,
                graph.json,
            )?;
        }
        ServiceCmd::Call {
            service,
            service_type,
            values,
            timeout,
            json,
        } => {
            let transport = open()?;
            let codec = interfaces::service_by_name(&service_type)
                .ok_or_else(|| anyhow!("kairos does not know the service type {service_type}"))?;
            let node = cli_node(&transport, "call")?;
            let request = parse_values(&values)?;
            let timeout = kairos::time::Duration::from_secs_f64(timeout);
            let response = codec
                .call_json(&node, &resolve_topic(&service), request, timeout)
                .map_err(|e| anyhow!("{e}"))?;
            println!("{}", render(&response, json));
        }
        ServiceCmd::ServeAddTwoInts {
            service,
            count,
            timeout,
        } => return serve_add_two_ints(&service, count, timeout),
    }
    Ok(ExitCode::SUCCESS)
}

fn serve_add_two_ints(service: &str, count: u64, timeout: f64) -> anyhow::Result<ExitCode> {
    use kairos_zenoh::msg::{AddTwoIntsRequest, AddTwoIntsResponse};
    let transport = open()?;
    let node = cli_node(&transport, "add_two_ints_server")?;
    let (tx, rx) = mpsc::channel();
    let server = node.create_service(service, move |r: AddTwoIntsRequest| {
        let _ = tx.send(());
        AddTwoIntsResponse { sum: r.a + r.b }
    })?;
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    let guard = ExecGuard(exec);
    println!("serving {service}");
    let deadline = Instant::now() + secs(timeout)?;
    for served in 0..count {
        let left = deadline.saturating_duration_since(Instant::now());
        if rx.recv_timeout(left).is_err() {
            eprintln!("served {served} of {count} requests before the {timeout}s timeout");
            return Ok(ExitCode::from(1));
        }
    }
    // The executor's shutdown waits for the callback in progress, whose end hands the
    // reply to zenoh; closing the session then flushes it.
    drop(guard);
    drop(server);
    transport.close(Duration::from_secs(5))?;
    println!("served {count}");
    Ok(ExitCode::SUCCESS)
}

/// The values of `ros2 topic pub`: YAML, such as the flow mapping `{data: hello, n: 3}`.
pub fn parse_values(text: &str) -> anyhow::Result<serde_json::Value> {
    let docs = yaml_rust2::YamlLoader::load_from_str(text)
        .map_err(|e| anyhow!("cannot read values '{text}': {e}"))?;
    let Some(doc) = docs.first() else {
        bail!("cannot read values '{text}': there are none");
    };
    json_value(doc).with_context(|| format!("cannot read values '{text}'"))
}

/// A YAML value as the JSON value the message codec takes.
fn json_value(yaml: &yaml_rust2::Yaml) -> anyhow::Result<serde_json::Value> {
    use yaml_rust2::Yaml;
    Ok(match yaml {
        Yaml::Boolean(b) => (*b).into(),
        Yaml::Integer(i) => (*i).into(),
        Yaml::Real(text) => match yaml.as_f64() {
            Some(f) => f.into(),
            None => bail!("'{text}' is not a number"),
        },
        Yaml::String(s) => s.clone().into(),
        Yaml::Array(items) => items
            .iter()
            .map(json_value)
            .collect::<anyhow::Result<Vec<_>>>()?
            .into(),
        Yaml::Hash(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                let key = match key {
                    Yaml::String(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    other => bail!("a field name must be text, not {other:?}"),
                };
                if matches!(value, Yaml::Null) {
                    bail!("field '{key}' has no value");
                }
                out.insert(key, json_value(value)?);
            }
            out.into()
        }
        Yaml::Null => bail!("a value is missing"),
        other => bail!("{other:?} is not a message value"),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_values;
    use serde_json::json;

    #[test]
    fn values_read_like_ros2_topic_pub() {
        assert_eq!(
            parse_values("{data: hello}").unwrap(),
            json!({"data": "hello"})
        );
        assert_eq!(
            parse_values("{a: 2, b: -3, c: {sec: 1, nanosec: 5}, s: 'x, y', f: 1.5, t: true}")
                .unwrap(),
            json!({"a": 2, "b": -3, "c": {"sec": 1, "nanosec": 5}, "s": "x, y", "f": 1.5, "t": true})
        );
        assert!(parse_values("{data: }").is_err());
        assert!(parse_values("{data: x").is_err());
    }
}
