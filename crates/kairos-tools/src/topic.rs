//! `kairos topic list|info|echo|hz|pub`.

use super::values::parse_values;
use super::{
    ExecGuard, GraphArgs, Next, QosArgs, absolute_name, cli_node, endpoint_type, gather,
    names_and_types, next_before, node_name, open, period, print_names, render, seconds,
};
use anyhow::{anyhow, bail};
use clap::{Args, Subcommand};
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::graph_key::{EntityKind, History, Token};
use kairos_zenoh::interfaces;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    /// Messages per second (0: as fast as they can be sent).
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

fn echo(args: EchoArgs) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    let topic = absolute_name(&args.topic);
    let deadline = Instant::now() + seconds("--timeout", args.timeout)?;
    let ty = match args.message_type {
        Some(ty) => ty,
        None => announced_type(&transport, &topic, deadline)
            .ok_or_else(|| anyhow!("no publisher announces a type for {topic}; pass the type"))?,
    };
    let (tx, rx) = mpsc::channel::<String>();
    let json = args.json;
    // Held for as long as messages are wanted.
    let _entity: Box<dyn std::any::Any> = match interfaces::message_by_name(&ty) {
        Some(codec) => {
            let node = cli_node(&transport, "echo")?;
            let held = codec.json_subscription(
                &transport,
                &node,
                &topic,
                args.qos.qos()?,
                Box::new(move |value| {
                    let _ = tx.send(render(&value, json));
                }),
            )?;
            // The subscription delivers on the transport's threads; the node spins only
            // so that Ctrl-C shuts an executor down and ends the loop below (with the
            // loss report) instead of exiting the process at once.
            let exec = kairos::exec::Executor::single_threaded();
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
        match next_before(&rx, deadline) {
            Next::Item(line) => {
                println!("{line}");
                received += 1;
            }
            Next::TimedOut => {
                eprintln!(
                    "kairos topic echo: {received} message(s) before the {}s timeout",
                    args.timeout
                );
                report_losses(&transport);
                return Ok(ExitCode::from(1));
            }
            Next::Interrupted | Next::Closed => break,
        }
    }
    report_losses(&transport);
    Ok(ExitCode::SUCCESS)
}

/// What the process dropped or never got, said once at exit when there is anything: so
/// an echo that printed fewer messages than were sent says why.
fn report_losses(transport: &ZenohTransport) {
    let (malformed, gaps) = (transport.malformed_samples(), transport.sequence_gaps());
    if malformed > 0 || gaps > 0 {
        eprintln!(
            "kairos topic echo: {malformed} sample(s) dropped as malformed, {gaps} message(s) lost in sequence gaps"
        );
    }
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
    let topic = absolute_name(&args.topic);
    let deadline = Instant::now() + seconds("--timeout", args.timeout)?;
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
        match next_before(&rx, deadline) {
            Next::Item(t) => stamps.push(t),
            Next::TimedOut | Next::Interrupted | Next::Closed => break,
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
    let wait_matching_for = seconds("--wait-matching", args.wait_matching)?;
    let period = if args.rate == 0.0 {
        Duration::ZERO
    } else {
        period("--rate", args.rate)?
    };
    let stay = kairos::time::Duration::from(seconds("--keep-alive", args.keep_alive)?);
    let transport = open()?;
    let topic = absolute_name(&args.topic);
    let codec = interfaces::message_by_name(&args.message_type).ok_or_else(|| {
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
    let publisher = codec.json_publisher(&transport, &node, &topic, qos)?;
    wait_matching(
        &transport,
        &codec.data_key(transport.domain(), &topic),
        wait_matching_for,
    )?;
    let clock = kairos::time::Clock::steady();
    // Ctrl-C cancels it: the sleeps between messages end, and so does the command.
    let token = kairos::signal::shutdown_token();
    let mut next = clock.now();
    for i in 0..args.times {
        if i > 0 {
            next = next + kairos::time::Duration::from_nanos(period.as_nanos() as i64);
            if clock.sleep_until(next, &token).is_err() {
                return Ok(ExitCode::SUCCESS);
            }
        }
        publisher(value.clone()).map_err(|e| anyhow!("{e}"))?;
        println!("publishing #{}: {}", i + 1, args.values);
    }
    if stay.is_positive() {
        // Bounded: the sleep ends at its deadline, or at Ctrl-C.
        let _ = clock.sleep_until(clock.now() + stay, &token);
    }
    // Closing flushes what zenoh still queues; exiting without it may lose the last messages.
    drop(publisher);
    transport.close(Duration::from_secs(5))?;
    Ok(ExitCode::SUCCESS)
}

/// Waits up to `timeout` until a subscriber in another process matches `key` (zenoh's own
/// matching, which a liveliness token may precede).
fn wait_matching(transport: &ZenohTransport, key: &str, timeout: Duration) -> anyhow::Result<()> {
    kairos_zenoh::matching::wait_remote_subscriber(transport.session(), key, timeout)?;
    Ok(())
}
