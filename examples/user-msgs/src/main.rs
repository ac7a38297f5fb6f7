//! `wheel_speeds pub N` publishes N `my_robot_msgs/msg/WheelSpeeds` on `/wheels`;
//! `wheel_speeds sub N` prints the first N it receives, from any process. The message type
//! is generated from `my_robot_msgs/msg/WheelSpeeds.msg` by `build.rs`.
//!
//! Run with `KAIROS_TRANSPORT=zenoh` and a router (`kairos router`), or with
//! `ZENOH_CONFIG_OVERRIDE` pointing one process at the other.

include!(concat!(env!("OUT_DIR"), "/my_robot_msgs.rs"));

use kairos::exec::Executor;
use kairos::graph::{Node, Qos};
use my_robot_msgs::msg::WheelSpeeds;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("wheel_speeds: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (role, count) = match args.as_slice() {
        [role, count] => (role.as_str(), count.parse::<u32>()?),
        _ => return Err("usage: wheel_speeds pub|sub COUNT".into()),
    };
    let transport = kairos_zenoh::init()?.ok_or("set KAIROS_TRANSPORT=zenoh")?;
    let code = match role {
        "pub" => publish(&transport, count)?,
        "sub" => subscribe(count)?,
        _ => return Err(format!("unknown role {role}: pub or sub").into()),
    };
    transport.close(Duration::from_secs(5))?;
    Ok(code)
}

fn publish(
    transport: &kairos_zenoh::ZenohTransport,
    count: u32,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let node = Node::new("wheel_publisher")?;
    let publisher = node.create_publisher::<WheelSpeeds>("/wheels", Qos::keep_last(10))?;
    // Wait (bounded) until a subscription of /wheels in another process is announced,
    // then give zenoh's own matching a moment: it may follow the announcement.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let seen = transport.graph().wait_until(deadline, |tokens| {
        tokens.iter().any(|t| {
            t.kind == kairos_zenoh::graph_key::EntityKind::Subscription
                && t.endpoint.as_ref().is_some_and(|e| e.name == "/wheels")
        })
    });
    if !seen {
        return Err("no subscription of /wheels appeared within 30 s".into());
    }
    std::thread::sleep(Duration::from_millis(500));
    for i in 0..count {
        let mut message = WheelSpeeds::default();
        message.header.frame_id = "base_link".into();
        message.header.stamp.sec = i as i32;
        message.speeds = [1.0, 2.0, 3.0, f64::from(i)];
        publisher.publish(message);
        println!("published {i}");
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(ExitCode::SUCCESS)
}

fn subscribe(count: u32) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let node = Node::new("wheel_subscriber")?;
    let (tx, rx) = mpsc::channel();
    let _subscription =
        node.create_subscription("/wheels", Qos::keep_last(10), move |m: Arc<WheelSpeeds>| {
            let _ = tx.send(m);
        })?;
    let exec = Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    let spin = std::thread::spawn(move || spinner.spin());
    println!("ready");
    let mut code = ExitCode::SUCCESS;
    for _ in 0..count {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(m) => println!(
                "{} sec={} speeds={:?} mode={} label={}",
                m.header.frame_id, m.header.stamp.sec, m.speeds, m.mode, m.label
            ),
            Err(_) => {
                eprintln!("no message within 30 s");
                code = ExitCode::from(1);
                break;
            }
        }
    }
    let _ = exec.shutdown(kairos::time::Duration::from_secs(2));
    let _ = spin.join();
    Ok(code)
}
