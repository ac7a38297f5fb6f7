//! Messages a remote publisher sent that never arrived: each gap in its sequence numbers
//! is counted by the transport and traced as `kairos:message_loss` (subscription,
//! publisher, first missing number, how many); babeltrace2 reads it back, and
//! `kairos trace summary` counts the lost messages.
//!
//! One test in its own binary: a trace session is process-wide.

use kairos::exec::Executor;
use kairos::graph::{Context, Node, Qos};
use kairos::trace::Session;
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::attachment::Attachment;
use kairos_zenoh::msg::StringMsg;
use std::process::Command;
use std::sync::{Arc, mpsc};
use std::time::Duration;
use zenoh::Wait;

const WAIT: Duration = Duration::from_secs(30);

fn session_config(connect: Option<u16>, listen: Option<u16>) -> zenoh::Config {
    let mode = if listen.is_some() { "router" } else { "peer" };
    kairos_testkit::zenoh_session::loopback_config(mode, connect, listen.unwrap_or(0))
}

fn babeltrace2(dir: &std::path::Path) -> String {
    let out = Command::new("babeltrace2")
        .arg(dir)
        .output()
        .expect("babeltrace2 is required: apt-get install babeltrace2 (scripts/test installs it)");
    assert!(
        out.status.success(),
        "babeltrace2 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn field(line: &str, name: &str) -> u64 {
    let start = line
        .find(&format!("{name} = "))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        + name.len()
        + 3;
    let rest = &line[start..];
    let text = rest[..rest.find([',', ' ', '}']).unwrap_or(rest.len())].trim();
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => text.parse().unwrap(),
    }
}

#[test]
fn sequence_gaps_are_counted_and_traced_as_losses() {
    let port = kairos_testkit::router::free_loopback_port();
    let _router = zenoh::open(session_config(None, Some(port)))
        .wait()
        .expect("open the router");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let session = Session::start(&trace).unwrap();

    let transport = ZenohTransport::open_with(session_config(Some(port), None), 0).unwrap();
    let context = Context::new();
    transport.install(&context).unwrap();
    let listener = Node::new_in(&context, "listener", "/").unwrap();
    let (tx, rx) = mpsc::channel();
    let subscription = listener
        .create_subscription("/chatter", Qos::keep_last(10), move |m: Arc<StringMsg>| {
            let _ = tx.send(m.data.clone());
        })
        .unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&listener).unwrap();
    let spin = executor.clone();
    let spinner = std::thread::spawn(move || spin.spin());

    // A publisher in another session that skips numbers: 1, 2, 6 (3..=5 lost), 7, 10
    // (8 and 9 lost).
    let other = zenoh::open(session_config(Some(port), None))
        .wait()
        .unwrap();
    let key = format!(
        "0/chatter/std_msgs::msg::dds_::String_/{}",
        <StringMsg as kairos::graph::Message>::type_hash()
    );
    let raw = other.declare_publisher(key).wait().unwrap();
    assert!(
        kairos_zenoh::matching::wait_matched(&raw, WAIT).unwrap(),
        "the subscriber did not match within {WAIT:?}"
    );
    let gid = [9u8; 16];
    let sent = [1i64, 2, 6, 7, 10];
    for seq in sent {
        let attachment = Attachment {
            sequence_number: seq,
            source_timestamp: 0,
            gid,
        };
        raw.put(kairos_zenoh::message::encode(&StringMsg {
            data: format!("#{seq}"),
        }))
        .attachment(attachment.to_bytes().to_vec())
        .wait()
        .unwrap();
    }
    for seq in sent {
        assert_eq!(rx.recv_timeout(WAIT).unwrap(), format!("#{seq}"));
    }
    assert_eq!(transport.sequence_gaps(), 5, "3, 4, 5, 8 and 9 never came");
    assert_eq!(subscription.stats().received, 5);
    executor.cancel();
    spinner.join().unwrap().unwrap();
    session.stop().unwrap();

    let text = babeltrace2(&trace);
    let losses: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" kairos:message_loss: "))
        .collect();
    let publisher = u64::from_le_bytes(gid[..8].try_into().unwrap());
    let seen: Vec<(u64, u64, u64)> = losses
        .iter()
        .map(|l| {
            (
                field(l, "publisher_handle"),
                field(l, "first_seq"),
                field(l, "count"),
            )
        })
        .collect();
    assert_eq!(seen, vec![(publisher, 3, 3), (publisher, 8, 2)], "{text}");
    // The loss names the subscription the messages were meant for.
    let subscription_handle = text
        .lines()
        .find(|l| l.contains(" ros2:rcl_subscription_init: ") && l.contains("\"/chatter\""))
        .map(|l| field(l, "subscription_handle"))
        .expect("the subscription is traced");
    for line in losses {
        assert_eq!(field(line, "subscription_handle"), subscription_handle);
    }

    // The analyzer counts the messages, not the gaps.
    let summary = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["trace", "summary", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(summary.status.success(), "{summary:?}");
    let summary: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(summary["remote_losses"], 5, "{summary:#}");
    assert_eq!(summary["event_counts"]["kairos:message_loss"], 2);
    let text = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["trace", "summary"])
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("messages from other processes lost on the way (sequence gaps): 5"),
        "{text}"
    );
}
