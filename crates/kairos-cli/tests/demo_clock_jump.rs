//! Story 4 under libfaketime: the wall clock of a child process is stepped back 5 s and
//! forward 5 s while timers run. kairos's steady timer keeps every period; the naive
//! wall-deadline contender stalls (so the scenario really reproduces the bug); the child's
//! jump handler saw both jumps (so the test cannot pass by not jumping).

mod cli_support;
use cli_support::{json_of, kairos, run_ok};
use kairos_testkit::require_tool;

#[test]
fn steady_timer_ignores_wall_clock_steps_and_naive_contender_stalls() {
    require_tool("faketime", "faketime");
    let out = run_ok(kairos().args(["demo", "clock-jump", "--json"]));
    let v = json_of(&out);
    let jumps: Vec<f64> = v["jumps_seen_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_f64().unwrap())
        .collect();
    assert!(
        jumps.iter().any(|d| (d + 5000.0).abs() < 500.0),
        "backward jump not reported: {jumps:?}"
    );
    assert!(
        jumps.iter().any(|d| (d - 5000.0).abs() < 500.0),
        "forward jump not reported: {jumps:?}"
    );

    // Every period is a tick or a miss the timer counted (a loaded machine may wake it
    // late and merge periods; a step must add or remove none), and no gap is a stall: the
    // bug stalls for the 5 s step, a loaded machine never holds a thread for a second.
    let steady = &v["contenders"]["kairos_steady_timer"];
    let expected = steady["expected_ticks"].as_i64().unwrap();
    let periods = steady["ticks"].as_i64().unwrap() + steady["missed"].as_i64().unwrap();
    assert!(
        (periods - expected).abs() <= 1,
        "steady timer ticked or missed {periods} periods, expected {expected}: {v}"
    );
    let gap = steady["max_gap_ms"].as_f64().unwrap();
    assert!(gap < 1000.0, "steady timer stalled for {gap} ms: {v}");

    let system = &v["contenders"]["kairos_system_timer"];
    assert!(
        system["max_gap_ms"].as_f64().unwrap() < 1000.0,
        "system-clock timer stalled on a jump: {v}"
    );

    let naive = &v["contenders"]["naive_wall_deadline"];
    assert!(
        naive["max_gap_ms"].as_f64().unwrap() > 900.0,
        "the naive contender did not stall; the scenario proves nothing: {v}"
    );
}
