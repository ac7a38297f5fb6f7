//! `example_interfaces/action/Fibonacci` served and used in one process: goals with
//! feedback and results, rejection, cancellation, a dropped goal, result expiry and the
//! deadlock check. No test waits on a sleep: servers run goals on threads that step on
//! channels, and every wait has a deadline.

use kairos::exec::{ExecError, Executor};
use kairos::graph::{CallError, Context, Node};
use kairos::time::{CancelToken, Clock, Duration};
use kairos_action::{
    ActionClient, ActionError, ActionServer, ActionServerOptions, CancelResponse, GoalResponse,
    GoalStatus, ServerGoalHandle,
};
use kairos_msgs::example_interfaces::action::{
    Fibonacci, FibonacciFeedback, FibonacciGoal, FibonacciResult,
};
use std::sync::{Arc, mpsc};
use std::time::Duration as StdDuration;

const LIMIT: StdDuration = StdDuration::from_secs(30);

/// The tests' Fibonacci server (`kairos_testkit::fibonacci`): negative orders rejected,
/// every partial sequence published as feedback.
fn serve(node: &Node) -> ActionServer<Fibonacci> {
    kairos_testkit::fibonacci::server(node, "fibonacci", LIMIT)
}

/// A context with a server node and a client node, spun by a two-thread executor.
struct System {
    _context: Context,
    server_node: Node,
    client_node: Node,
    executor: Executor,
    spinner: Option<std::thread::JoinHandle<Result<(), ExecError>>>,
}

impl System {
    fn new() -> Self {
        let context = Context::new();
        let server_node = Node::new_in(&context, "fibonacci_server", "/").unwrap();
        let client_node = Node::new_in(&context, "fibonacci_client", "/").unwrap();
        let executor = Executor::multi_threaded(2).unwrap();
        executor.add_node(&server_node).unwrap();
        executor.add_node(&client_node).unwrap();
        System {
            _context: context,
            server_node,
            client_node,
            executor,
            spinner: None,
        }
    }

    fn spin(&mut self) {
        let executor = self.executor.clone();
        self.spinner = Some(std::thread::spawn(move || executor.spin()));
    }
}

impl Drop for System {
    fn drop(&mut self) {
        let report = self.executor.shutdown(LIMIT);
        assert!(report.is_clean(), "{report}");
        if let Some(spinner) = self.spinner.take() {
            spinner.join().unwrap().unwrap();
        }
    }
}

#[test]
fn a_goal_gets_its_feedback_and_its_result() {
    let mut system = System::new();
    let _server = serve(&system.server_node);
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    assert_eq!(client.name(), "/fibonacci");
    system.spin();
    assert!(client.wait_for_server(LIMIT));
    let (tx, rx) = mpsc::channel();
    let goal = client
        .send_goal_with_feedback(
            FibonacciGoal { order: 6 },
            move |feedback| {
                let _ = tx.send(feedback.sequence);
            },
            LIMIT,
        )
        .unwrap();
    let outcome = goal.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Succeeded);
    assert_eq!(outcome.result.sequence, [0, 1, 1, 2, 3, 5, 8]);
    assert_eq!(goal.status(), GoalStatus::Succeeded);
    let feedback: Vec<Vec<i32>> = (0..6).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
    assert_eq!(feedback.first().unwrap(), &[0, 1]);
    assert_eq!(feedback.last().unwrap(), &[0, 1, 1, 2, 3, 5, 8]);
    // Asked again, the kept result comes at once.
    assert_eq!(goal.get_result(LIMIT).unwrap(), outcome);
    assert_eq!(client.unmatched_feedback(), 0);
}

#[test]
fn a_rejected_goal_is_an_error_naming_it() {
    let mut system = System::new();
    let _server = serve(&system.server_node);
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    let err = client
        .send_goal(FibonacciGoal { order: -1 }, LIMIT)
        .unwrap_err();
    assert!(matches!(err, ActionError::Rejected { .. }), "{err:?}");
    assert!(err.to_string().contains("rejected goal"), "{err}");
}

