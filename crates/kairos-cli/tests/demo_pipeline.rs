//! Story 5 as a test: a traced four-node pipeline whose third node deliberately spends
//! 100 ms per message; kairos's analyzer, reading the trace back, finds the chain and
//! names that callback as the dominant stage, with an end-to-end latency that agrees
//! with the one measured in-process.

mod cli_support;
use cli_support::{json_of, kairos, run_ok};

/// The chain every form of the pipeline must be found as: nodes and topics in order.
const PIPELINE_CHAIN: [&str; 7] = [
    "/pipeline/source",
    "/pipeline/readings",
    "/pipeline/filter",
    "/pipeline/filtered",
    "/pipeline/planner",
    "/pipeline/plans",
    "/pipeline/printer",
];

/// The chain the demo's JSON names.
fn chain_of(v: &serde_json::Value) -> Vec<&str> {
    v["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

#[test]
fn the_analyzer_finds_where_the_pipeline_spends_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("traces");
    let v = json_of(&run_ok(
        kairos()
            .args(["demo", "pipeline", "--quick", "--json", "--trace"])
            .arg(&trace)
            .arg("--out")
            .arg(dir.path().join("out")),
    ));
    assert_eq!(chain_of(&v), PIPELINE_CHAIN, "{v}");
    assert_eq!(
        v["dominant"], "/pipeline/planner callback to publish",
        "{v}"
    );
    assert!(v["messages"].as_u64().unwrap() >= 7, "{v}");
    let traced = v["traced_e2e_mean_ms"].as_f64().unwrap();
    let measured = v["measured_e2e_mean_ms"].as_f64().unwrap();
    assert!(
        traced >= 100.0,
        "the 100 ms of work must be in the traced latency: {traced}"
    );
    // The traced interval (publish to the printer's callback start) lies inside the
    // in-process one (stamped before the publish and after the callback starts): a
    // preemption can widen the second, never the first.
    assert!(
        traced <= measured * 1.05 + 2.0,
        "trace says {traced} ms, in-process {measured} ms"
    );

    // The same trace is a valid CTF trace for babeltrace2.
    let out = kairos_testkit::babeltrace2_output(&[], &trace);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The demo keeps what it traced in the folder it names: a trace that `kairos trace
/// summary` and babeltrace2 read, the HTML report and the Perfetto file; the next run
/// replaces them, and a folder the demo did not write is refused, not emptied.
#[test]
fn the_pipeline_keeps_its_trace_report_and_perfetto_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo-out");
    let run = || {
        let output = run_ok(
            kairos()
                .args(["demo", "pipeline", "--quick", "--out"])
                .arg(&out),
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let text = run();
    let artifacts = out.join("pipeline");
    let trace = artifacts.join("trace");
    for file in [
        artifacts.join("report.html"),
        artifacts.join("perfetto.json"),
    ] {
        assert!(
            file.is_file(),
            "{} missing; the demo said:\n{text}",
            file.display()
        );
        assert!(text.contains(&file.display().to_string()), "{text}");
    }
    assert!(
        text.contains("trace chains"),
        "ends with the commands to look: {text}"
    );
    let summary = json_of(&run_ok(
        kairos().args(["trace", "summary", "--json"]).arg(&trace),
    ));
    assert!(summary["events"].as_u64().unwrap() > 100, "{summary}");
    let bt = kairos_testkit::babeltrace2_output(&[], &trace);
    assert!(bt.status.success() && bt.stderr.is_empty(), "{bt:?}");
    let html = std::fs::read_to_string(artifacts.join("report.html")).unwrap();
    assert!(html.contains("planner"), "the report names the nodes");

    // Run again: replaced, not refused.
    run();
    assert!(trace.is_dir());

    // A folder the demo did not write is left alone.
    let foreign = dir.path().join("mine");
    std::fs::create_dir_all(foreign.join("pipeline")).unwrap();
    std::fs::write(foreign.join("pipeline/notes.txt"), "keep me").unwrap();
    let refused = kairos()
        .args(["demo", "pipeline", "--quick", "--out"])
        .arg(&foreign)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--out"),
        "{refused:?}"
    );
    assert!(foreign.join("pipeline/notes.txt").is_file());
}

/// `--sim`: a minute of robot time on simulation time, run twice: the same trace both
/// times (events, order, simulated timestamps), every end-to-end latency exactly the
/// planner's 100 ms of simulated work, and faster than real time.
#[test]
fn the_simulated_pipeline_traces_identically_twice() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&run_ok(
        kairos()
            .args(["demo", "pipeline", "--sim", "--json", "--out"])
            .arg(dir.path()),
    ));
    let sim = &v["sim"];
    assert_eq!(sim["identical"], true, "{v}");
    assert_eq!(sim["latencies_exactly_planner_work"], true, "{v}");
    assert_eq!(sim["events"][0], sim["events"][1], "{v}");
    assert!(sim["events"][0].as_u64().unwrap() > 60_000, "{v}");
    assert_eq!(chain_of(&v), PIPELINE_CHAIN, "{v}");
    assert_eq!(
        v["dominant"], "/pipeline/planner callback to publish",
        "{v}"
    );
    assert_eq!(v["traced_e2e_mean_ms"], 100.0, "{v}");
    let wall = sim["wall_s"][0].as_f64().unwrap();
    assert!(
        wall < sim["robot_time_s"].as_f64().unwrap(),
        "simulated time must run faster than real time: {v}"
    );
    // The trace babeltrace2 reads, on the simulated clock.
    let trace = dir.path().join("pipeline-sim/trace");
    let bt = kairos_testkit::babeltrace2_output(&["--clock-seconds"], &trace);
    assert!(bt.status.success() && bt.stderr.is_empty(), "{bt:?}");
    let text = String::from_utf8_lossy(&bt.stdout);
    assert!(
        text.lines().last().unwrap().starts_with("[60.000000000]"),
        "the last event is at simulated 60 s: {}",
        text.lines().last().unwrap()
    );
}

/// `--processes`: the four nodes in four processes on Zenoh, each traced by
/// `KAIROS_TRACE` into one folder; the analyzer follows the messages across the three
/// process boundaries and finds the planner's 100 ms.
#[test]
fn the_pipeline_across_four_processes_is_followed_across_the_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&run_ok(
        kairos()
            .args([
                "demo",
                "pipeline",
                "--processes",
                "--quick",
                "--json",
                "--out",
            ])
            .arg(dir.path()),
    ));
    assert_eq!(v["processes"], 4, "{v}");
    assert_eq!(chain_of(&v), PIPELINE_CHAIN, "{v}");
    assert_eq!(
        v["dominant"], "/pipeline/planner callback to publish",
        "{v}"
    );
    let planner = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "/pipeline/planner callback to publish")
        .unwrap()["mean_ms"]
        .as_f64()
        .unwrap();
    // 100 ms of sleep, never early; a loaded machine can only make it longer.
    assert!(
        planner >= 100.0,
        "the slow stage takes its 100 ms: {planner} ms"
    );
    for hop in [
        "/pipeline/readings",
        "/pipeline/filtered",
        "/pipeline/plans",
    ] {
        assert!(
            v["stages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == format!("{hop} transport")),
            "the network hop on {hop} is a stage: {v}"
        );
    }
    let trace = dir.path().join("pipeline-processes/trace");
    let per_process = std::fs::read_dir(&trace).unwrap().count();
    assert_eq!(per_process, 4, "one trace folder per process");
    let bt = kairos_testkit::babeltrace2_output(&[], &trace);
    assert!(bt.status.success() && bt.stderr.is_empty(), "{bt:?}");
}
