//! Story 3 across processes: two kairos processes whose callbacks `call()` each other's
//! service. Each process is one node with one service in its default (mutually exclusive)
//! group; what happens is decided by the shared wait-for graph (`kairos_zenoh::shared_waits`).
//!
//! - `chain`: A's timer calls B's service, whose callback calls A's service, which A's
//!   timer holds. B's inner call must fail at once with `WouldDeadlock`, and A's call then
//!   completes with B's answer.
//! - `race`: both timers call the other's service at the same moment, each holding the
//!   group the other needs. Exactly one call fails with `WouldDeadlock`; the other
//!   completes.
//!
//! - `hang`: B's service never answers (for the fault tests: kill -9 or SIGSTOP B while a
//!   caller waits); it prints `serving` when a request arrives.
//!
//! Each process prints one line per call, `call <who> <outcome> <ms> <detail>`, then
//! `done`, and serves until SIGINT.

use anyhow::{Context as _, bail};
use kairos::exec::Executor;
use kairos::graph::{CallError, Node};
use kairos::time::{CancelToken, Clock, Duration};
use kairos_msgs::example_interfaces::srv::{AddTwoInts, AddTwoIntsRequest, AddTwoIntsResponse};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Far longer than any answer takes: a call that reaches it has hung.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// In `race`, how long each timer holds its group before it calls: longer than the two
/// processes' start-up skew.
const HOLD_BEFORE_CALL: Duration = Duration::from_secs(2);

/// One call's line.
fn report(who: &str, started: Instant, result: &Result<AddTwoIntsResponse, CallError>) {
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let (outcome, detail) = match result {
        Ok(r) => ("completed", format!("sum {}", r.sum)),
        Err(CallError::WouldDeadlock(e)) => ("would_deadlock", e.to_string()),
        Err(e) => ("error", e.to_string()),
    };
    println!("call {who} {outcome} {ms:.1} {detail}");
}

/// `role` is `a` or `b`; `mode` is `chain`, `race` or `hang`. In `race` with `go_on_stdin`,
/// each timer prints `holding` once it holds its group and calls when a line (or the end)
/// comes on standard input: whoever starts the two can make both hold before either
/// calls, however slow the machine; without it, each holds for `HOLD_BEFORE_CALL` (2 s).
pub fn child_main(role: &str, mode: &str, go_on_stdin: bool) -> anyhow::Result<()> {
    let (me, peer) = match role {
        "a" => ("a", "b"),
        "b" => ("b", "a"),
        other => bail!("no call-cycle role '{other}' (a or b)"),
    };
    if !matches!(mode, "chain" | "race" | "hang") {
        bail!("no call-cycle mode '{mode}' (chain, race or hang)");
    }
    kairos_zenoh::init()?.context("KAIROS_TRANSPORT=zenoh must be set for a call-cycle process")?;
    let node = Node::new(&format!("cycle_{me}"))?;
    let client = node.create_client::<AddTwoInts>(&format!("/cycle_{peer}/add"))?;
    // B's service calls A's back in `chain`; otherwise services just add.
    let calls_back = mode == "chain" && me == "b";
    let hangs = mode == "hang" && me == "b";
    let inner = client.clone();
    let _service =
        node.create_service(&format!("/cycle_{me}/add"), move |r: AddTwoIntsRequest| {
            if hangs {
                println!("serving");
                let _ = Clock::steady().sleep_for(Duration::from_secs(3600), &CancelToken::new());
            }
            if !calls_back {
                return AddTwoIntsResponse { sum: r.a + r.b };
            }
            let started = Instant::now();
            let result = inner.call(r.clone(), CALL_TIMEOUT);
            report("b-service", started, &result);
            println!("done");
            AddTwoIntsResponse {
                sum: result.map_or(-1, |s| s.sum),
            }
        })?;
    println!("ready");
    if mode == "hang" {
        // Serves (or waits for a call) until killed.
        let executor = Executor::single_threaded();
        executor.add_node(&node)?;
        let _ = executor.spin();
        return Ok(());
    }
    if !client.wait_for_service(Duration::from_secs(30)) {
        bail!("/cycle_{peer}/add never appeared");
    }
    // The peer waits for this process's service too: both are ready once both see each other.
    let race = mode == "race";
    let calls = race || me == "a";
    let fired = Arc::new(AtomicBool::new(false));
    let _timer = node.create_timer(Duration::from_millis(100), move |_| {
        if !calls || fired.swap(true, Ordering::AcqRel) {
            return;
        }
        if race {
            // Both timers hold their groups before either calls: the cycle is certain,
            // which side hears of the other first is not. Told to go at once, both call
            // within a millisecond or so, before either's wait reaches the other.
            if go_on_stdin {
                println!("holding");
                let _ = std::io::stdin().read_line(&mut String::new());
            } else {
                let _ = Clock::steady().sleep_for(HOLD_BEFORE_CALL, &CancelToken::new());
            }
        }
        let started = Instant::now();
        let result = client.call(AddTwoIntsRequest { a: 20, b: 22 }, CALL_TIMEOUT);
        report(&format!("{me}-timer"), started, &result);
        println!("done");
    })?;
    let executor = Executor::single_threaded();
    executor.add_node(&node)?;
    // Until SIGINT: kairos's handler shuts the executor down and spin returns.
    let _ = executor.spin();
    Ok(())
}
