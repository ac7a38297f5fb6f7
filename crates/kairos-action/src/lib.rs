//! ROS 2 actions on kairos: a goal sent to a server, feedback while it runs, a result at
//! the end, and cancellation, in ROS 2's own wire format (ROS 2's actions design, as
//! rmw_zenoh carries it).
//!
//! An action `name` is five entities of the graph, so it works in one process and across
//! processes as any service and topic does:
//! - `name/_action/send_goal`: the client's goal, with a fresh goal id; accepted or not;
//! - `name/_action/cancel_goal` (`action_msgs/srv/CancelGoal`): cancel one goal, or all
//!   goals accepted before a time;
//! - `name/_action/get_result`: the final status and result of a goal, answered when it ends;
//! - `name/_action/feedback`: every goal's feedback, with its goal id;
//! - `name/_action/status` (`action_msgs/msg/GoalStatusArray`, transient-local): the
//!   status of every goal the server knows.
//!
//! What this crate promises:
//! - **Never hang.** Every wait of a client has a deadline ([`ActionClient::send_goal`],
//!   [`ClientGoalHandle::get_result`], [`ClientGoalHandle::cancel`]), ends when the
//!   program shuts down, and is a `WouldDeadlock` at once when made from a callback whose
//!   executor could never run the server meanwhile (the checks of `kairos::graph::Client`).
//!   A server that goes away fails its pending calls with an error (as a service does).
//! - **A goal's life is a state machine** ([`GoalStatus`]): accepted, executing,
//!   canceling, then exactly one of succeeded, canceled or aborted. A transition the
//!   machine does not allow is a [`GoalError`], not a silent change; the final status and
//!   result are sent to every client waiting for them and kept for later askers for the
//!   server's `result_timeout`.
//! - **Nothing lost silently.** Feedback for a goal the client does not follow is counted
//!   ([`ActionClient::unmatched_feedback`]).
//! - **Every goal's life is traced.** Servers and clients record each step of a goal
//!   (`kairos:goal`: sent, accepted, executing, feedback, canceling, ended, result) under
//!   its UUID, so `kairos trace goals` shows each goal from both sides, across processes.

#![warn(missing_docs)]

mod client;
mod error;
mod goal;
mod names;
mod request;
mod server;
mod trace;

pub use client::{ActionClient, ClientGoalHandle, GoalOptions, GoalOutcome};
pub use error::{ActionError, GoalError};
pub use goal::{CancelResponse, GoalId, GoalResponse, GoalStatus};
pub use request::ActionFuture;
pub use server::{ActionServer, ActionServerOptions, Decision, PendingResult, ServerGoalHandle};
