//! Story 1's verdicts on `kairos demo sim-clock-stall --json`, whichever placement ran it
//! (threads of one process, or processes on Zenoh): one set of assertions for both.

use serde_json::Value;

/// Asserts what every run of the demo must show, and returns its policies in order
/// (`wait`, `fallback_to_steady`, `fail`): the naive contender hung (else the scenario
/// proves nothing); each policy stopped (within the stop's deadline: a sleep it did not wake
/// would have held it there, the clock frozen; how fast is a figure) and detected the stall no earlier
/// than the stall timeout (less `lag_ms`, the arrival stamp's handler lag where the last
/// sample crossed processes) and within the liveness limit after it (30 s: how soon is
/// a figure, which a loaded machine stretches); `wait` held the clock, `fallback`
/// advanced it and `fail` ended the waiting loop with the stall.
pub fn assert_story1_verdicts(v: &Value, lag_ms: f64) -> &[Value] {
    assert_eq!(
        v["naive_hung"], true,
        "the naive contender did not hang; the scenario proves nothing: {v}"
    );
    let policies = v["policies"].as_array().expect("policies");
    let names: Vec<&str> = policies
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["wait", "fallback_to_steady", "fail"]);
    let timeout = v["stall_timeout_ms"].as_f64().unwrap();
    for p in policies {
        assert_eq!(p["stopped"], true, "{p}");
        assert!(p["stop_ms"].is_f64(), "{p}");
        let detected = p["stall_detected_ms"]
            .as_f64()
            .expect("stall never detected");
        assert!(
            detected >= timeout - lag_ms,
            "stall reported {detected} ms after the last /clock, before the {timeout} ms timeout: {p}"
        );
        assert!(
            detected < timeout + 30_000.0,
            "stall noticed past the liveness limit: {p}"
        );
    }
    let at = |i: usize, k: &str| policies[i][k].as_f64().unwrap();
    assert_eq!(
        at(0, "clock_at_stop_ms"),
        at(0, "clock_at_silence_ms"),
        "wait: the clock holds"
    );
    assert!(
        at(1, "clock_at_stop_ms") > at(1, "clock_at_silence_ms"),
        "fallback: the clock advances"
    );
    assert!(
        policies[2]["loop_ended_with"]
            .as_str()
            .unwrap()
            .contains("stalled"),
        "fail: the wait failed"
    );
    policies
}
