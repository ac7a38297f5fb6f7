//! `kairos bridge`: the running system served to visualization tools.
//!
//! - `foxglove`: a Foxglove WebSocket server (`foxglove.websocket.v1`) on loopback port
//!   8765 by default, mapped onto [`kairos_foxglove::Bridge`]: every topic advertised with
//!   its `ros2msg` schema, subscribed while a client watches it, client publishing into
//!   kairos topics, simulation time as server time with `--use-sim-time`. Runs until Ctrl-C
//!   (or `--duration`), then prints what it received and dropped.

use crate::shared_args::{HiddenTopics, TopicPatterns};
use clap::{Args, Subcommand};
use kairos_bag::record::Selection;
use kairos_foxglove::{Bridge, BridgeOptions, BridgeStats};
use kairos_tools::seconds;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum BridgeCmd {
    /// Serve the graph to Foxglove (or Lichtblick) over WebSocket (Ctrl-C stops).
    Foxglove(FoxgloveArgs),
}

#[derive(Debug, Args)]
pub struct FoxgloveArgs {
    /// The port to listen on (0 picks a free one, printed at start).
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
    /// The address to listen on. Loopback by default: the protocol has no authentication,
    /// so listen on another interface (0.0.0.0) only on a network you trust.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub address: IpAddr,
    #[command(flatten)]
    pub patterns: TopicPatterns,
    #[command(flatten)]
    pub hidden: HiddenTopics,
    /// Per client and topic, the most messages waiting to be sent (the oldest is dropped).
    #[arg(long, default_value_t = BridgeOptions::default().queue_messages)]
    pub queue_messages: usize,
    /// Per client, the most bytes of messages waiting to be sent, all topics together.
    #[arg(long, default_value_t = BridgeOptions::default().queue_bytes)]
    pub queue_bytes: usize,
    /// The most clients connected at once.
    #[arg(long, default_value_t = BridgeOptions::default().max_clients)]
    pub max_clients: usize,
    /// Stamp messages on simulation time (/clock) and send it to clients as server time.
    #[arg(long)]
    pub use_sim_time: bool,
    /// Print the counts each second (clients, topics, received, dropped).
    #[arg(long)]
    pub progress: bool,
    /// Stop after this many seconds (default: at Ctrl-C).
    #[arg(long)]
    pub duration: Option<f64>,
}

pub fn run(cmd: BridgeCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        BridgeCmd::Foxglove(args) => foxglove(args),
    }
}

fn foxglove(args: FoxgloveArgs) -> anyhow::Result<ExitCode> {
    let (regex, exclude) = args.patterns.compile()?;
    // Service calls (introspection topics) are hidden topics to a live view: shown with
    // the hidden ones, unless a regex chooses.
    let all_services = args.hidden.include_hidden_topics && regex.is_none();
    let selection = Selection {
        all: regex.is_none(),
        regex,
        exclude,
        include_hidden: args.hidden.include_hidden_topics,
        all_services,
        ..Selection::default()
    };
    let stop_after = args
        .duration
        .map(|d| seconds("--duration", d))
        .transpose()?;
    let options = BridgeOptions {
        address: SocketAddr::new(args.address, args.port),
        selection,
        queue_messages: args.queue_messages,
        queue_bytes: args.queue_bytes,
        max_clients: args.max_clients,
        ..BridgeOptions::default()
    };

    let transport = kairos_zenoh::ZenohTransport::open()?;
    transport.install(&kairos::graph::Context::global())?;
    let node = kairos::graph::Node::with_options(
        &kairos::graph::Context::global(),
        &format!("kairos_foxglove_bridge_{}", std::process::id()),
        kairos::graph::NodeOptions::new().use_sim_time(args.use_sim_time),
    )?;
    // Spun so that the node's clock follows /clock and Ctrl-C shuts an executor down (the
    // runtime's graceful path), which ends the loop below.
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    let bridge = Bridge::start(transport.clone(), node, options)?;
    eprintln!(
        "kairos bridge foxglove: serving ws://{} (Ctrl-C stops)",
        bridge.local_addr()
    );
    // Bounded: ends at Ctrl-C or at --duration.
    let steady = kairos::time::Clock::steady();
    let token = kairos::signal::shutdown_token();
    let end = stop_after.map(|d| steady.now() + kairos::time::Duration::from(d));
    let mut last_progress = steady.now();
    let mut last_stats = None;
    loop {
        let mut next = steady.now() + kairos::time::Duration::from_millis(100);
        if let Some(end) = end {
            if steady.now() >= end {
                break;
            }
            if end < next {
                next = end;
            }
        }
        if steady.sleep_until(next, &token).is_err() {
            break;
        }
        if args.progress && steady.now() >= last_progress + kairos::time::Duration::from_secs(1) {
            last_progress = steady.now();
            let stats = bridge.stats();
            if last_stats != Some(stats) {
                eprintln!("kairos bridge foxglove: {}", summary(&stats));
                last_stats = Some(stats);
            }
        }
    }
    let stats = bridge.stop();
    let _ = exec.shutdown(kairos::time::Duration::from_secs(2));
    eprintln!("kairos bridge foxglove: stopped; {}", summary(&stats));
    drop(transport);
    Ok(ExitCode::SUCCESS)
}

fn summary(stats: &BridgeStats) -> String {
    format!(
        "{} client(s), {} topic(s) advertised, {} subscribed; {} message(s) received, {} dropped for slow clients, {} lost in transport, {} bytes queued",
        stats.clients,
        stats.channels,
        stats.subscribed,
        stats.received,
        stats.dropped,
        stats.lost_in_transport,
        stats.queued_bytes
    )
}
