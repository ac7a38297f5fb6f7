//! `kairos bag play`: the arguments of `ros2 bag play`, mapped onto
//! [`kairos_bag::play::Player`]. Plays until the bag ends (with `--loop`, until Ctrl-C),
//! then prints what each topic sent and how late the sends were (p50/p99/max of send
//! time - planned time). Ctrl-C stops it at once: the player's sleeps are cancelled
//! through kairos's shutdown token. With `--lockstep`, simulated time follows the bag and
//! each message waits until the work it caused has settled in every kairos process (see
//! [`kairos_bag::play`]); a wait that ran out makes the exit status 1.
//!
//! The player is the node `rosbag2_player`, as rosbag2's, and serves its control services
//! (`/rosbag2_player/pause`, `play_next`, `burst`, `seek`, `set_rate`, ...; see
//! [`kairos_bag::services::player`]).

use anyhow::Context;
use clap::Args;
use kairos_bag::play::{
    ClockTrigger, DEFAULT_CLOCK_HZ, PlayOptions, PlayReport, Player, Remap, TopicSelection,
};
use kairos_tools::{absolute_name, seconds};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// A bag folder, its metadata.yaml, or a single .mcap or .db3 file.
    pub bag: PathBuf,
    /// Play this many times faster (0.5: half speed).
    #[arg(short = 'r', long, default_value_t = 1.0)]
    pub rate: f64,
    /// Play again from the start once the end is reached, until Ctrl-C.
    #[arg(short = 'l', long = "loop")]
    pub loop_playback: bool,
    /// Skip the first this-many seconds of the bag.
    #[arg(long, default_value_t = 0.0)]
    pub start_offset: f64,
    /// Wait this many seconds before playing.
    #[arg(short = 'd', long, default_value_t = 0.0)]
    pub delay: f64,
    /// Publish /clock with the bag's time at this rate in Hz (40 without a value); the
    /// bag's own /clock is not played.
    #[arg(long, num_args = 0..=1, default_missing_value = "40")]
    pub clock: Option<f64>,
    /// Publish /clock just before each message of these topics, with its time.
    #[arg(long, num_args = 1.., conflicts_with_all = ["clock", "clock_topics_all"])]
    pub clock_topics: Vec<String>,
    /// Publish /clock just before every message, with its time.
    #[arg(long, conflicts_with = "clock")]
    pub clock_topics_all: bool,
    /// How many messages to read ahead of the one waiting to be sent.
    #[arg(long, default_value_t = kairos_bag::play::DEFAULT_READ_AHEAD)]
    pub read_ahead_queue_size: usize,
    /// Play only these topics (with no --services, every service too).
    #[arg(long, num_args = 1..)]
    pub topics: Vec<String>,
    /// Play only these services' recorded events (with no --topics, every topic too).
    #[arg(long, num_args = 1..)]
    pub services: Vec<String>,
    /// Only the topics and services whose whole name matches this regular expression.
    #[arg(short = 'e', long)]
    pub regex: Option<String>,
    /// Leave out the topics and services whose whole name matches this regular
    /// expression.
    #[arg(short = 'x', long)]
    pub exclude_regex: Option<String>,
    /// Leave out these topics.
    #[arg(long, num_args = 1..)]
    pub exclude_topics: Vec<String>,
    /// Leave out these services' events.
    #[arg(long, num_args = 1..)]
    pub exclude_services: Vec<String>,
    /// Accepted for ros2 bag play's scripts: kairos bag play reads no keyboard (its
    /// control services pause, resume and step it).
    #[arg(long)]
    pub disable_keyboard_controls: bool,
    /// Publish a topic under another name: old:=new (repeatable).
    #[arg(short = 'm', long = "remap", num_args = 1..)]
    pub remaps: Vec<String>,
    /// A YAML file of QoS profiles by topic, replacing those chosen from the recording.
    #[arg(long)]
    pub qos_profile_overrides_path: Option<PathBuf>,
    /// Start paused: nothing is sent until resumed (the `~/resume` or `~/toggle_paused`
    /// service) or asked for (`~/play_next`, `~/burst`).
    #[arg(short = 'p', long)]
    pub start_paused: bool,
    /// Play only this many seconds of the bag from where playing starts (negative: to
    /// the end; 0: nothing).
    #[arg(long, default_value_t = -1.0, allow_negative_numbers = true)]
    pub playback_duration: f64,
    /// Play only messages received at or before this time, in seconds since the epoch
    /// (negative: to the end).
    #[arg(
        long,
        allow_negative_numbers = true,
        conflicts_with = "playback_until_nsec"
    )]
    pub playback_until_sec: Option<f64>,
    /// The same in nanoseconds since the epoch.
    #[arg(long, allow_negative_numbers = true)]
    pub playback_until_nsec: Option<i64>,
    /// Before playing, wait up to this many seconds until every played topic has a
    /// subscription.
    #[arg(long)]
    pub wait_for_subscribers: Option<f64>,
    /// Lock-step replay: /clock follows the bag one message at a time, and each message
    /// waits until the work it caused has settled in every kairos process, so two replays
    /// give the same outputs. The value bounds each wait in seconds (10 without a value).
    #[arg(long, num_args = 0..=1, default_missing_value = "10", value_name = "SECONDS")]
    pub lockstep: Option<f64>,
    /// Send each service's recorded calls to the service again (the requests of its
    /// introspection events, `<service>/_service_event`) instead of publishing the events,
    /// as rosbag2's --publish-service-requests.
    #[arg(long)]
    pub publish_service_requests: bool,
    /// `kairos bag burst`'s count: start paused, send this many messages at once (0:
    /// every one), then stay paused.
    #[arg(skip)]
    pub burst: Option<u64>,
}

