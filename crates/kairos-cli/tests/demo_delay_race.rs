//! Story 2 as a test: no kairos sleep returns early at any phase, and the benchmark runs
//! every contender including the machine's floor (cyclictest).

mod cli_support;
use cli_support::{json_of, kairos, run_ok};
use kairos_testkit::require_tool;

#[test]
fn delay_race_kairos_is_never_early() {
    let v = json_of(&run_ok(kairos().args([
        "demo",
        "delay-race",
        "--quick",
        "--json",
    ])));
    assert_eq!(v["kairos"]["early"], 0, "kairos returned early: {v}");
    assert!(v["samples"].as_u64().unwrap() >= 400);
}

#[test]
fn bench_timer_measures_every_contender() {
    require_tool("cyclictest", "rt-tests");
    let v = json_of(&run_ok(
        kairos().args(["bench", "timer", "--loops", "300", "--json"]),
    ));
    let names: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    if cfg!(feature = "baselines") {
        assert_eq!(
            names,
            ["kairos", "std_sleep", "tokio_interval", "cyclictest"]
        );
    } else {
        assert_eq!(names, ["kairos", "std_sleep", "cyclictest"]);
    }
    let kairos = &v["results"][0];
    assert_eq!(kairos["early"], 0, "kairos timer woke early: {v}");
    assert!(kairos["p50_us"].as_f64().unwrap() >= 0.0);
}