#[test]
fn a_canceled_goal_ends_canceled_with_its_partial_result() {
    let mut system = System::new();
    // The goal's token, seen by the cancel decision: it must not fire before it.
    let token = Arc::new(std::sync::Mutex::new(None::<CancelToken>));
    // Whether the worker could end the goal canceled at once: it says so after
    // `canceled` returns, which can be after the client already has the result.
    let decided = token.clone();
    let (ended, canceled_at_once) = mpsc::channel();
    let _server = ActionServer::<Fibonacci>::new(
        &system.server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        move |_, _| {
            let token = decided.lock().unwrap().clone().expect("the goal's token");
            assert!(!token.is_cancelled(), "the token fired before the decision");
            CancelResponse::Accept
        },
        move |handle: ServerGoalHandle<Fibonacci>| {
            *token.lock().unwrap() = Some(handle.cancel_token());
            let ended = ended.clone();
            // Works until its token fires, then ends canceled at once: the goal is
            // already canceling when the token fires.
            std::thread::spawn(move || {
                let far = Clock::steady().now() + Duration::from_secs(60);
                let woke = Clock::steady().sleep_until(far, &handle.cancel_token());
                assert!(woke.is_err(), "the cancel never came");
                let at_once = handle.canceled(FibonacciResult {
                    sequence: vec![0, 1],
                });
                let _ = ended.send(at_once.is_ok());
                if let Err(e) = at_once {
                    handle.abort(FibonacciResult::default()).ok();
                    panic!("{e}");
                }
            });
        },
    )
    .unwrap();
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    let goal = client
        .send_goal(FibonacciGoal { order: 1000 }, LIMIT)
        .unwrap();
    goal.cancel(LIMIT).unwrap();
    let outcome = goal.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Canceled);
    assert_eq!(outcome.result.sequence, [0, 1]);
    assert_eq!(
        canceled_at_once.recv_timeout(LIMIT),
        Ok(true),
        "the worker could not end its canceling goal canceled at once"
    );
    // Canceling every goal (zero id, zero stamp) now finds only ended goals.
    let all = kairos_msgs::action_msgs::srv::CancelGoalRequest::default();
    let cancel: kairos::graph::Client<kairos_msgs::action_msgs::srv::CancelGoal> = system
        .client_node
        .create_client("/fibonacci/_action/cancel_goal")
        .unwrap();
    let response = cancel.call(all, LIMIT).unwrap();
    assert_eq!(response.return_code, 3, "every goal had ended");
    assert!(response.goals_canceling.is_empty());
}

#[test]
fn dropping_the_server_fires_its_goals_tokens_while_they_still_execute() {
    let mut system = System::new();
    let (seen_tx, seen_rx) = mpsc::channel();
    let seen_tx = std::sync::Mutex::new(seen_tx);
    let server = ActionServer::<Fibonacci>::new(
        &system.server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        |_, _| CancelResponse::Accept,
        move |handle: ServerGoalHandle<Fibonacci>| {
            let seen = seen_tx.lock().unwrap().clone();
            std::thread::spawn(move || {
                let far = Clock::steady().now() + Duration::from_secs(60);
                let woke = Clock::steady().sleep_until(far, &handle.cancel_token());
                // Not a client's cancel: the goal still executes; it is aborted.
                let _ = seen.send((woke.is_err(), handle.status()));
                handle.abort(FibonacciResult::default()).unwrap();
            });
        },
    )
    .unwrap();
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    let _goal = client.send_goal(FibonacciGoal { order: 5 }, LIMIT).unwrap();
    drop(server);
    let (woken, status) = seen_rx
        .recv_timeout(LIMIT)
        .expect("the goal's thread ended");
    assert!(woken, "the server's drop never woke the goal");
    assert_eq!(status, GoalStatus::Executing);
}

