//! `kairos tf echo|frames|static|buffer-server`: frames across processes, as `ros2 run
//! tf2_ros tf2_echo`, `view_frames`, `static_transform_publisher` and `buffer_server` do
//! them, on `kairos-tf2-ros`.
//!
//! Every command is bounded: `echo` by `--count` / `--timeout`, `frames` by `--wait`,
//! `static` and `buffer-server` by `--duration` or Ctrl-C.

pub mod static_args;

use super::{period, seconds};
use clap::{Args, Subcommand};
use kairos::graph::{Context, Node};
use kairos_tf2::{Quaternion, Stamp, TransformStamped};
use kairos_tf2_ros::{Buffer, StaticTransformBroadcaster, TransformListener};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum TfCmd {
    /// Print the transform from SOURCE to TARGET as it changes (tf2_echo).
    Echo(EchoArgs),
    /// The frame tree: each frame's parent, rate, newest stamp and buffer length.
    Frames(FramesArgs),
    /// Publish one static transform on /tf_static (static_transform_publisher).
    Static(StaticArgs),
    /// Serve lookups to other programs (tf2_ros's buffer_server:
    /// tf2_msgs/action/LookupTransform, as tf2_ros.BufferClient asks).
    BufferServer(BufferServerArgs),
}

#[derive(Debug, Args)]
pub struct BufferServerArgs {
    /// The action's name.
    #[arg(long, default_value = "tf2_buffer_server")]
    pub name: String,
    /// Exit after this many seconds (default: at Ctrl-C).
    #[arg(long)]
    pub duration: Option<f64>,
}

#[derive(Debug, Args)]
pub struct EchoArgs {
    /// The frame the transform is expressed in (tf2_echo's first argument).
    pub source_frame: String,
    /// The frame whose pose is printed.
    pub target_frame: String,
    /// Lookups per second.
    #[arg(short = 'r', long, default_value_t = 1.0)]
    pub rate: f64,
    /// Exit after this many transforms.
    #[arg(long)]
    pub count: Option<u64>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// One JSON object per transform.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FramesArgs {
    /// Seconds to listen before printing (view_frames listens 5 s).
    #[arg(long, default_value_t = 5.0)]
    pub wait: f64,
    /// Print the tree as Graphviz dot, as view_frames writes it.
    #[arg(long)]
    pub dot: bool,
    #[arg(long)]
    pub json: bool,
}

/// tf2_ros's `static_transform_publisher` arguments, read as it reads them.
#[derive(Debug, Args)]
pub struct StaticArgs {
    #[command(flatten)]
    pub given: static_args::Given,
    /// Exit after this many seconds (default: at Ctrl-C).
    #[arg(long)]
    pub duration: Option<f64>,
}

pub fn run(cmd: TfCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        TfCmd::Echo(args) => echo(args),
        TfCmd::Frames(args) => frames(args),
        TfCmd::Static(args) => publish_static(args),
        TfCmd::BufferServer(args) => buffer_server(args),
    }
}

/// Sleeps until `duration` seconds have passed (a year without one) or Ctrl-C.
fn stay(duration: Option<f64>) -> anyhow::Result<()> {
    let steady = kairos::time::Clock::steady();
    let token = kairos::signal::shutdown_token();
    let until = match duration {
        Some(d) => steady.now() + kairos::time::Duration::from(seconds("--duration", d)?),
        None => steady.now() + kairos::time::Duration::from_secs(365 * 24 * 3600),
    };
    let _ = steady.sleep_until(until, &token);
    Ok(())
}

fn buffer_server(args: BufferServerArgs) -> anyhow::Result<ExitCode> {
    let (node, _transport) = node("buffer_server")?;
    let buffer = Buffer::new(node.clock());
    let _listener = TransformListener::new(&node, buffer.clone())?;
    let _server = kairos_tf2_ros::BufferServer::new(&node, buffer, &args.name)?;
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    println!("kairos tf buffer-server: serving {}", args.name);
    stay(args.duration)?;
    let _ = exec.shutdown(kairos::time::Duration::from_secs(2));
    Ok(ExitCode::SUCCESS)
}

