//! What the executor tests share: a node on the steady clock, a spin on a thread of its
//! own, and a bounded wait on observable state (no sleeps).

#![allow(dead_code)] // Each test file uses the part it needs.

use kairos::exec::{ExecError, Executor};
use kairos::graph::{Context, Node};
use kairos::time::Clock;
use std::time::{Duration, Instant};

/// How long a wait on observable state may take before the test fails (a loaded 2-core
/// machine; the promise broken makes it wait for ever).
pub const WAIT_LIMIT: Duration = Duration::from_secs(20);

/// A node named `name` in a context of its own, on the steady clock.
pub fn node(name: &str) -> Node {
    node_in(&Context::new(), name)
}

/// A node named `name` in `context`, on the steady clock.
pub fn node_in(context: &Context, name: &str) -> Node {
    let node = Node::new_in(context, name, "/").unwrap();
    node.set_clock(Clock::steady());
    node
}

/// Spins `exec` on a thread of its own until it is cancelled or shut down.
pub fn spin_in_background(exec: &Executor) -> std::thread::JoinHandle<Result<(), ExecError>> {
    let exec = exec.clone();
    std::thread::spawn(move || exec.spin())
}

/// Waits (yielding, no sleep) until `done` holds; panics naming `what` after
/// [`WAIT_LIMIT`].
pub fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < WAIT_LIMIT,
            "timed out waiting until {what}"
        );
        std::thread::yield_now();
    }
}
