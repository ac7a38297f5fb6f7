//! Every `kairos trace` analysis subcommand on every real trace: text and `--json`
//! outputs, the Perfetto export and the HTML report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

fn kairos(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(args)
        .output()
        .expect("run kairos");
    assert!(
        out.status.success(),
        "kairos {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const TRACES: [&str; 4] = [
    "ros2-sync-one-to-one",
    "ros1-pub-sub-10",
    "ros1-pub-sub-1",
    "ctf-hello-lost",
];

#[test]
fn every_analysis_runs_on_every_real_trace_as_text_and_json() {
    for t in TRACES {
        let path = trace(t);
        let p = path.to_str().unwrap();
        for sub in ["summary", "callbacks", "timers", "queues", "chains"] {
            let text = kairos(&["trace", sub, p]);
            assert!(!text.stdout.is_empty(), "{sub} {t} printed nothing");
            let json = kairos(&["trace", sub, "--json", p]);
            let v: serde_json::Value =
                serde_json::from_slice(&json.stdout).unwrap_or_else(|e| panic!("{sub} {t}: {e}"));
            assert!(!v.is_null());
        }
    }
}

#[test]
fn summary_json_names_the_ros2_graph() {
    let out = kairos(&[
        "trace",
        "summary",
        "--json",
        trace("ros2-sync-one-to-one").to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events"], 99_338);
    assert_eq!(v["empty_takes"], 34);
    let topics = v["topics"].as_array().unwrap();
    let b = topics.iter().find(|t| t["name"] == "/topic_b").unwrap();
    assert_eq!(b["publishers"][0], "/sync_one_to_one");
    assert_eq!(b["subscribers"][0], "/sink");
}

#[test]
fn flow_prints_the_tree_of_one_message() {
    let p = trace("ros2-sync-one-to-one");
    let out = kairos(&[
        "trace",
        "flow",
        "--topic",
        "/topic_a",
        "--index",
        "10",
        p.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("/topic_a message"), "{text}");
    assert!(text.contains("/topic_b message"), "{text}");
    assert!(text.contains("sink callback"), "{text}");
    // The same message, chosen by its publication time as dump prints it.
    let at = text
        .lines()
        .next()
        .unwrap()
        .rsplit(" at ")
        .next()
        .unwrap()
        .to_string();
    let by_time = kairos(&[
        "trace",
        "flow",
        "--topic",
        "/topic_a",
        "--at",
        &at,
        p.to_str().unwrap(),
    ]);
    assert_eq!(String::from_utf8_lossy(&by_time.stdout), text);
    let bad = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["trace", "flow", "--topic", "/nope", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no message on topic `/nope`"));
}

#[test]
fn perfetto_export_has_callback_slices_and_flow_arrows() {
    let dir = std::env::temp_dir().join(format!("kairos-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out.json");
    kairos(&[
        "trace",
        "export",
        "--perfetto",
        out.to_str().unwrap(),
        trace("ros2-sync-one-to-one").to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert!(count("X") > 6000, "callback and publish slices");
    assert!(
        count("s") > 3900 && count("s") == count("f"),
        "one arrow per delivered message"
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "sync_one_to_one")
    );
}

#[test]
fn html_report_is_self_contained() {
    let dir = std::env::temp_dir().join(format!("kairos-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.html");
    kairos(&[
        "trace",
        "report",
        "--html",
        out.to_str().unwrap(),
        trace("ros2-sync-one-to-one").to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(html.contains("<svg"));
    assert!(
        html.contains("/source -&gt; /topic_a -&gt; /sync_one_to_one -&gt; /topic_b -&gt; /sink")
    );
    assert!(!html.contains("http"), "no network reference");
    assert!(!html.contains("<script"), "no script");
}

#[test]
fn analyses_read_a_trace_kairos_writes() {
    let dir = std::env::temp_dir().join(format!("kairos-analyses-written-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let demo: serde_json::Value = serde_json::from_slice(
        &kairos(&[
            "demo",
            "sim-clock-stall",
            "--quick",
            "--json",
            "--trace",
            dir.to_str().unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    // Pauses of a simulator thread held off the CPU past the stall timeout stall the
    // clock too; the demo counts them apart.
    let pauses: u64 = demo["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["stalls_before_silence"].as_u64().unwrap())
        .sum();
    let p = dir.to_str().unwrap();
    let summary: serde_json::Value =
        serde_json::from_slice(&kairos(&["trace", "summary", "--json", p]).stdout).unwrap();
    let timers: serde_json::Value =
        serde_json::from_slice(&kairos(&["trace", "timers", "--json", p]).stdout).unwrap();
    for sub in ["callbacks", "queues", "chains"] {
        kairos(&["trace", sub, "--json", p]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(summary["sources"], serde_json::json!(["kairos", "ros2"]));
    assert_eq!(summary["event_counts"]["kairos:stall"], 3 + pauses);
    let timers = timers.as_array().unwrap();
    assert_eq!(timers.len(), 3, "one sensor timer per policy");
    for t in timers {
        assert_eq!(t["period_ns"], 10_000_000);
        // How often a sensor runs in the quick demo's 200 ms window depends on the
        // machine's load (one run was seen beside the whole test suite); what the trace
        // must say is that it ran, and one lateness per run.
        let runs = t["runs"].as_u64().unwrap();
        assert!(runs >= 1, "{t}");
        assert_eq!(t["lateness"]["count"].as_u64(), Some(runs), "{t}");
    }
}
