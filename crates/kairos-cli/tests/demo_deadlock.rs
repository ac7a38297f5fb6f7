//! Story 3 through the binary: `kairos demo deadlock` ends with every case's expected
//! outcome, and the pubsub/dispatch benchmarks print their figures beside their floors.

mod cli_support;
use cli_support::{json_of, kairos, run_ok};

#[test]
fn demo_deadlock_reports_each_case_and_fails_fast() {
    let v = json_of(&run_ok(kairos().args(["demo", "deadlock", "--json"])));
    let cases = v["cases"].as_array().expect("cases");
    let outcome = |name: &str| {
        let case = cases
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("case {name} in {v}"));
        (
            case["outcome"].as_str().unwrap().to_owned(),
            case["ms"].as_f64().unwrap(),
        )
    };
    for name in [
        "a_blocking_call_single_threaded",
        "b_blocking_call_client_in_own_group_single_threaded",
        "d_spin_until_future_complete_in_callback",
        "f_blocking_call_service_in_caller_group_multi_threaded",
    ] {
        let (result, ms) = outcome(name);
        assert_eq!(result, "would_deadlock", "{name}: {v}");
        // Far under the demo's 30 s call timeout, which a blocked wait would reach.
        assert!(ms < 5000.0, "{name} took {ms} ms");
    }
    for name in [
        "c_blocking_call_service_in_other_group_multi_threaded",
        "e_awaited_call_async_single_threaded",
        "g_blocking_call_client_in_caller_group_multi_threaded",
    ] {
        assert_eq!(outcome(name).0, "completed", "{name}: {v}");
    }
}

#[test]
fn bench_pubsub_measures_kairos_and_the_crossbeam_floor() {
    let v = json_of(&run_ok(kairos().args([
        "bench",
        "pubsub",
        "--samples",
        "300",
        "--burst",
        "3000",
        "--json",
    ])));
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["kairos_intra", "crossbeam_channel"]);
    for r in results {
        assert!(r["p50_us"].as_f64().unwrap() > 0.0, "{v}");
        assert!(
            r["p99_us"].as_f64().unwrap() >= r["p50_us"].as_f64().unwrap(),
            "{v}"
        );
        assert!(r["msgs_per_s"].as_f64().unwrap() > 0.0, "{v}");
    }
}

/// Both contenders hand messages between the same two CPUs (the crossbeam floor once ran
/// sender and receiver on one CPU because the pair was asked for after pinning), and
/// `--phases` reports both halves of the burst for both.
#[test]
fn bench_pubsub_pins_both_contenders_alike_and_times_the_phases() {
    let allowed = rustix::thread::sched_getaffinity(None).unwrap();
    let cpus = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&cpu| allowed.is_set(cpu))
        .count();
    let v = json_of(&run_ok(kairos().args([
        "bench",
        "pubsub",
        "--samples",
        "100",
        "--burst",
        "2000",
        "--phases",
        "--json",
    ])));
    let results = v["results"].as_array().unwrap();
    if cpus >= 2 {
        let placement =
            |r: &serde_json::Value| (r["publisher_cpu"].clone(), r["receiver_cpu"].clone());
        let (kairos, floor) = (placement(&results[0]), placement(&results[1]));
        assert!(kairos.0.is_u64() && kairos.1.is_u64(), "{v}");
        assert_ne!(kairos.0, kairos.1, "publisher and receiver on one CPU: {v}");
        assert_eq!(
            kairos, floor,
            "the floor ran on other CPUs than kairos: {v}"
        );
    }
    let phases = v["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["kairos_intra", "crossbeam_channel"]);
    for p in phases {
        assert!(p["publish_ns"].as_f64().unwrap() > 0.0, "{v}");
        assert!(p["take_ns"].as_f64().unwrap() > 0.0, "{v}");
    }
}

#[test]
fn bench_dispatch_reports_a_rate() {
    let v = json_of(&run_ok(kairos().args([
        "bench",
        "dispatch",
        "--entities",
        "50",
        "--rounds",
        "20",
        "--json",
    ])));
    assert!(v["callbacks_per_s"].as_f64().unwrap() > 0.0, "{v}");
}