/// `kairos bag burst`: as `ros2 bag burst`, the bag's first messages at once, then paused
/// (the player's control services go on serving until Ctrl-C or the bag's end).
#[derive(Debug, Args)]
pub struct BurstArgs {
    /// Send this many messages (0: every message of the bag).
    #[arg(short = 'n', long, default_value_t = 0)]
    pub num_messages: u64,
    #[command(flatten)]
    pub play: PlayArgs,
}

pub fn burst(args: BurstArgs) -> anyhow::Result<ExitCode> {
    play(PlayArgs {
        burst: Some(args.num_messages),
        ..args.play
    })
}

pub fn play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let pattern = |flag: &str, p: &Option<String>| {
        p.as_deref()
            .map(TopicSelection::whole_name)
            .transpose()
            .with_context(|| format!("{flag} is not a regular expression"))
    };
    let clock_trigger = if args.clock_topics_all {
        Some(ClockTrigger::EveryMessage)
    } else if !args.clock_topics.is_empty() {
        Some(ClockTrigger::Topics(absolute_all(&args.clock_topics)))
    } else {
        None
    };
    let remaps = args
        .remaps
        .iter()
        .map(|r| r.parse::<Remap>())
        .collect::<Result<Vec<_>, _>>()?;
    let qos_overrides = match &args.qos_profile_overrides_path {
        None => Default::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            kairos_bag::play::qos_overrides_from_yaml(&text)
                .with_context(|| format!("in {}", path.display()))?
        }
    };
    let options = PlayOptions {
        rate: args.rate,
        loop_playback: args.loop_playback,
        start_offset: seconds("--start-offset", args.start_offset)?,
        delay: seconds("--delay", args.delay)?,
        selection: TopicSelection {
            topics: absolute_all(&args.topics),
            services: absolute_all(&args.services),
            regex: pattern("--regex", &args.regex)?,
            exclude: pattern("--exclude-regex", &args.exclude_regex)?,
            exclude_topics: absolute_all(&args.exclude_topics),
            exclude_services: absolute_all(&args.exclude_services),
        },
        clock_trigger,
        read_ahead: args.read_ahead_queue_size,
        remaps,
        qos_overrides,
        clock_hz: args
            .clock
            .map(|hz| if hz == 0.0 { DEFAULT_CLOCK_HZ } else { hz }),
        start_paused: args.start_paused || args.burst.is_some(),
        playback_duration: (args.playback_duration >= 0.0)
            .then(|| seconds("--playback-duration", args.playback_duration))
            .transpose()?,
        playback_until_ns: until_ns(&args)?,
        wait_for_subscribers: args
            .wait_for_subscribers
            .map(|s| seconds("--wait-for-subscribers", s))
            .transpose()?,
        cancel: kairos::signal::shutdown_token(),
        lockstep: args
            .lockstep
            .map(|s| seconds("--lockstep", s))
            .transpose()?,
        publish_service_requests: args.publish_service_requests,
        ..PlayOptions::default()
    };
    // The bag is read before anything is declared, so a bad path fails without a session.
    kairos_bag::Bag::open(&args.bag)
        .with_context(|| format!("cannot read the bag {}", args.bag.display()))?;

    let transport = kairos_zenoh::ZenohTransport::open()?;
    transport.install(&kairos::graph::Context::global())?;
    let node = kairos::graph::Node::new(PLAYER_NODE)?;
    // The player publishes from its own thread; the node spins for the control services,
    // and so that Ctrl-C shuts an executor down (and cancels the shutdown token the
    // player's sleeps wait on) instead of exiting the process at once: the report is still
    // printed.
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    let player = Player::start(transport.clone(), node.clone(), &args.bag, options)
        .with_context(|| format!("playing {}", args.bag.display()))?;
    let services = kairos_bag::services::player::serve(&node, &player.control())
        .context("cannot serve the player's control services")?;
    // rosbag2's line, which tools wait for to know that playing started.
    node.logger().info(format!(
        "Playback until timestamp: {}",
        player
            .playback_until_ns()
            .map_or_else(|| "-1".to_owned(), |ns| ns.to_string())
    ));
    for topic in player.topics() {
        let renamed = if topic.name == topic.bag_name {
            String::new()
        } else {
            format!(" (recorded as {})", topic.bag_name)
        };
        eprintln!(
            "kairos bag play: publishing {}{renamed}: {} ({}, {})",
            topic.name,
            topic.type_name,
            if topic.reliable {
                "reliable"
            } else {
                "best effort"
            },
            if topic.transient_local {
                "transient local"
            } else {
                "volatile"
            },
        );
    }
    if let Some(count) = args.burst {
        let sent = player.control().burst(count);
        eprintln!("kairos bag play: burst {sent} message(s), now paused");
    }
    let report = player.wait();
    drop(services);
    let _ = exec.shutdown(kairos::time::Duration::from_secs(1));
    print_report(&report);
    // The publishers are gone with the player; closing flushes what zenoh still queues
    // (exiting without it may lose the last messages).
    if let Err(e) = transport.close(Duration::from_secs(5)) {
        eprintln!("kairos bag play: {e}");
    }
    if let Some(e) = &report.error {
        eprintln!("kairos bag play: {e}");
        return Ok(ExitCode::from(1));
    }
    if let Some(lockstep) = report.lockstep.as_ref().filter(|l| l.unsettled > 0) {
        eprintln!(
            "kairos bag play: {} settle wait(s) ran out, so this replay may differ from another; the first: {}",
            lockstep.unsettled,
            lockstep.first_unsettled.join(" | ")
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The player's node, as rosbag2 names it: its services are `/rosbag2_player/...`.
const PLAYER_NODE: &str = "rosbag2_player";

/// `--playback-until-sec` or `--playback-until-nsec`, in ns since the epoch (negative:
/// none).
fn until_ns(args: &PlayArgs) -> anyhow::Result<Option<u64>> {
    if let Some(sec) = args.playback_until_sec {
        if !sec.is_finite() {
            anyhow::bail!("--playback-until-sec must be a number of seconds, not {sec}");
        }
        return Ok((sec >= 0.0).then(|| (sec * 1e9).round() as u64));
    }
    Ok(args
        .playback_until_nsec
        .and_then(|ns| u64::try_from(ns).ok()))
}

/// Names made absolute (`chatter`: `/chatter`), as rosbag2 takes them.
fn absolute_all(names: &[String]) -> Vec<String> {
    names.iter().map(|n| absolute_name(n)).collect()
}

fn print_report(report: &PlayReport) {
    for topic in &report.without_subscribers {
        eprintln!("kairos bag play: {topic}: no subscription appeared; played all the same");
    }
    for line in report.describe() {
        println!("kairos bag play: {line}");
    }
}
