//! Story 5 as a test: a traced four-node pipeline whose third node deliberately spends
//! 100 ms per message; kairos's analyzer, reading the trace back, finds the chain and
//! names that callback as the dominant stage, with an end-to-end latency that agrees
//! with the one measured in-process.

mod common;
use common::{json_of, kairos, require_tool, run_ok};

#[test]
fn the_analyzer_finds_where_the_pipeline_spends_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("traces");
    let v = json_of(&run_ok(
        kairos()
            .args(["demo", "pipeline", "--quick", "--json", "--trace"])
            .arg(&trace),
    ));
    let chain: Vec<&str> = v["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(
        chain,
        [
            "source",
            "/pipeline/readings",
            "filter",
            "/pipeline/filtered",
            "planner",
            "/pipeline/plans",
            "printer"
        ]
    );
    assert_eq!(v["dominant"], "planner callback to publish", "{v}");
    assert!(v["messages"].as_u64().unwrap() >= 7, "{v}");
    let traced = v["traced_e2e_mean_ms"].as_f64().unwrap();
    let measured = v["measured_e2e_mean_ms"].as_f64().unwrap();
    assert!(
        traced >= 100.0,
        "the 100 ms of work must be in the traced latency: {traced}"
    );
    assert!(
        (traced - measured).abs() < 2.0,
        "trace says {traced} ms, in-process {measured} ms"
    );

    // The same trace is a valid CTF trace for babeltrace2.
    require_tool("babeltrace2", "babeltrace2");
    let out = std::process::Command::new("babeltrace2")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
