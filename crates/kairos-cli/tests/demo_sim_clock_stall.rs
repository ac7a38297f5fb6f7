//! Story 1 as a test: with the simulated clock frozen, stopping the sensor server returns
//! (within its deadline: a sleep the stop did not wake would hold it there) under every stall policy, the stall is detected, each policy does what it
//! declares, and the naive contender (join without timeout) really hangs.

mod cli_support;
mod stall_support;
use cli_support::{json_of, kairos, run_ok};

/// One demo at a time: each times stops and stall detection in milliseconds, which a
/// second demo running beside it on a 2-core machine would disturb.
static ONE_DEMO_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `kairos demo sim-clock-stall FLAGS --json`, alone, and its JSON.
fn demo(flags: &[&str]) -> serde_json::Value {
    let _one = ONE_DEMO_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    json_of(&run_ok(
        kairos()
            .args(["demo", "sim-clock-stall"])
            .args(flags)
            .arg("--json"),
    ))
}

#[test]
fn stop_under_a_stalled_clock_is_prompt_for_every_policy() {
    let v = demo(&[]);
    let policies = stall_support::assert_story1_verdicts(&v, 0.0);
    assert_eq!(
        policies[0]["clock_at_silence_ms"].as_f64(),
        Some(300.0),
        "the full run publishes 300 ms of simulated time"
    );
}

/// `--quick` shortens the simulator's run (200 ms of simulated time before the silence,
/// not 300 ms) and keeps every promise: each policy stops promptly.
#[test]
fn quick_runs_a_shorter_simulation_and_stops_as_promptly() {
    let v = demo(&["--quick"]);
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
    }
}

/// `--launch`: story 1 at system scale. The simulator dies, `kairos launch` stops the
/// system within its deadlines, the kairos sensor stops on SIGINT and the naive planner is
/// named, killed at its deadline, with what it was waiting for.
#[test]
fn under_kairos_launch_the_stuck_planner_is_named_and_the_system_stops_on_time() {
    let v = demo(&["--launch"]);
    assert_eq!(v["sensor_stopped_on_sigint"], true, "{v}");
    assert_eq!(v["planner_named"], true, "{v}");
    assert_eq!(v["simulator_died"], true, "{v}");
    assert_eq!(v["exit_code"], 1, "the planner needed SIGKILL: {v}");
    assert!(v["took_s"].as_f64().unwrap() < 15.0, "{v}");
}