/// A node on the Zenoh transport, spun by an executor of its own (so Ctrl-C shuts it down
/// gracefully), and a listener filling a buffer.
struct Listening {
    buffer: Buffer,
    _listener: TransformListener,
    exec: kairos::exec::Executor,
    _transport: std::sync::Arc<kairos_zenoh::ZenohTransport>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.exec.shutdown(kairos::time::Duration::from_secs(2));
    }
}

fn node(role: &str) -> anyhow::Result<(Node, std::sync::Arc<kairos_zenoh::ZenohTransport>)> {
    let transport = kairos_zenoh::ZenohTransport::open()?;
    transport.install(&Context::global())?;
    let node = Node::new(&format!("kairos_tf_{role}_{}", std::process::id()))?;
    Ok((node, transport))
}

fn listen(role: &str) -> anyhow::Result<Listening> {
    let (node, transport) = node(role)?;
    let buffer = Buffer::new(node.clock());
    let listener = TransformListener::new(&node, buffer.clone())?;
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    Ok(Listening {
        buffer,
        _listener: listener,
        exec,
        _transport: transport,
    })
}

fn echo(args: EchoArgs) -> anyhow::Result<ExitCode> {
    let period = kairos::time::Duration::from(period("--rate", args.rate)?);
    let timeout = kairos::time::Duration::from(seconds("--timeout", args.timeout)?);
    let listening = listen("echo")?;
    let steady = kairos::time::Clock::steady();
    let token = kairos::signal::shutdown_token();
    let end = steady.now() + timeout;
    let mut printed = 0u64;
    let mut next = steady.now();
    let mut last_error = None;
    while args.count.is_none_or(|c| printed < c) {
        if steady.now() >= end {
            eprintln!(
                "kairos tf echo: {printed} transform(s) in {}s{}",
                args.timeout,
                last_error
                    .map(|e| format!("; the last lookup said: {e}"))
                    .unwrap_or_default()
            );
            return Ok(ExitCode::from(1));
        }
        // The first lookup waits for the transform (bounded by the timeout); later ones
        // come at the rate.
        let result = if printed == 0 {
            listening.buffer.lookup_transform_with_cancel(
                &args.source_frame,
                &args.target_frame,
                Stamp::LATEST,
                timeout,
                &token,
            )
        } else {
            listening
                .buffer
                .lookup_transform(&args.source_frame, &args.target_frame, Stamp::LATEST)
                .map_err(Into::into)
        };
        match result {
            Ok(found) => {
                print_transform(&found, args.json);
                printed += 1;
            }
            Err(e) if token.is_cancelled() => {
                let _ = e;
                break;
            }
            Err(e) => last_error = Some(e.to_string()),
        }
        next = next + period;
        let wake = if next < end { next } else { end };
        if steady.sleep_until(wake, &token).is_err() {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_transform(t: &TransformStamped, json: bool) {
    let (v, q) = (t.transform.translation, t.transform.rotation);
    let (roll, pitch, yaw) = rpy(q);
    let stamp = t.header.stamp.as_secs_f64();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "stamp": stamp,
                "frame_id": t.header.frame_id,
                "child_frame_id": t.child_frame_id,
                "translation": [v.x, v.y, v.z],
                "rotation_xyzw": [q.x, q.y, q.z, q.w],
                "rpy": [roll, pitch, yaw],
            })
        );
    } else {
        println!("At time {stamp:.9}");
        println!("- Translation: [{:.3}, {:.3}, {:.3}]", v.x, v.y, v.z);
        println!(
            "- Rotation: in Quaternion (xyzw) [{:.3}, {:.3}, {:.3}, {:.3}]",
            q.x, q.y, q.z, q.w
        );
        println!("- Rotation: in RPY (radian) [{roll:.3}, {pitch:.3}, {yaw:.3}]");
        println!(
            "- Rotation: in RPY (degree) [{:.3}, {:.3}, {:.3}]",
            roll.to_degrees(),
            pitch.to_degrees(),
            yaw.to_degrees()
        );
    }
}

