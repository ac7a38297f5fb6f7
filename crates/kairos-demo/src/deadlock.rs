//! Story 3 replayed: the ways rclpy/rclcpp users call a service from a callback, each run
//! on a kairos executor under a watchdog so the demo always ends. A call that cannot
//! complete must return `WouldDeadlock` at once; one that can must complete.
//!
//! Each case is named after what decides it in kairos (`kairos::exec`'s docs explain the
//! model): a blocking call needs the *service's* callback to run meanwhile, so what matters
//! is the service's group and a free worker, never the client's group (a response wakes its
//! caller directly). Cases f and g show where that differs from rclcpp, whose recipe (the
//! client in its own group) is about the client because rclcpp delivers responses through
//! it.

use super::Outcome;
use kairos::exec::{ExecError, Executor, GroupKind};
use kairos::graph::{CallError, Client, Context, Node, Service};
use kairos::time::{Clock, Duration};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// How long a blocking call may wait: far beyond what a working call needs.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The watchdog: a case still running after this is reported as hung.
const WATCHDOG: std::time::Duration = std::time::Duration::from_secs(60);
/// How soon a `WouldDeadlock` comes: far under [`CALL_TIMEOUT`], which a wait that blocked
/// would reach, and far over what a loaded machine adds to an instant.
const FAST: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Completed,
    WouldDeadlock,
}

impl Expect {
    fn label(self) -> &'static str {
        match self {
            Expect::Completed => "completed",
            Expect::WouldDeadlock => "would_deadlock",
        }
    }
}

/// What the blocking operation in the first timer tick returned, and how long it took.
struct Attempt {
    outcome: &'static str,
    detail: String,
    took: std::time::Duration,
}

impl Attempt {
    fn of<E: std::fmt::Display>(
        result: Result<i64, E>,
        would_deadlock: impl Fn(&E) -> bool,
        took: std::time::Duration,
    ) -> Self {
        match result {
            Ok(sum) => Attempt {
                outcome: "completed",
                detail: format!("response {sum}"),
                took,
            },
            Err(err) if would_deadlock(&err) => Attempt {
                outcome: "would_deadlock",
                detail: err.to_string(),
                took,
            },
            Err(err) => Attempt {
                outcome: "error",
                detail: err.to_string(),
                took,
            },
        }
    }
}

struct Graph {
    caller: Node,
    exec: Executor,
    _server: Node,
    _service: Service<(i64, i64), i64>,
}

/// Where the service lives: on its own node (its own default group), or in the default
/// group of the calling node, which the calling timer callback holds.
#[derive(Clone, Copy)]
enum ServiceIn {
    OtherNode,
    CallerGroup,
}

fn graph(exec: Executor) -> anyhow::Result<Graph> {
    graph_with(exec, ServiceIn::OtherNode)
}

fn graph_with(exec: Executor, service_in: ServiceIn) -> anyhow::Result<Graph> {
    let ctx = Context::new();
    let server = Node::new_in(&ctx, "server", "/")?;
    let caller = Node::new_in(&ctx, "caller", "/")?;
    caller.set_clock(Clock::steady());
    let host = match service_in {
        ServiceIn::OtherNode => &server,
        ServiceIn::CallerGroup => &caller,
    };
    let service = host.create_service("add_two_ints", |(a, b): (i64, i64)| a + b)?;
    exec.add_node(&server)?;
    exec.add_node(&caller)?;
    Ok(Graph {
        caller,
        exec,
        _server: server,
        _service: service,
    })
}

/// Spins until the first tick of a 1 ms timer on `node` has run `body` once.
fn first_tick(
    exec: &Executor,
    node: &Node,
    body: impl Fn() -> Attempt + Send + Sync + 'static,
) -> anyhow::Result<Attempt> {
    let (tx, rx) = mpsc::channel();
    let once = AtomicBool::new(false);
    let stopper = exec.clone();
    let _timer = node.create_timer(Duration::from_millis(1), move |_| {
        if !once.swap(true, Ordering::AcqRel) {
            let _ = tx.send(body());
            stopper.cancel();
        }
    })?;
    exec.spin()?;
    Ok(rx.recv_timeout(WATCHDOG)?)
}

