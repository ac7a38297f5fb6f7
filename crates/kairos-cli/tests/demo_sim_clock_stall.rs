//! Story 1 as a test: with the simulated clock frozen, stopping the sensor server returns
//! within 100 ms under every stall policy, the stall is detected, each policy does what it
//! declares, and the naive contender (join without timeout) really hangs.

mod common;
use common::{json_of, kairos, run_ok};

/// One demo at a time: each times stops and stall detection in milliseconds, which a
/// second demo running beside it on a 2-core machine would disturb.
static ONE_DEMO_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn stop_under_a_stalled_clock_is_prompt_for_every_policy() {
    let _one = ONE_DEMO_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let v = json_of(&run_ok(kairos().args([
        "demo",
        "sim-clock-stall",
        "--json",
    ])));
    assert_eq!(
        v["naive_hung"], true,
        "the naive contender did not hang; the scenario proves nothing: {v}"
    );
    let policies = v["policies"].as_array().unwrap();
    let names: Vec<&str> = policies
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["wait", "fallback_to_steady", "fail"]);
    let timeout = v["stall_timeout_ms"].as_f64().unwrap();
    for p in policies {
        assert_eq!(p["stopped"], true, "{p}");
        let stop = p["stop_ms"].as_f64().unwrap();
        assert!(stop < 100.0, "stop took {stop} ms: {p}");
        let detected = p["stall_detected_ms"]
            .as_f64()
            .expect("stall never detected");
        assert!(
            detected >= timeout,
            "stall reported after {detected} ms, before the {timeout} ms timeout: {p}"
        );
        assert!(
            detected < timeout + 2000.0,
            "stall noticed far too late: {p}"
        );
    }
    let silence = |i: usize, k: &str| policies[i][k].as_f64().unwrap();
    assert_eq!(
        silence(0, "clock_at_silence_ms"),
        300.0,
        "the full run publishes 300 ms of simulated time"
    );
    assert_eq!(
        silence(0, "clock_at_stop_ms"),
        silence(0, "clock_at_silence_ms"),
        "wait: the clock holds"
    );
    assert!(
        silence(1, "clock_at_stop_ms") > silence(1, "clock_at_silence_ms"),
        "fallback: the clock advances"
    );
    assert!(
        policies[2]["loop_ended_with"]
            .as_str()
            .unwrap()
            .contains("stalled"),
        "fail: the wait failed"
    );
}

/// `--quick` shortens the simulator's run (200 ms of simulated time before the silence,
/// not 300 ms) and keeps every promise: each policy stops promptly.
#[test]
fn quick_runs_a_shorter_simulation_and_stops_as_promptly() {
    let _one = ONE_DEMO_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let v = json_of(&run_ok(kairos().args([
        "demo",
        "sim-clock-stall",
        "--quick",
        "--json",
    ])));
    let policies = v["policies"].as_array().unwrap();
    // Under `wait` the clock holds the last value published, whatever the machine's load.
    assert_eq!(policies[0]["policy"], "wait");
    assert_eq!(
        policies[0]["clock_at_silence_ms"].as_f64(),
        Some(200.0),
        "{v}"
    );
    for p in policies {
        assert_eq!(p["stopped"], true, "{p}");
        let stop = p["stop_ms"].as_f64().unwrap();
        assert!(stop < 100.0, "stop took {stop} ms: {p}");
    }
}
