//! Chains of a traced replay start at the bag: a trace the kairos writer records (a real
//! `Session`) of a player publishing bag messages (`kairos:bag_play`), a node that relays
//! them, and a recorder writing the relayed messages into a bag (`kairos:bag_write`).
//! `chains` starts each chain at the player's bag with its lateness as the first stage
//! and ends it in the recorder's bag; `flow` says which bag message a message was.

use kairos_analyze::flow::{Pick, flow};
use kairos_analyze::{Builder, Digest, Options, analyze, chains};
use kairos_trace::read::TraceSet;
use kairos_trace::{Session, tp};

const MESSAGES: u64 = 50;
/// Bag time of the first message, ns.
const BAG_START: i64 = 1_700_000_000_000_000_000;

/// The player (one thread) publishes /input; `stage` relays each on /output from its
/// callback (another thread); the recorder's subscription takes /output and writes it.
/// Message `seq` left `seq` microseconds after it was due; every 5th was asked for (play
/// next) and has no due time.
fn record(dir: &std::path::Path) {
    let session = Session::start(dir).unwrap();
    tp::rcl_node_init(0x10, 0x10, "rosbag2_player", "/");
    tp::rcl_node_init(0x11, 0x11, "stage", "/");
    tp::rcl_node_init(0x12, 0x12, "recorder", "/");
    tp::rcl_publisher_init(0x20, 0x10, 0x20, "/input", 10);
    tp::rcl_subscription_init(0x30, 0x11, 0x30, "/input", 10);
    tp::rclcpp_subscription_init(0x30, 0x31);
    tp::rclcpp_subscription_callback_added(0x31, 0x32);
    tp::rcl_publisher_init(0x21, 0x11, 0x21, "/output", 10);
    tp::rcl_subscription_init(0x40, 0x12, 0x40, "/output", 10);
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let stage = std::thread::spawn(move || {
        for seq in rx {
            tp::rmw_take(0x30, 0xB0, 0, 1, 0x20, seq);
            tp::callback_start(0x32, 0);
            tp::rcl_publish(0x21, 0xB1, seq);
            tp::rmw_publish(0xB1, 0x21, seq);
            tp::callback_end(0x32);
            // The recorder's subscription takes on arrival; its writer writes.
            tp::rmw_take(0x40, 0xB2, 0, 1, 0x21, seq);
            tp::bag_write(0x40, 0x21, seq, "/output", BAG_START + seq as i64, 12);
        }
    });
    for seq in 1..=MESSAGES {
        let late = if seq % 5 == 0 { -1 } else { seq as i64 * 1_000 };
        tp::rcl_publish(0x20, 0xA0, seq);
        tp::rmw_publish(0xA0, 0x20, seq);
        tp::bag_play(
            0x20,
            seq,
            "/input",
            BAG_START + seq as i64 * 1_000_000,
            late,
        );
        tx.send(seq).unwrap();
    }
    drop(tx);
    stage.join().unwrap();
    let stats = session.stop().unwrap();
    assert_eq!(stats.events_discarded, 0, "the test must not overflow");
}

const PATH: &str = "/rosbag2_player (bag) -> /input -> /stage -> /output -> /recorder (bag)";

fn check(ch: &chains::Chains) {
    let names: Vec<String> = ch.0.iter().map(|c| c.name()).collect();
    assert!(
        names.iter().all(|n| n == PATH),
        "every chain starts at the player's bag and ends in the recorder's: {names:?}"
    );
    // Due messages: the player's lateness is the first stage; asked-for ones have none.
    let late = "/rosbag2_player lateness (due to published)";
    let due: Vec<_> = ch.0.iter().filter(|c| c.stages[0].name == late).collect();
    let at_once: Vec<_> = ch.0.iter().filter(|c| c.stages[0].name != late).collect();
    assert_eq!(
        (due.len(), at_once.len()),
        (1, 1),
        "{:?}",
        ch.0.iter()
            .map(|c| c.stages.iter().map(|s| &s.name).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    assert_eq!(due[0].count as u64, MESSAGES - MESSAGES / 5);
    assert_eq!(at_once[0].count as u64, MESSAGES / 5);
    let lateness = &due[0].stages[0].latency;
    assert_eq!(
        (lateness.min_ns, lateness.max_ns),
        (1_000, 49_000),
        "the lateness recorded"
    );
    // End to end runs from the due time: at least the lateness, and on the trace's own
    // time line (a due time on another clock would be off by the clock's offset, years).
    assert!(due[0].total.min_ns >= 1_000, "{:?}", due[0].total);
    assert!(due[0].total.max_ns < 60_000_000_000, "{:?}", due[0].total);
    for c in &ch.0 {
        assert_eq!(
            c.stages.last().unwrap().name,
            "/output write into the bag of /recorder"
        );
        assert!(c.stages.iter().all(|s| s.latency.min_ns >= 0));
    }
}

#[test]
fn a_replay_chain_runs_from_the_players_bag_to_the_recorders() {
    let dir = std::env::temp_dir().join(format!("kairos-bag-chains-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    record(&dir);

    let m = analyze(&dir, Options::default()).unwrap();
    assert!(m.read_errors.is_empty(), "{:?}", m.read_errors);
    assert_eq!(m.unmatched_takes, 0);
    check(&chains::chains(&m));

    // The streaming analyzer (what `kairos trace chains` runs on long traces) agrees.
    let set = TraceSet::open(&dir).unwrap();
    let mut events = set.events_with(Builder::selection()).unwrap();
    let mut b = Builder::streaming(Digest::default());
    while let Some(Ok(ev)) = events.next_ref() {
        b.event_ref(ev);
    }
    let (streamed, digest) = b.finish_streaming(0, 0);
    let digest = digest.unwrap();
    check(&digest.chains.report(&streamed));
    assert_eq!(
        digest.never_reached, 0,
        "a delivery written into a bag has reached its end"
    );

    // The third message was due; the fifth was asked for.
    let third = flow(&m, "/input", Pick::Index(2)).unwrap();
    let bag = third.bag.expect("a bag message");
    assert_eq!(bag.log_time, BAG_START + 3_000_000);
    assert_eq!(bag.late, Some(3_000));
    let text = third.to_string();
    assert!(text.contains("from a bag: recorded at bag time"), "{text}");
    assert!(text.contains("write into the bag of /recorder"), "{text}");
    let fifth = flow(&m, "/input", Pick::Index(4)).unwrap();
    assert_eq!(fifth.bag.and_then(|b| b.late), None);
    assert!(fifth.to_string().contains("played at once"), "{fifth}");
    std::fs::remove_dir_all(&dir).unwrap();
}