/// The demo's service: two numbers in, their sum out.
type Add = fn((i64, i64)) -> i64;

fn add_client(node: &Node) -> anyhow::Result<Client<Add>> {
    Ok(node.create_client("add_two_ints")?)
}

fn blocking_call(client: &Client<Add>) -> Attempt {
    let start = Instant::now();
    let result = client.call((2, 3), CALL_TIMEOUT);
    Attempt::of(
        result,
        |e| matches!(e, CallError::WouldDeadlock(_)),
        start.elapsed(),
    )
}

fn case_a() -> anyhow::Result<Attempt> {
    let g = graph(Executor::single_threaded())?;
    let client = add_client(&g.caller)?;
    first_tick(&g.exec, &g.caller, move || blocking_call(&client))
}

fn case_b() -> anyhow::Result<Attempt> {
    let g = graph(Executor::single_threaded())?;
    let group = g
        .caller
        .create_callback_group("client_group", GroupKind::MutuallyExclusive);
    let client = add_client(&g.caller.with_group(&group)?)?;
    first_tick(&g.exec, &g.caller, move || blocking_call(&client))
}

fn case_c() -> anyhow::Result<Attempt> {
    let g = graph(Executor::multi_threaded(2)?)?;
    let group = g
        .caller
        .create_callback_group("client_group", GroupKind::MutuallyExclusive);
    let client = add_client(&g.caller.with_group(&group)?)?;
    let attempt = first_tick(&g.exec, &g.caller, move || blocking_call(&client));
    g.exec.shutdown(Duration::from_secs(1));
    attempt
}

fn case_d() -> anyhow::Result<Attempt> {
    let g = graph(Executor::single_threaded())?;
    let client = add_client(&g.caller)?;
    let exec = g.exec.clone();
    first_tick(&g.exec, &g.caller, move || {
        let start = Instant::now();
        let result = exec.spin_until_future_complete(client.call_async((2, 3)), CALL_TIMEOUT);
        let result = result
            .map_err(anyhow::Error::from)
            .and_then(|response| Ok(response?));
        Attempt::of(
            result,
            |e| {
                matches!(e.downcast_ref(), Some(ExecError::WouldDeadlock(_)))
                    || matches!(e.downcast_ref(), Some(CallError::WouldDeadlock(_)))
            },
            start.elapsed(),
        )
    })
}

fn case_f() -> anyhow::Result<Attempt> {
    let g = graph_with(Executor::multi_threaded(2)?, ServiceIn::CallerGroup)?;
    let group = g
        .caller
        .create_callback_group("client_group", GroupKind::MutuallyExclusive);
    let client = add_client(&g.caller.with_group(&group)?)?;
    let attempt = first_tick(&g.exec, &g.caller, move || blocking_call(&client));
    g.exec.shutdown(Duration::from_secs(1));
    attempt
}

fn case_g() -> anyhow::Result<Attempt> {
    let g = graph(Executor::multi_threaded(2)?)?;
    let client = add_client(&g.caller)?;
    let attempt = first_tick(&g.exec, &g.caller, move || blocking_call(&client));
    g.exec.shutdown(Duration::from_secs(1));
    attempt
}

fn case_e() -> anyhow::Result<Attempt> {
    let g = graph(Executor::single_threaded())?;
    let client = Arc::new(add_client(&g.caller)?);
    let (tx, rx) = mpsc::sync_channel(1);
    let once = Arc::new(AtomicBool::new(false));
    let stopper = g.exec.clone();
    let _timer = g
        .caller
        .create_timer_async(Duration::from_millis(1), move |_| {
            let (client, tx, once, stopper) =
                (client.clone(), tx.clone(), once.clone(), stopper.clone());
            async move {
                if once.swap(true, Ordering::AcqRel) {
                    return;
                }
                let start = Instant::now();
                let result = client.call_async((2, 3)).await;
                let _ = tx.send(Attempt::of(
                    result,
                    |e| matches!(e, CallError::WouldDeadlock(_)),
                    start.elapsed(),
                ));
                stopper.cancel();
            }
        })?;
    g.exec.spin()?;
    Ok(rx.recv_timeout(WATCHDOG)?)
}

