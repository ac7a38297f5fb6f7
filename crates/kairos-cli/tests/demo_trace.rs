//! `kairos demo --trace DIR` records the run as CTF that babeltrace2 reads without a
//! warning, with the events the run made: sim clock updates, stalls, timer fires, sleeps.

mod cli_support;
use cli_support::{kairos, run_ok};

#[test]
fn demo_trace_is_read_by_babeltrace2_with_the_runs_events() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    run_ok(
        kairos()
            .args(["demo", "sim-clock-stall", "--trace"])
            .arg(&trace),
    );
    let out = kairos_testkit::babeltrace2_output(&[], &trace);
    assert!(
        out.status.success(),
        "babeltrace2 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "babeltrace2 warned: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let count = |name: &str| {
        text.lines()
            .filter(|l| l.contains(&format!(" {name}: ")))
            .count()
    };
    // Three policies, each with a simulator publishing 300 one-millisecond steps.
    assert_eq!(count("kairos:sim_clock_update"), 900);
    assert_eq!(count("kairos:stall"), 3, "one stall per policy");
    assert_eq!(
        count("ros2:rcl_timer_init"),
        3,
        "one sensor timer per policy"
    );
    assert!(
        count("kairos:timer_fire") >= 90,
        "the sensor loops fired: {}",
        count("kairos:timer_fire")
    );
    let stall = text.lines().find(|l| l.contains("kairos:stall:")).unwrap();
    assert!(
        stall.contains("clock = ( \"sim\""),
        "stall event names its clock: {stall}"
    );
}

#[test]
fn kairos_trace_env_traces_a_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("env-trace");
    run_ok(
        kairos()
            .args(["internal", "wait-on-clocks"])
            .env("KAIROS_TRACE", &trace),
    );
    let out = kairos_testkit::babeltrace2_output(&[], &trace);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("kairos:timer_fire"))
            .count(),
        10,
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("kairos:sleep_start"))
            .count(),
        2
    );
}