/// Roll, pitch and yaw (ZYX Euler angles) of `q`.
fn rpy(q: Quaternion) -> (f64, f64, f64) {
    let roll = (2.0 * (q.w * q.x + q.y * q.z)).atan2(1.0 - 2.0 * (q.x * q.x + q.y * q.y));
    let pitch = (2.0 * (q.w * q.y - q.z * q.x)).clamp(-1.0, 1.0).asin();
    let yaw = (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z));
    (roll, pitch, yaw)
}

fn frames(args: FramesArgs) -> anyhow::Result<ExitCode> {
    let wait = kairos::time::Duration::from(seconds("--wait", args.wait)?);
    let listening = listen("frames")?;
    let steady = kairos::time::Clock::steady();
    let _ = steady.sleep_until(steady.now() + wait, &kairos::signal::shutdown_token());
    let frames = listening.buffer.with_core(|core| core.frames());
    let rate = |f: &kairos_tf2::FrameInfo| match (f.oldest, f.newest) {
        (Some(a), Some(b)) if f.stored > 1 && b.nanos() > a.nanos() => {
            (f.stored - 1) as f64 / (b.as_secs_f64() - a.as_secs_f64())
        }
        _ => 0.0,
    };
    if args.dot {
        println!("digraph G {{");
        for f in frames.iter().filter(|f| f.parent.is_some()) {
            let parent = f.parent.as_deref().unwrap_or_default();
            println!(
                "\"{parent}\" -> \"{}\"[label=\" Broadcaster: {}\\nAverage rate: {:.3}\\nBuffer length: {}\\nMost recent transform: {:.3}\\n\"];",
                f.name,
                f.authority,
                rate(f),
                f.stored,
                f.newest.map_or(0.0, Stamp::as_secs_f64)
            );
        }
        println!("}}");
    } else if args.json {
        let list: Vec<serde_json::Value> = frames
            .iter()
            .map(|f| {
                serde_json::json!({
                    "frame": f.name, "parent": f.parent, "authority": f.authority,
                    "static": f.is_static, "rate_hz": rate(f), "stored": f.stored,
                    "newest": f.newest.map(Stamp::as_secs_f64),
                    "oldest": f.oldest.map(Stamp::as_secs_f64),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for f in &frames {
            match &f.parent {
                Some(parent) => println!(
                    "{}: parent {parent}{}, {:.3} Hz, newest {:.3}, {} stored",
                    f.name,
                    if f.is_static { " (static)" } else { "" },
                    rate(f),
                    f.newest.map_or(0.0, Stamp::as_secs_f64),
                    f.stored
                ),
                None => println!("{}: root", f.name),
            }
        }
        if frames.is_empty() {
            eprintln!("kairos tf frames: no transform heard in {}s", args.wait);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn publish_static(args: StaticArgs) -> anyhow::Result<ExitCode> {
    let wanted = args
        .given
        .resolve()
        .map_err(|why| anyhow::anyhow!("error parsing command line arguments: {why}"))?;
    if wanted.old_style {
        eprintln!(
            "kairos tf static: old-style arguments are deprecated (as in tf2_ros); use \
             --x/--y/--z, --qx/--qy/--qz/--qw or --roll/--pitch/--yaw, --frame-id and \
             --child-frame-id"
        );
    }
    let (node, _transport) = node("static")?;
    let broadcaster = StaticTransformBroadcaster::new(&node)?;
    let stamp = node.clock().now().nanos();
    broadcaster.send_transform(&TransformStamped::new(
        &wanted.frame_id,
        &wanted.child_frame_id,
        Stamp::from_nanos(stamp),
        wanted.transform,
    ));
    println!(
        "kairos tf static: {} -> {} on /tf_static",
        wanted.frame_id, wanted.child_frame_id
    );
    // The transient-local cache lives as long as the publisher: stay until told to go.
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    stay(args.duration)?;
    let _ = exec.shutdown(kairos::time::Duration::from_secs(2));
    Ok(ExitCode::SUCCESS)
}
