//! `kairos demo --trace DIR` records the run as CTF that babeltrace2 reads without a
//! warning, with the events the run made: sim clock updates, stalls, timer fires, sleeps.

mod cli_support;
use cli_support::{json_of, kairos, run_ok};

#[test]
fn demo_trace_is_read_by_babeltrace2_with_the_runs_events() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let run = run_ok(
        kairos()
            .args(["demo", "sim-clock-stall", "--json", "--trace"])
            .arg(&trace),
    );
    let report = json_of(&run);
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
    // One stall per policy, plus one per pause of a simulator thread that a loaded machine
    // held off the CPU past the stall timeout (the demo counts those apart).
    let pauses: u64 = report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["stalls_before_silence"].as_u64().unwrap())
        .sum();
    assert_eq!(
        count("kairos:stall"),
        3 + pauses as usize,
        "one stall per policy: {report:#}"
    );
    assert_eq!(
        count("ros2:rcl_timer_init"),
        3,
        "one sensor timer per policy"
    );
    // How often each sensor loop fired depends on the scheduler: a loop woken late fires
    // once and counts the periods it missed (`MissedPeriods::Skip`). So the trace is held
    // to the run's own figures, not to the clock: every loop the run reports is a
    // `timer_fire` of its policy's timer, on the 10 ms grid, never early, in order.
    let timers: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" ros2:rcl_timer_init: "))
        .map(|l| field(l, "timer_handle"))
        .collect();
    let policies = report["policies"]
        .as_array()
        .expect("policies in the report");
    assert_eq!(policies.len(), timers.len(), "{report}");
    const PERIOD: u64 = 10_000_000;
    for (timer, policy) in timers.iter().zip(policies) {
        let name = policy["policy"].as_str().unwrap();
        let fires: Vec<(u64, u64)> = text
            .lines()
            .filter(|l| l.contains(" kairos:timer_fire: ") && field(l, "timer_handle") == *timer)
            .map(|l| {
                let n = |f| field(l, f).parse::<u64>().unwrap();
                (n("scheduled"), n("actual"))
            })
            .collect();
        assert_eq!(
            fires.len() as u64,
            policy["sensor_loops"].as_u64().unwrap(),
            "{name}: the trace holds every loop the run reports"
        );
        assert!(!fires.is_empty(), "{name}: the sensor loop never fired");
        let mut periods = 0;
        for (i, &(scheduled, actual)) in fires.iter().enumerate() {
            assert_eq!(scheduled % PERIOD, 0, "{name}: fire {i} off the grid");
            assert!(actual >= scheduled, "{name}: fire {i} early");
            assert!(
                i == 0 || scheduled > fires[i - 1].0,
                "{name}: fire {i} out of order"
            );
            // This fire and the periods it missed.
            periods += 1 + (actual - scheduled) / PERIOD;
        }
        // The clock at stop is read after the last fire: no more periods fired or
        // missed than the clock ran through.
        let clock_at_stop = (policy["clock_at_stop_ms"].as_f64().unwrap() * 1e6) as u64;
        assert!(
            periods <= clock_at_stop / PERIOD,
            "{name}: {periods} periods fired or missed by {clock_at_stop} ns"
        );
    }
    let stall = text.lines().find(|l| l.contains("kairos:stall:")).unwrap();
    assert!(
        stall.contains("clock = ( \"sim\""),
        "stall event names its clock: {stall}"
    );
}

/// The value of `name = value` in a babeltrace2 text line.
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line
        .find(&format!(" {name} = "))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        + name.len()
        + 4;
    let rest = &line[start..];
    rest.split([',', ' ']).next().unwrap()
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
