//! The README's first command on a fresh machine: `kairos demo` runs every scenario it can
//! and exits 0 when libfaketime is missing, skipping only clock-jump with the command that
//! installs it; asked for by name, clock-jump fails and says the same.
//!
//! libfaketime is hidden by pointing `KAIROS_LIBFAKETIME` (the demo's override for a
//! non-standard install) at a file that does not exist, so the lookup takes the same path
//! as on a machine without the package.

mod cli_support;
use cli_support::{json_of, kairos, run_ok};

const HIDDEN: &str = "/nonexistent/libfaketime.so.1";

#[test]
fn every_scenario_runs_without_libfaketime_and_clock_jump_says_what_to_install() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = run_ok(
        kairos()
            .args(["demo", "--quick", "--json", "--out"])
            .arg(out_dir.path())
            .env("KAIROS_LIBFAKETIME", HIDDEN),
    );
    let v = json_of(&out);
    for scenario in ["pipeline", "sim-clock-stall", "deadlock", "delay-race"] {
        assert!(
            v[scenario].is_object() && v[scenario].get("skipped").is_none(),
            "{scenario} did not run: {v}"
        );
    }
    let skipped = v["clock-jump"]["skipped"]
        .as_str()
        .unwrap_or_else(|| panic!("clock-jump was not reported as skipped: {v}"));
    assert!(skipped.contains("apt-get install faketime"), "{skipped}");
    assert!(skipped.contains(HIDDEN), "names where it looked: {skipped}");
}

#[test]
fn clock_jump_by_name_without_libfaketime_fails_with_the_install_command() {
    let out = kairos()
        .args(["demo", "clock-jump"])
        .env("KAIROS_LIBFAKETIME", HIDDEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("apt-get install faketime"), "{stderr}");
}
