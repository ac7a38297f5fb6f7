//! The generated `my_robot_msgs/msg/WheelSpeeds` crosses from one process to another: the
//! subscriber listens on a free loopback port, the publisher connects to it (no router
//! needed between two peers). Bounded: the children are killed after 60 s.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn wheel_speeds(override_: String, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wheel_speeds"));
    cmd.args(args)
        .env("KAIROS_TRANSPORT", "zenoh")
        .env("ZENOH_CONFIG_OVERRIDE", override_)
        .env_remove("ROS_DOMAIN_ID")
        .env_remove("RMW_IMPLEMENTATION");
    cmd
}

#[test]
fn a_generated_user_message_crosses_two_processes() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    let mut sub = wheel_speeds(
        format!("connect/endpoints=[];listen/endpoints=[\"tcp/127.0.0.1:{port}\"]"),
        &["sub", "3"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit())
    .spawn()
    .expect("start the subscriber");
    let stdout = sub.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let limit = Duration::from_secs(60);
    assert_eq!(rx.recv_timeout(limit).as_deref(), Ok("ready"));
    let publisher = wheel_speeds(
        format!(
            "connect/endpoints=[\"tcp/127.0.0.1:{port}\"];listen/endpoints=[\"tcp/127.0.0.1:0\"]"
        ),
        &["pub", "3"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::inherit())
    .spawn()
    .expect("start the publisher");
    let mut children = KillOnDrop(vec![sub, publisher]);
    // Past the limit, the children are killed, so the waits below end.
    let pids: Vec<u32> = children.0.iter().map(|c| c.id()).collect();
    let (done, timeout) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if timeout.recv_timeout(Duration::from_secs(90)).is_err() {
            for pid in pids {
                let _ = Command::new("kill").arg(pid.to_string()).status();
            }
        }
    });
    let received: Vec<String> = (0..3)
        .map(|_| rx.recv_timeout(limit).expect("a message within 60 s"))
        .collect();
    assert_eq!(
        received,
        [
            "base_link sec=0 speeds=[1.0, 2.0, 3.0, 0.0] mode=1 label=front-left first",
            "base_link sec=1 speeds=[1.0, 2.0, 3.0, 1.0] mode=1 label=front-left first",
            "base_link sec=2 speeds=[1.0, 2.0, 3.0, 2.0] mode=1 label=front-left first",
        ]
    );
    for child in &mut children.0 {
        let status = child.wait().expect("wait");
        assert!(status.success(), "{status}");
    }
    let _ = done.send(());
}

struct KillOnDrop(Vec<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
