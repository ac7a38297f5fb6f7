//! The Fibonacci action server of ros2/examples, on kairos: each goal is computed on a
//! thread of its own, one step per `period_ms` (a parameter, 100 ms by default), with the
//! partial sequence as feedback; a canceled goal ends canceled with what it had.
//!
//! ```sh
//! KAIROS_TRANSPORT=zenoh cargo run --release -p kairos-action --example fibonacci_server
//! ```
//!
//! Ctrl-C stops it: its executor shuts down, prints its report, and it exits 0.

use kairos::exec::Executor;
use kairos::graph::{Node, ParameterValue, Parameters};
use kairos::time::{Clock, Duration};
use kairos_action::{ActionServer, CancelResponse, GoalResponse, ServerGoalHandle};
use kairos_msgs::example_interfaces::action::{Fibonacci, FibonacciFeedback, FibonacciResult};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _transport = kairos_zenoh::init()?;
    let node = Node::new("fibonacci_action_server")?;
    let parameters = Parameters::for_node(&node)?;
    parameters.declare(
        "period_ms",
        ParameterValue::Integer(100),
        Default::default(),
    )?;
    let Ok(ParameterValue::Integer(period_ms)) = parameters.get("period_ms") else {
        return Err("period_ms must be an integer".into());
    };
    let period = Duration::from_millis(period_ms.max(0));
    let logger = node.logger().clone();
    let _server = ActionServer::<Fibonacci>::new(
        &node,
        "fibonacci",
        |id, goal| {
            if goal.order < 0 || goal.order > 46 {
                // Past 46 the sequence overflows an int32.
                return GoalResponse::Reject;
            }
            let _ = id;
            GoalResponse::AcceptAndExecute
        },
        |_, _| CancelResponse::Accept,
        move |handle: ServerGoalHandle<Fibonacci>| {
            let logger = logger.clone();
            std::thread::spawn(move || {
                logger.info(format_args!("executing goal {}", handle.id()));
                let order = handle.goal().order as usize;
                let mut sequence = vec![0, 1];
                let clock = Clock::steady();
                let shutdown = kairos::signal::shutdown_token();
                while sequence.len() <= order {
                    if handle.is_canceling() {
                        let _ = handle.canceled(FibonacciResult { sequence });
                        logger.info("goal canceled");
                        return;
                    }
                    let n = sequence.len();
                    sequence.push(sequence[n - 1] + sequence[n - 2]);
                    handle.publish_feedback(FibonacciFeedback {
                        sequence: sequence.clone(),
                    });
                    if clock.sleep_for(period, &shutdown).is_err() {
                        let _ = handle.abort(FibonacciResult { sequence });
                        return;
                    }
                }
                let _ = handle.succeed(FibonacciResult { sequence });
                logger.info("goal succeeded");
            });
        },
    )?;
    println!("serving action {} (Ctrl-C to stop)", _server.name());
    let executor = Executor::multi_threaded(2)?;
    executor.add_node(&node)?;
    executor.spin()?;
    Ok(())
}
