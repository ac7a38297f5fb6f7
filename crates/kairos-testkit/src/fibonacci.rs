//! The action server the tests drive: `example_interfaces/action/Fibonacci` as ROS 2's
//! examples serve it, with a long goal a test can cancel.
//!
//! What it promises, so a test can assert on it:
//! - a negative order is rejected;
//! - an order up to [`LONG_ORDER`] runs on a thread of its own, publishes every partial
//!   sequence as feedback (`[0, 1]`, `[0, 1, 1]`, ... up to the whole) and succeeds with
//!   the sequence of `order + 1` numbers;
//! - a larger order runs until it is canceled, then ends canceled with `[0, 1]`; if no
//!   cancel comes within the `limit` given, it is aborted, so no test leaves a thread
//!   behind.

use kairos::graph::Node;
use kairos_action::{ActionServer, CancelResponse, GoalResponse, ServerGoalHandle};
use kairos_msgs::example_interfaces::action::{Fibonacci, FibonacciFeedback, FibonacciResult};
use std::time::{Duration, Instant};

/// Above this order a goal runs until it is canceled.
pub const LONG_ORDER: i32 = 20;

/// The first `order + 1` Fibonacci numbers (`[0]` for order 0, nothing for a negative one).
pub fn sequence(order: i32) -> Vec<i32> {
    let len = usize::try_from(order).map_or(0, |order| order + 1);
    let mut sequence = vec![0, 1];
    while sequence.len() < len {
        let n = sequence.len();
        sequence.push(sequence[n - 1] + sequence[n - 2]);
    }
    sequence.truncate(len);
    sequence
}

/// The server, named `name` on `node`; a long goal waits for its cancel at most `limit`.
pub fn server(node: &Node, name: &str, limit: Duration) -> ActionServer<Fibonacci> {
    ActionServer::<Fibonacci>::new(
        node,
        name,
        |_, goal| {
            if goal.order < 0 {
                GoalResponse::Reject
            } else {
                GoalResponse::AcceptAndExecute
            }
        },
        |_, _| CancelResponse::Accept,
        move |handle: ServerGoalHandle<Fibonacci>| {
            std::thread::spawn(move || {
                let order = handle.goal().order;
                if order > LONG_ORDER {
                    let give_up = Instant::now() + limit;
                    while !handle.is_canceling() && Instant::now() < give_up {
                        std::thread::yield_now();
                    }
                    let partial = FibonacciResult {
                        sequence: vec![0, 1],
                    };
                    if handle.is_canceling() {
                        handle.canceled(partial).unwrap();
                    } else {
                        handle.abort(partial).unwrap();
                    }
                    return;
                }
                let sequence = sequence(order);
                for end in 2..=sequence.len() {
                    handle.publish_feedback(FibonacciFeedback {
                        sequence: sequence[..end].to_vec(),
                    });
                }
                handle.succeed(FibonacciResult { sequence }).unwrap();
            });
        },
    )
    .unwrap()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sequence_has_order_plus_one_numbers() {
        assert_eq!(super::sequence(-1), Vec::<i32>::new());
        assert_eq!(super::sequence(0), [0]);
        assert_eq!(super::sequence(1), [0, 1]);
        assert_eq!(super::sequence(6), [0, 1, 1, 2, 3, 5, 8]);
    }
}
