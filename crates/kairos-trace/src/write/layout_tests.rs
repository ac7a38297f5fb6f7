//! The packet encoder and the metadata agree, checked by babeltrace2 on timestamps a real
//! run cannot produce quickly: wraps of the 32-bit compact timestamp and gaps of 2^32 ns.

use super::buffer::Record;
use super::metadata::{TraceInfo, tsdl};
use super::packet::{EventContext, PacketBuilder, PacketInfo};
use crate::schema::Event;
use std::path::Path;

fn babeltrace_cycles(dir: &Path) -> Vec<u64> {
    let output = kairos_testkit::babeltrace2_output(&["--clock-cycles"], dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stderr.is_empty(), "{stderr}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let end = line.find(']').unwrap();
            line[1..end].parse().unwrap()
        })
        .collect()
}

#[test]
fn compact_timestamps_survive_wraps_and_long_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let info = TraceInfo {
        uuid: [1; 16],
        clock_uuid: [2; 16],
        clock_name: "monotonic".into(),
        clock_description: "Monotonic Clock".into(),
        clock_offset_ns: 0,
        hostname: "host".into(),
        procname: "proc".into(),
    };
    std::fs::write(dir.path().join("metadata"), tsdl(&info)).unwrap();
    let stamps = [
        (1u64 << 32) - 10,             // first of the packet: extended
        (1 << 32) + 5,                 // compact, its low 32 bits wrapped
        (1 << 32) + 6,                 // compact
        (3 << 32) + 7,                 // gap over 2^32: extended
        (3 << 32) + 7 + (1 << 32) - 1, // gap just under 2^32: compact with a wrap
    ];
    let context = EventContext {
        vtid: 1,
        vpid: 1,
        procname: EventContext::procname_field("proc"),
    };
    let mut packet = PacketBuilder::default();
    packet.begin(&info.uuid, 0);
    for (callback, &timestamp) in (0..).zip(&stamps) {
        let event = Event::CallbackEnd { callback };
        assert!(packet.try_push(&Record { timestamp, event }, &context));
    }
    let info = PacketInfo {
        seq_num: 0,
        events_discarded: 0,
        cpu_id: 0,
    };
    std::fs::write(dir.path().join("stream_0"), packet.finish(info)).unwrap();
    assert_eq!(babeltrace_cycles(dir.path()), stamps);
}