type Case = (
    &'static str,
    &'static str,
    Expect,
    fn() -> anyhow::Result<Attempt>,
);

const CASES: &[Case] = &[
    (
        "a_blocking_call_single_threaded",
        "call() in a timer callback, service on another node, single-threaded: no thread is free to run the service",
        Expect::WouldDeadlock,
        case_a,
    ),
    (
        "b_blocking_call_client_in_own_group_single_threaded",
        "the same with the client in a group of its own: the client's group does not matter, there is still no free thread",
        Expect::WouldDeadlock,
        case_b,
    ),
    (
        "c_blocking_call_service_in_other_group_multi_threaded",
        "call() with the service on another node (another group), multi-threaded: a free worker runs the service",
        Expect::Completed,
        case_c,
    ),
    (
        "d_spin_until_future_complete_in_callback",
        "spin_until_future_complete() inside a callback of the same executor",
        Expect::WouldDeadlock,
        case_d,
    ),
    (
        "e_awaited_call_async_single_threaded",
        "an awaited call_async() in an async callback, single-threaded: the suspended callback frees the thread for the service",
        Expect::Completed,
        case_e,
    ),
    (
        "f_blocking_call_service_in_caller_group_multi_threaded",
        "rclcpp's recipe (client in its own group, multi-threaded) with the service in the group the caller holds: the service can never run",
        Expect::WouldDeadlock,
        case_f,
    ),
    (
        "g_blocking_call_client_in_caller_group_multi_threaded",
        "the client in the caller's own group (rclcpp deadlocks here), service on another node, multi-threaded: the response wakes the caller directly",
        Expect::Completed,
        case_g,
    ),
];

/// Runs one case in its own thread under the watchdog.
fn run_case(case: fn() -> anyhow::Result<Attempt>) -> Attempt {
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(case());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(Ok(attempt)) => attempt,
        Ok(Err(err)) => Attempt {
            outcome: "error",
            detail: format!("{err:#}"),
            took: start.elapsed(),
        },
        Err(_) => Attempt {
            outcome: "hung",
            detail: format!("no result within the {WATCHDOG:?} watchdog"),
            took: start.elapsed(),
        },
    }
}

/// Runs every case. `--quick` changes nothing here: each case is one call, decided in
/// milliseconds; only a hang would take long, and the watchdog bounds it.
pub fn run(_quick: bool) -> anyhow::Result<Outcome> {
    let mut report = String::new();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut slowest_ms = 0.0f64;
    report.push_str(&format!(
        "{:<56} {:>16} {:>16} {:>10}\n",
        "case", "expected", "outcome", "ms"
    ));
    for &(name, what, expect, case) in CASES {
        let attempt = run_case(case);
        let ms = attempt.took.as_secs_f64() * 1e3;
        // "At once": far under the call timeout a blocked wait would reach.
        let fast = expect != Expect::WouldDeadlock || attempt.took < FAST;
        if expect == Expect::WouldDeadlock {
            slowest_ms = slowest_ms.max(ms);
        }
        if attempt.outcome != expect.label() || !fast {
            failures.push(name);
        }
        report.push_str(&format!(
            "{name:<56} {:>16} {:>16} {ms:>10.3}\n",
            expect.label(),
            attempt.outcome
        ));
        report.push_str(&format!("    {what}: {}\n", attempt.detail));
        rows.push(json!({
            "name": name,
            "outcome": attempt.outcome,
            "ms": ms,
            "expected": expect.label(),
            "detail": attempt.detail,
        }));
    }
    let passed = failures.is_empty();
    let verdict = if passed {
        format!(
            "every call that could never complete returned WouldDeadlock at once (the slowest in {slowest_ms:.2} ms, against a {} s call timeout); every call that could, completed",
            CALL_TIMEOUT.as_secs_f64()
        )
    } else {
        format!("unexpected outcome in {}", failures.join(", "))
    };
    Ok(Outcome {
        passed,
        verdict,
        report,
        json: json!({ "cases": rows }),
    })
}