#[test]
fn cancelling_a_goal_that_ended_says_so() {
    let mut system = System::new();
    let _server = serve(&system.server_node);
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    let goal = client.send_goal(FibonacciGoal { order: 3 }, LIMIT).unwrap();
    goal.get_result(LIMIT).unwrap();
    let err = goal.cancel(LIMIT).unwrap_err();
    assert!(
        matches!(err, ActionError::CancelRefused { code: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("had already ended"), "{err}");
}

#[test]
fn a_goal_whose_handle_is_dropped_is_aborted_not_left_waiting() {
    let mut system = System::new();
    let _server = ActionServer::<Fibonacci>::new(
        &system.server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndDefer,
        |_, _| CancelResponse::Reject,
        drop,
    )
    .unwrap();
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    let goal = client.send_goal(FibonacciGoal { order: 3 }, LIMIT).unwrap();
    let outcome = goal.get_result(LIMIT).unwrap();
    assert_eq!(outcome.status, GoalStatus::Aborted);
    assert_eq!(outcome.result, FibonacciResult::default());
}

#[test]
fn a_result_is_kept_for_the_result_timeout_then_forgotten() {
    let mut system = System::new();
    let server = ActionServer::<Fibonacci>::with_options(
        &system.server_node,
        "fibonacci",
        ActionServerOptions {
            result_timeout: Duration::from_millis(100),
        },
        |_, _| GoalResponse::AcceptAndExecute,
        |_, _| CancelResponse::Reject,
        |handle: ServerGoalHandle<Fibonacci>| {
            handle
                .succeed(FibonacciResult { sequence: vec![7] })
                .unwrap();
        },
    )
    .unwrap();
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    let goal = client.send_goal(FibonacciGoal { order: 1 }, LIMIT).unwrap();
    assert_eq!(goal.get_result(LIMIT).unwrap().result.sequence, [7]);
    let give_up = std::time::Instant::now() + LIMIT;
    while server.goal_count() > 0 {
        assert!(
            std::time::Instant::now() < give_up,
            "the result was never forgotten"
        );
        std::thread::yield_now();
    }
    let err = goal.get_result(LIMIT).unwrap_err();
    assert!(matches!(err, ActionError::UnknownGoal { .. }), "{err:?}");
    assert!(err.to_string().contains("result_timeout"), "{err}");
}

#[test]
fn sending_a_goal_from_a_callback_that_blocks_the_server_is_would_deadlock() {
    let context = Context::new();
    let node = Node::new_in(&context, "alone", "/").unwrap();
    let _server = serve(&node);
    let client = ActionClient::<Fibonacci>::new(&node, "fibonacci").unwrap();
    let executor = Executor::single_threaded();
    executor.add_node(&node).unwrap();
    let (tx, rx) = mpsc::channel();
    let started = std::time::Instant::now();
    let _timer = node
        .create_timer(StdDuration::from_millis(1), move |_| {
            let _ = tx.send(client.send_goal(FibonacciGoal { order: 2 }, LIMIT));
        })
        .unwrap();
    let result = loop {
        executor.spin_once(StdDuration::from_millis(100)).unwrap();
        if let Ok(result) = rx.try_recv() {
            break result;
        }
        assert!(started.elapsed() < LIMIT, "the timer never ran");
    };
    let Err(ActionError::Call {
        source: CallError::WouldDeadlock(_),
        ..
    }) = result
    else {
        panic!("expected WouldDeadlock, got {result:?}");
    };
    assert!(started.elapsed() < LIMIT);
}

#[test]
fn a_decision_may_wait_and_a_copy_of_its_goal_sent_meanwhile_is_rejected() {
    use kairos::exec::GroupKind;
    use kairos::graph::ActionType;
    let mut system = System::new();
    // A reentrant group, so the copy is answered while the first decision still waits.
    let group = system
        .server_node
        .create_callback_group("decisions", GroupKind::Reentrant);
    let (asked, asked_rx) = mpsc::channel::<FibonacciGoal>();
    let (release, decision) = futures_channel::oneshot::channel::<GoalResponse>();
    let decision = std::sync::Mutex::new(Some(decision));
    let _server = ActionServer::<Fibonacci>::with_async_decisions(
        &system.server_node.with_group(&group).unwrap(),
        "fibonacci",
        ActionServerOptions::default(),
        move |_, goal: Arc<FibonacciGoal>| {
            asked.send((*goal).clone()).unwrap();
            let decision = decision.lock().unwrap().take();
            Box::pin(async move {
                match decision {
                    Some(decision) => decision.await.unwrap_or(GoalResponse::Reject),
                    None => panic!("the copy of a goal being decided was decided again"),
                }
            })
        },
        |_, _| Box::pin(std::future::ready(CancelResponse::Reject)),
        |handle: ServerGoalHandle<Fibonacci>| {
            handle
                .succeed(FibonacciResult { sequence: vec![1] })
                .unwrap();
        },
    )
    .unwrap();
    let send_goal = system
        .client_node
        .create_client::<<Fibonacci as ActionType>::SendGoal>("fibonacci/_action/send_goal")
        .unwrap();
    let send_goal = Arc::new(send_goal);
    system.spin();
    let id = kairos_action::GoalId::random();
    let first = {
        let send_goal = send_goal.clone();
        std::thread::spawn(move || {
            send_goal.call(
                Fibonacci::send_goal_request(id.0, FibonacciGoal { order: 4 }),
                LIMIT,
            )
        })
    };
    assert_eq!(asked_rx.recv_timeout(LIMIT).unwrap().order, 4);
    let copy = send_goal
        .call(
            Fibonacci::send_goal_request(id.0, FibonacciGoal { order: 4 }),
            LIMIT,
        )
        .unwrap();
    assert!(
        !Fibonacci::split_send_goal_response(copy).0,
        "the copy was accepted"
    );
    assert!(
        !first.is_finished(),
        "the first copy was answered before it was decided"
    );
    release.send(GoalResponse::AcceptAndExecute).unwrap();
    let first = first.join().unwrap().unwrap();
    assert!(
        Fibonacci::split_send_goal_response(first).0,
        "the goal was not accepted"
    );
    assert!(asked_rx.try_recv().is_err(), "a goal was decided twice");
}

#[test]
fn a_goal_may_end_before_its_result_is_ready_and_clients_wait_for_the_result() {
    let mut system = System::new();
    let (ended, pending) = mpsc::channel();
    let _server = ActionServer::<Fibonacci>::new(
        &system.server_node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        |_, _| CancelResponse::Reject,
        move |handle: ServerGoalHandle<Fibonacci>| {
            let refused = handle
                .end_result_pending(GoalStatus::Canceling)
                .unwrap_err();
            assert_eq!(refused.to, GoalStatus::Canceling);
            let result = handle.end_result_pending(GoalStatus::Succeeded).unwrap();
            assert!(handle.end_result_pending(GoalStatus::Aborted).is_err());
            ended.send(result).unwrap();
        },
    )
    .unwrap();
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    for send in [true, false] {
        let goal = client.send_goal(FibonacciGoal { order: 2 }, LIMIT).unwrap();
        let result = pending.recv_timeout(LIMIT).unwrap();
        let waiting = std::thread::spawn(move || goal.get_result(LIMIT));
        // The client's request reaches the server before the result exists, or after:
        // either way it gets the result sent, or the default one of a dropped promise.
        if send {
            result.send(FibonacciResult {
                sequence: vec![1, 1],
            });
        } else {
            drop(result);
        }
        let outcome = waiting.join().unwrap().unwrap();
        assert_eq!(outcome.status, GoalStatus::Succeeded);
        let expected = if send { vec![1, 1] } else { vec![] };
        assert_eq!(outcome.result.sequence, expected);
    }
}

/// A future that is pending `n` times (waking itself each time) before it is ready: a
/// decision that takes a few turns of the executor, without a sleep.
struct Turns(u32);

impl std::future::Future for Turns {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 == 0 {
            return std::task::Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

#[test]
fn copies_of_goals_sent_at_once_from_many_threads_are_accepted_once_each() {
    use kairos::exec::GroupKind;
    use kairos::graph::ActionType;
    use std::sync::atomic::{AtomicU64, Ordering};
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("seed {seed}");
    let mut system = System::new();
    let group = system
        .server_node
        .create_callback_group("decisions", GroupKind::Reentrant);
    let state = Arc::new(AtomicU64::new(seed));
    let turns = state.clone();
    let _server = ActionServer::<Fibonacci>::with_async_decisions(
        &system.server_node.with_group(&group).unwrap(),
        "fibonacci",
        ActionServerOptions::default(),
        move |_, _| {
            // xorshift: each decision takes 0 to 7 turns of the executor.
            let mut x = turns.load(Ordering::Relaxed);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            turns.store(x, Ordering::Relaxed);
            let n = (x % 8) as u32;
            Box::pin(async move {
                Turns(n).await;
                GoalResponse::AcceptAndExecute
            })
        },
        |_, _| Box::pin(std::future::ready(CancelResponse::Reject)),
        |handle: ServerGoalHandle<Fibonacci>| {
            handle.succeed(FibonacciResult::default()).unwrap();
        },
    )
    .unwrap();
    let send_goal = Arc::new(
        system
            .client_node
            .create_client::<<Fibonacci as ActionType>::SendGoal>("fibonacci/_action/send_goal")
            .unwrap(),
    );
    system.spin();
    const GOALS: usize = 20;
    const COPIES: usize = 4;
    let ids: Arc<Vec<_>> = Arc::new(
        (0..GOALS)
            .map(|_| kairos_action::GoalId::random())
            .collect(),
    );
    let senders: Vec<_> = (0..COPIES)
        .map(|_| {
            let (send_goal, ids) = (send_goal.clone(), ids.clone());
            std::thread::spawn(move || {
                ids.iter()
                    .map(|id| {
                        let request =
                            Fibonacci::send_goal_request(id.0, FibonacciGoal { order: 1 });
                        Fibonacci::split_send_goal_response(send_goal.call(request, LIMIT).unwrap())
                            .0
                    })
                    .collect::<Vec<bool>>()
            })
        })
        .collect();
    let answers: Vec<Vec<bool>> = senders.into_iter().map(|s| s.join().unwrap()).collect();
    for goal in 0..GOALS {
        let accepted = answers.iter().filter(|a| a[goal]).count();
        assert_eq!(
            accepted, 1,
            "goal {goal} accepted {accepted} times (seed {seed})"
        );
    }
}

/// A server whose goals the test steps: each accepted goal's handle comes out of the
/// channel, for the test to publish its feedback and end it.
fn stepped_server(
    node: &Node,
) -> (
    ActionServer<Fibonacci>,
    mpsc::Receiver<ServerGoalHandle<Fibonacci>>,
) {
    let (goals, accepted) = mpsc::channel();
    let goals = std::sync::Mutex::new(goals);
    let server = ActionServer::<Fibonacci>::new(
        node,
        "fibonacci",
        |_, _| GoalResponse::AcceptAndExecute,
        |_, _| CancelResponse::Accept,
        move |handle| {
            let _ = goals.lock().unwrap().send(handle);
        },
    )
    .unwrap();
    (server, accepted)
}

/// A spinning system with a stepped server and a client that found it.
fn stepped_system() -> (
    System,
    ActionServer<Fibonacci>,
    mpsc::Receiver<ServerGoalHandle<Fibonacci>>,
    ActionClient<Fibonacci>,
) {
    let mut system = System::new();
    let (server, accepted) = stepped_server(&system.server_node);
    let client = ActionClient::<Fibonacci>::new(&system.client_node, "fibonacci").unwrap();
    system.spin();
    assert!(client.wait_for_server(LIMIT));
    (system, server, accepted, client)
}

fn feedback(server_goal: &ServerGoalHandle<Fibonacci>, n: i32) {
    server_goal.publish_feedback(FibonacciFeedback { sequence: vec![n] });
}

/// Waits (at most `LIMIT`) until `done()`.
fn wait_until(done: impl Fn() -> bool) -> bool {
    let give_up = std::time::Instant::now() + LIMIT;
    while !done() {
        if std::time::Instant::now() > give_up {
            return false;
        }
        std::thread::sleep(StdDuration::from_millis(1));
    }
    true
}

#[test]
fn a_goal_sent_async_with_its_own_id_is_followed_canceled_and_ended_through_futures() {
    use kairos_action::{GoalId, GoalOptions};
    let (_system, _server, accepted, client) = stepped_system();
    let id = GoalId([7; 16]);
    let (got_feedback, feedback_seen) = mpsc::channel();
    let sent = client.send_goal_async(
        FibonacciGoal { order: 3 },
        GoalOptions::new()
            .id(id)
            .on_feedback(move |f: FibonacciFeedback| {
                let _ = got_feedback.send(f.sequence);
            }),
    );
    let (answered, answer) = mpsc::channel();
    sent.on_done_spun(move |handle| {
        let _ = answered.send(handle);
    });
    let goal = answer.recv_timeout(LIMIT).unwrap().unwrap();
    assert_eq!(goal.id(), id);
    let server_goal = accepted.recv_timeout(LIMIT).unwrap();
    assert_eq!(server_goal.id(), id);
    // A copy with the same id is rejected, and the first goal stays followed.
    let copy = client.send_goal_with(FibonacciGoal { order: 3 }, GoalOptions::new().id(id), LIMIT);
    assert!(matches!(copy, Err(ActionError::Rejected { goal, .. }) if goal == id));
    feedback(&server_goal, 1);
    assert_eq!(feedback_seen.recv_timeout(LIMIT).unwrap(), [1]);

    let (answered, answer) = mpsc::channel();
    goal.cancel_async().on_done_spun(move |response| {
        let _ = answered.send(response);
    });
    let response = answer.recv_timeout(LIMIT).unwrap().unwrap();
    assert_eq!(response.return_code, 0);
    let canceling: Vec<_> = response
        .goals_canceling
        .iter()
        .map(|i| i.goal_id.uuid)
        .collect();
    assert_eq!(canceling, [id.0]);
    assert_eq!(goal.status(), GoalStatus::Canceling);

    let (answered, answer) = mpsc::channel();
    goal.get_result_async().on_done_spun(move |outcome| {
        let _ = answered.send(outcome);
    });
    server_goal
        .canceled(FibonacciResult { sequence: vec![0] })
        .unwrap();
    let outcome = answer.recv_timeout(LIMIT).unwrap().unwrap();
    assert_eq!(outcome.status, GoalStatus::Canceled);
    assert_eq!(outcome.result.sequence, [0]);
    assert_eq!(goal.status(), GoalStatus::Canceled);
    assert_eq!(client.unmatched_feedback(), 0);
}

#[test]
fn a_goal_whose_send_future_is_dropped_is_not_followed() {
    use kairos_action::GoalOptions;
    let (_system, _server, accepted, client) = stepped_system();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    let sent = client.send_goal_async(
        FibonacciGoal { order: 3 },
        GoalOptions::new().on_feedback(move |_| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }),
    );
    drop(sent);
    // The request left anyway; the server has the goal, the client no longer follows it.
    let server_goal = accepted.recv_timeout(LIMIT).unwrap();
    feedback(&server_goal, 1);
    assert!(wait_until(|| client.unmatched_feedback() == 1));
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 0);
    server_goal.succeed(FibonacciResult::default()).unwrap();
}

#[test]
fn with_feedback_until_result_a_goal_is_followed_until_its_result_or_its_end() {
    use kairos_action::GoalOptions;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (_system, _server, accepted, client) = stepped_system();
    let calls = Arc::new(AtomicUsize::new(0));
    let options = || {
        let counted = calls.clone();
        GoalOptions::new()
            .feedback_until_result()
            .on_feedback(move |_| {
                counted.fetch_add(1, Ordering::Relaxed);
            })
    };
    let delivered = |n| wait_until(|| calls.load(Ordering::Relaxed) == n);
    let unmatched = |n| wait_until(|| client.unmatched_feedback() == n);

    // Kept: followed until its result comes.
    let kept = client
        .send_goal_with(FibonacciGoal { order: 1 }, options(), LIMIT)
        .unwrap();
    let kept_at_server = accepted.recv_timeout(LIMIT).unwrap();
    feedback(&kept_at_server, 1);
    assert!(delivered(1));
    kept_at_server.succeed(FibonacciResult::default()).unwrap();
    assert_eq!(
        kept.get_result(LIMIT).unwrap().status,
        GoalStatus::Succeeded
    );
    feedback(&kept_at_server, 2);
    assert!(unmatched(1), "feedback after the result is counted");

    // Dropped before it ended: still followed, until the status says it ended.
    let dropped = client
        .send_goal_with(FibonacciGoal { order: 1 }, options(), LIMIT)
        .unwrap();
    let dropped_at_server = accepted.recv_timeout(LIMIT).unwrap();
    drop(dropped);
    feedback(&dropped_at_server, 3);
    assert!(delivered(2), "a dropped handle's goal keeps its feedback");
    dropped_at_server
        .succeed(FibonacciResult::default())
        .unwrap();
    // Feedback and status travel apart: once the end is heard, feedback is unmatched.
    let mut sent = 0;
    while client.unmatched_feedback() < 2 && sent < 10_000 {
        feedback(&dropped_at_server, 4);
        sent += 1;
        std::thread::sleep(StdDuration::from_millis(1));
    }
    assert!(
        client.unmatched_feedback() >= 2,
        "the goal's end never ended its following"
    );

    // Without the option, a dropped handle's goal is no longer followed at once.
    let plain = client.send_goal(FibonacciGoal { order: 1 }, LIMIT).unwrap();
    let plain_at_server = accepted.recv_timeout(LIMIT).unwrap();
    // Every feedback so far (two of the kept goal, 1 + `sent` of the dropped one) was
    // delivered or counted.
    let heard = || calls.load(Ordering::Relaxed) as u64 + client.unmatched_feedback();
    assert!(wait_until(|| heard() == 3 + sent));
    let before = client.unmatched_feedback();
    let delivered_before_plain = calls.load(Ordering::Relaxed);
    drop(plain);
    feedback(&plain_at_server, 5);
    assert!(unmatched(before + 1));
    assert_eq!(calls.load(Ordering::Relaxed), delivered_before_plain);
    plain_at_server.succeed(FibonacciResult::default()).unwrap();
}
