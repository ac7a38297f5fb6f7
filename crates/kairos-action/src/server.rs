//! The action server: takes goals, answers cancel requests, publishes feedback and
//! status, and hands each goal's result to every client that asks for it.
//!
//! # Ground rules
//! - The list of goals being decided is locked before the goal table, and the table before
//!   a goal's own lock, never the other way; no user callback runs under any of them.
//! - `send_goal` and `cancel_goal` run in the node's group and call the user's decisions;
//!   a decision may wait ([`ActionServer::with_async_decisions`]), and holds the group
//!   while it does, as an async service does. `get_result` runs in a reentrant group of
//!   its own and waits for the goal without holding a thread: its future completes when
//!   the goal ends.
//! - A goal ends once. Its final status and result go to every waiting `get_result` and
//!   stay for later askers for `result_timeout` after the end (expired goals are removed
//!   when the server next takes a goal, answers or publishes status). A goal may end with
//!   its result to follow ([`ServerGoalHandle::end_result_pending`], rcl_action's order):
//!   its final status is published at once, `get_result` waits for the result, and the
//!   timeout counts from the result.
//! - A goal whose last [`ServerGoalHandle`] is dropped before it ended is aborted (with
//!   the default result, and a warning on the node's logger), so no client waits for a
//!   result no one will give.
//! - Each goal's [`cancel_token`](ServerGoalHandle::cancel_token) fires after the goal has
//!   become canceling, never before (so code woken by it can end the goal
//!   [`canceled`](ServerGoalHandle::canceled) at once), and when the [`ActionServer`] is
//!   dropped (the goal is then still executing: end it, or drop its handle to abort it).

use crate::error::GoalError;
use crate::goal::{CancelResponse, GoalId, GoalResponse, GoalStatus};
use crate::names::{ActionNames, FEEDBACK_QOS, STATUS_QOS};
use crate::trace::{self, Step};
use futures_channel::oneshot;
use kairos::exec::GroupKind;
use kairos::graph::{ActionType, GraphError, Node, Publisher, Service, ServiceType};
use kairos::logging::Logger;
use kairos::time::{CancelToken, Clock, Duration, Time};
use kairos_msgs::action_msgs::msg::{GoalInfo, GoalStatus as GoalStatusMsg, GoalStatusArray};
use kairos_msgs::action_msgs::srv::{CancelGoalRequest, CancelGoalResponse};
use kairos_msgs::builtin_interfaces::msg::Time as TimeMsg;
use kairos_msgs::unique_identifier_msgs::msg::UUID;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::Arc;

type SendGoalRequest<A> = <<A as ActionType>::SendGoal as ServiceType>::Request;
type SendGoalResponse<A> = <<A as ActionType>::SendGoal as ServiceType>::Response;
type GetResultRequest<A> = <<A as ActionType>::GetResult as ServiceType>::Request;
type GetResultResponse<A> = <<A as ActionType>::GetResult as ServiceType>::Response;

/// How an [`ActionServer`] keeps results.
#[derive(Debug, Clone, Copy)]
pub struct ActionServerOptions {
    /// How long a goal's result is kept after it ended, for clients that ask late
    /// (rcl_action's default: 15 minutes).
    pub result_timeout: Duration,
}

impl Default for ActionServerOptions {
    fn default() -> Self {
        ActionServerOptions {
            result_timeout: Duration::from_secs(15 * 60),
        }
    }
}

/// A decision that may wait before it is made (a service call, a sleep, a question to a
/// Python callback): what the decisions of [`ActionServer::with_async_decisions`] return.
pub type Decision<R> = Pin<Box<dyn Future<Output = R> + Send>>;

/// A decision on a goal (a new one, or a cancel request for one).
type Decide<A, R> = Box<dyn Fn(GoalId, Arc<<A as ActionType>::Goal>) -> Decision<R> + Send + Sync>;

/// The user's decisions and the code that runs accepted goals.
struct Callbacks<A: ActionType> {
    handle_goal: Decide<A, GoalResponse>,
    handle_cancel: Decide<A, CancelResponse>,
    handle_accepted: Box<dyn Fn(ServerGoalHandle<A>) + Send + Sync>,
}

struct Shared<A: ActionType> {
    action: String,
    /// The handle the trace knows this server by.
    handle: u64,
    clock: Clock,
    logger: Logger,
    result_timeout: Duration,
    /// The goals, by id (ids are random; the stamp orders them).
    goals: Mutex<BTreeMap<GoalId, Arc<Goal<A>>>>,
    /// Ids of goals whose decision is pending (a copy sent meanwhile is a duplicate).
    deciding: Mutex<Vec<GoalId>>,
    status: Publisher<GoalStatusArray>,
    feedback: Publisher<A::FeedbackMessage>,
    callbacks: Callbacks<A>,
    /// Fired when the [`ActionServer`] is dropped; every goal's token is its child.
    closing: CancelToken,
}

/// A goal id on the list of goals being decided, until this is dropped: when its request
/// was answered (after an accepted goal entered the table), or dropped unanswered with
/// its executor.
struct Deciding<A: ActionType> {
    server: Arc<Shared<A>>,
    id: GoalId,
}

impl<A: ActionType> Drop for Deciding<A> {
    fn drop(&mut self) {
        self.server
            .deciding
            .lock()
            .retain(|pending| *pending != self.id);
    }
}

/// One accepted goal.
struct Goal<A: ActionType> {
    id: GoalId,
    /// Its server's trace handle.
    server: u64,
    /// When it was accepted (`(sec, nanosec)` of the node clock).
    stamp: (i32, u32),
    goal: Arc<A::Goal>,
    state: Mutex<GoalState<A>>,
    /// Fired once the goal is canceling, or its server is dropped.
    cancel: CancelToken,
}

struct GoalState<A: ActionType> {
    status: GoalStatus,
    result: Option<A::Result>,
    /// Steady time of the end, for the result timeout.
    ended_at: Option<Time>,
    waiters: Vec<oneshot::Sender<(GoalStatus, A::Result)>>,
}

/// Serves action `A`; see the [crate docs](crate). Dropping it takes its services and
/// topics off the graph.
pub struct ActionServer<A: ActionType> {
    shared: Arc<Shared<A>>,
    _send_goal: Service<SendGoalRequest<A>, SendGoalResponse<A>>,
    _cancel_goal: Service<CancelGoalRequest, CancelGoalResponse>,
    _get_result: Service<GetResultRequest<A>, GetResultResponse<A>>,
}

impl<A: ActionType> fmt::Debug for ActionServer<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionServer")
            .field("action", &self.shared.action)
            .field("goals", &self.shared.goals.lock().len())
            .finish()
    }
}

impl<A: ActionType> ActionServer<A> {
    /// Serves action `name` on `node`:
    /// - `handle_goal` decides on each new goal (on the node's executor);
    /// - `handle_cancel` decides on each cancel request for a goal that has not ended;
    /// - `handle_accepted` gets each accepted goal's handle, before the client hears that
    ///   the goal was accepted: start the work there (a task, a thread, a timer) and end
    ///   the goal through the handle.
    pub fn new(
        node: &Node,
        name: &str,
        handle_goal: impl Fn(GoalId, &A::Goal) -> GoalResponse + Send + Sync + 'static,
        handle_cancel: impl Fn(GoalId, &A::Goal) -> CancelResponse + Send + Sync + 'static,
        handle_accepted: impl Fn(ServerGoalHandle<A>) + Send + Sync + 'static,
    ) -> Result<Self, GraphError> {
        Self::with_options(
            node,
            name,
            ActionServerOptions::default(),
            handle_goal,
            handle_cancel,
            handle_accepted,
        )
    }

    /// [`new`](Self::new) with `options`.
    pub fn with_options(
        node: &Node,
        name: &str,
        options: ActionServerOptions,
        handle_goal: impl Fn(GoalId, &A::Goal) -> GoalResponse + Send + Sync + 'static,
        handle_cancel: impl Fn(GoalId, &A::Goal) -> CancelResponse + Send + Sync + 'static,
        handle_accepted: impl Fn(ServerGoalHandle<A>) + Send + Sync + 'static,
    ) -> Result<Self, GraphError> {
        Self::with_async_decisions(
            node,
            name,
            options,
            move |id, goal| Box::pin(ready(handle_goal(id, &goal))),
            move |id, goal| Box::pin(ready(handle_cancel(id, &goal))),
            handle_accepted,
        )
    }

    /// [`with_options`](Self::with_options) whose decisions may wait: `handle_goal` and
    /// `handle_cancel` return futures, polled on the node's executor in the node's group
    /// (which they hold until they decide, as an async service does). A goal sent again
    /// while its first copy is being decided is rejected, as one sent after it.
    pub fn with_async_decisions(
        node: &Node,
        name: &str,
        options: ActionServerOptions,
        handle_goal: impl Fn(GoalId, Arc<A::Goal>) -> Decision<GoalResponse> + Send + Sync + 'static,
        handle_cancel: impl Fn(GoalId, Arc<A::Goal>) -> Decision<CancelResponse> + Send + Sync + 'static,
        handle_accepted: impl Fn(ServerGoalHandle<A>) + Send + Sync + 'static,
    ) -> Result<Self, GraphError> {
        let names = ActionNames::resolve(node, name)?;
        let handle = kairos::trace::next_handle();
        kairos::trace::tp::action_server_init(handle, node.trace_handle(), &names.action);
        let shared = Arc::new(Shared {
            action: names.action.clone(),
            handle,
            clock: node.clock(),
            logger: node.logger().clone(),
            result_timeout: options.result_timeout,
            goals: Mutex::new(BTreeMap::new()),
            deciding: Mutex::new(Vec::new()),
            status: node.create_publisher(&names.status, STATUS_QOS)?,
            feedback: node.create_publisher(&names.feedback, FEEDBACK_QOS)?,
            callbacks: Callbacks {
                handle_goal: Box::new(handle_goal),
                handle_cancel: Box::new(handle_cancel),
                handle_accepted: Box::new(handle_accepted),
            },
            closing: CancelToken::new(),
        });
        let on_goal = shared.clone();
        let send_goal = node.create_service_async(&names.send_goal, move |request| {
            Shared::send_goal(on_goal.clone(), request)
        })?;
        let on_cancel = shared.clone();
        let cancel_goal = node.create_service_async(&names.cancel_goal, move |request| {
            Shared::cancel_goal(on_cancel.clone(), request)
        })?;
        let results = node.create_callback_group("action results", GroupKind::Reentrant);
        let on_result = shared.clone();
        let get_result = node
            .with_group(&results)?
            .create_service_async(&names.get_result, move |request: GetResultRequest<A>| {
                on_result.get_result(request)
            })?;
        shared.publish_status();
        Ok(ActionServer {
            shared,
            _send_goal: send_goal,
            _cancel_goal: cancel_goal,
            _get_result: get_result,
        })
    }

    /// The action's resolved name.
    pub fn name(&self) -> &str {
        &self.shared.action
    }

    /// The goals the server knows (running, or ended with their result kept).
    pub fn goal_count(&self) -> usize {
        self.shared.prune();
        self.shared.goals.lock().len()
    }

    /// The ids of the goals the server knows, in the order they were accepted.
    pub fn goal_ids(&self) -> Vec<GoalId> {
        self.shared.prune();
        let goals = self.shared.goals.lock();
        let mut known: Vec<_> = goals.values().map(|g| (g.stamp, g.id)).collect();
        known.sort();
        known.into_iter().map(|(_, id)| id).collect()
    }
}

impl<A: ActionType> Drop for ActionServer<A> {
    /// Fires every goal's cancel token, so code waiting on one ends with the server.
    fn drop(&mut self) {
        self.shared.closing.cancel();
    }
}

impl<A: ActionType> Shared<A> {
    fn stamp(&self) -> (i32, u32) {
        let nanos = self.clock.now().nanos().max(0);
        (
            i32::try_from(nanos / 1_000_000_000).unwrap_or(i32::MAX),
            (nanos % 1_000_000_000) as u32,
        )
    }

    async fn send_goal(this: Arc<Self>, request: SendGoalRequest<A>) -> SendGoalResponse<A> {
        let (uuid, goal) = A::split_send_goal_request(request);
        let id = GoalId(uuid);
        this.prune();
        let duplicate = {
            // Both checked under the `deciding` lock: a goal leaves that list only after
            // it entered the table (see `Deciding`), so a copy always sees one of them.
            let mut deciding = this.deciding.lock();
            let known = deciding.contains(&id) || this.goals.lock().contains_key(&id);
            if !known {
                deciding.push(id);
            }
            known
        };
        if duplicate {
            this.logger.warn(format_args!(
                "action {}: goal {id} was sent again; the second is rejected",
                this.action
            ));
            trace::goal(this.handle, id, Step::Rejected, GoalStatus::Unknown);
            return A::send_goal_response(false, this.stamp());
        }
        let _deciding = Deciding {
            server: this.clone(),
            id,
        };
        let goal = Arc::new(goal);
        let decision = (this.callbacks.handle_goal)(id, goal.clone()).await;
        let stamp = this.stamp();
        let status = match decision {
            GoalResponse::Reject => {
                trace::goal(this.handle, id, Step::Rejected, GoalStatus::Unknown);
                return A::send_goal_response(false, stamp);
            }
            GoalResponse::AcceptAndExecute => GoalStatus::Executing,
            GoalResponse::AcceptAndDefer => GoalStatus::Accepted,
        };
        let entry = Arc::new(Goal {
            id,
            server: this.handle,
            stamp,
            goal,
            cancel: this.closing.child(),
            state: Mutex::new(GoalState {
                status,
                result: None,
                ended_at: None,
                waiters: Vec::new(),
            }),
        });
        this.goals.lock().insert(id, entry.clone());
        trace::goal(this.handle, id, Step::Accepted, status);
        this.publish_status();
        (this.callbacks.handle_accepted)(ServerGoalHandle {
            owner: Arc::new(Owner {
                goal: entry,
                server: this.clone(),
            }),
        });
        A::send_goal_response(true, stamp)
    }

    async fn cancel_goal(this: Arc<Self>, request: CancelGoalRequest) -> CancelGoalResponse {
        const NONE: i8 = 0;
        const REJECTED: i8 = 1;
        const UNKNOWN_GOAL_ID: i8 = 2;
        const GOAL_TERMINATED: i8 = 3;
        let info = request.goal_info;
        let id = GoalId(info.goal_id.uuid);
        let before = (info.stamp.sec, info.stamp.nanosec);
        // ROS 2's cancel policy: a zero id and zero stamp is every goal; a stamp adds every
        // goal accepted at or before it; an id adds that goal.
        let mut candidates: Vec<Arc<Goal<A>>> = this
            .goals
            .lock()
            .values()
            .filter(|g| {
                (id.is_zero() && before == (0, 0))
                    || g.id == id
                    || (before != (0, 0) && g.stamp <= before)
            })
            .cloned()
            .collect();
        candidates.sort_by_key(|g| g.stamp);
        let mut canceling = Vec::new();
        let mut ended = 0;
        for goal in &candidates {
            let status = goal.state.lock().status;
            if status.is_terminal() {
                ended += 1;
                continue;
            }
            let cancels = status == GoalStatus::Canceling
                || ((this.callbacks.handle_cancel)(goal.id, goal.goal.clone()).await
                    == CancelResponse::Accept
                    // A goal that ended while its cancel was decided stays ended.
                    && goal.transition(GoalStatus::Canceling).is_ok());
            if cancels {
                canceling.push(goal_info(goal.id, goal.stamp));
            }
        }
        let return_code = if !canceling.is_empty() {
            NONE
        } else if candidates.is_empty() && !id.is_zero() {
            UNKNOWN_GOAL_ID
        } else if candidates.is_empty() {
            NONE
        } else if ended == candidates.len() {
            GOAL_TERMINATED
        } else {
            REJECTED
        };
        if !canceling.is_empty() {
            this.publish_status();
        }
        CancelGoalResponse {
            return_code,
            goals_canceling: canceling,
        }
    }

    fn get_result(
        &self,
        request: GetResultRequest<A>,
    ) -> impl Future<Output = GetResultResponse<A>> + Send + use<A> {
        let id = GoalId(A::get_result_request_id(&request));
        self.prune();
        let goal = self.goals.lock().get(&id).cloned();
        enum Answer<A: ActionType> {
            Now(GetResultResponse<A>),
            Later(oneshot::Receiver<(GoalStatus, A::Result)>),
        }
        let answer = match goal {
            None => Answer::<A>::Now(A::get_result_response(
                GoalStatus::Unknown.code(),
                A::Result::default(),
            )),
            Some(goal) => {
                let mut state = goal.state.lock();
                match &state.result {
                    Some(result) if state.status.is_terminal() => {
                        Answer::Now(A::get_result_response(state.status.code(), result.clone()))
                    }
                    _ => {
                        let (tx, rx) = oneshot::channel();
                        state.waiters.push(tx);
                        Answer::Later(rx)
                    }
                }
            }
        };
        async move {
            match answer {
                Answer::Now(response) => response,
                Answer::Later(rx) => match rx.await {
                    Ok((status, result)) => A::get_result_response(status.code(), result),
                    // The server went away with the goal: no result will come.
                    Err(_) => {
                        A::get_result_response(GoalStatus::Aborted.code(), A::Result::default())
                    }
                },
            }
        }
    }

    /// Forgets goals whose result has been kept for `result_timeout`.
    fn prune(&self) {
        let now = Clock::steady().now();
        let timeout = self.result_timeout;
        let mut goals = self.goals.lock();
        let before = goals.len();
        goals.retain(|_, goal| {
            let state = goal.state.lock();
            let keep = state
                .ended_at
                .is_none_or(|at| now.since(at).is_ok_and(|kept| kept < timeout));
            if !keep {
                trace::goal(self.handle, goal.id, Step::Expired, state.status);
            }
            keep
        });
        let pruned = before != goals.len();
        drop(goals);
        if pruned {
            self.publish_status();
        }
    }

    /// Publishes every known goal's status (latched for late clients).
    fn publish_status(&self) {
        let status_list = self
            .goals
            .lock()
            .values()
            .map(|g| status_msg(g.id, g.stamp, g.state.lock().status))
            .collect();
        self.status.publish(GoalStatusArray { status_list });
    }
}

impl<A: ActionType> Goal<A> {
    /// Moves the goal to `to`, if the state machine allows it.
    fn transition(&self, to: GoalStatus) -> Result<(), GoalError> {
        {
            let mut state = self.state.lock();
            if !state.status.can_become(to) {
                return Err(GoalError {
                    goal: self.id,
                    from: state.status,
                    to,
                });
            }
            state.status = to;
            let step = match to {
                GoalStatus::Executing => Step::Executing,
                _ => Step::Canceling,
            };
            trace::goal(self.server, self.id, step, to);
        }
        if to == GoalStatus::Canceling {
            self.cancel.cancel();
        }
        Ok(())
    }

    /// Ends the goal with `status` and `result`, and hands them to every waiter.
    fn end(&self, status: GoalStatus, result: A::Result) -> Result<(), GoalError> {
        self.finish(status)?;
        self.deliver(result);
        Ok(())
    }

    /// Moves the goal to the terminal `status`; its result follows with [`deliver`].
    fn finish(&self, status: GoalStatus) -> Result<(), GoalError> {
        let mut state = self.state.lock();
        if !status.is_terminal() || !state.status.can_become(status) {
            return Err(GoalError {
                goal: self.id,
                from: state.status,
                to: status,
            });
        }
        state.status = status;
        trace::goal(self.server, self.id, Step::Ended, status);
        Ok(())
    }

    /// Keeps the ended goal's `result` and hands it to every waiter; the result timeout
    /// counts from now.
    fn deliver(&self, result: A::Result) {
        let (status, waiters) = {
            let mut state = self.state.lock();
            if state.result.is_some() {
                return;
            }
            state.ended_at = Some(Clock::steady().now());
            state.result = Some(result.clone());
            (state.status, std::mem::take(&mut state.waiters))
        };
        for waiter in waiters {
            let _ = waiter.send((status, result.clone()));
        }
    }
}

fn goal_info(id: GoalId, stamp: (i32, u32)) -> GoalInfo {
    GoalInfo {
        goal_id: UUID { uuid: id.0 },
        stamp: TimeMsg {
            sec: stamp.0,
            nanosec: stamp.1,
        },
    }
}

fn status_msg(id: GoalId, stamp: (i32, u32), status: GoalStatus) -> GoalStatusMsg {
    GoalStatusMsg {
        goal_info: goal_info(id, stamp),
        status: status.code(),
    }
}

/// The owner of an accepted goal: the server's code ends it through this handle.
/// Clones refer to the same goal; when the last one is dropped before the goal ended,
/// the goal is aborted (see the module's ground rules).
pub struct ServerGoalHandle<A: ActionType> {
    owner: Arc<Owner<A>>,
}

struct Owner<A: ActionType> {
    goal: Arc<Goal<A>>,
    server: Arc<Shared<A>>,
}

impl<A: ActionType> Clone for ServerGoalHandle<A> {
    fn clone(&self) -> Self {
        ServerGoalHandle {
            owner: self.owner.clone(),
        }
    }
}

impl<A: ActionType> fmt::Debug for ServerGoalHandle<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerGoalHandle")
            .field("goal", &self.owner.goal.id)
            .field("status", &self.status())
            .finish()
    }
}

impl<A: ActionType> ServerGoalHandle<A> {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.owner.goal.id
    }

    /// The goal the client sent.
    pub fn goal(&self) -> &Arc<A::Goal> {
        &self.owner.goal.goal
    }

    /// The goal's status now.
    pub fn status(&self) -> GoalStatus {
        self.owner.goal.state.lock().status
    }

    /// Whether a cancel request was accepted: wind down and call [`canceled`](Self::canceled).
    pub fn is_canceling(&self) -> bool {
        self.status() == GoalStatus::Canceling
    }

    /// A token that fires once this goal is canceling (after the cancel request was
    /// accepted, so [`is_canceling`](Self::is_canceling) is already true), or when the
    /// [`ActionServer`] is dropped (then the goal still executes). Give it to the goal's
    /// waits (sleeps, lookups, calls) so a cancel ends them at once; deciding in
    /// `handle_cancel` is too early, the goal is not canceling yet.
    pub fn cancel_token(&self) -> CancelToken {
        self.owner.goal.cancel.clone()
    }

    /// Whether the goal has not ended.
    pub fn is_active(&self) -> bool {
        !self.status().is_terminal()
    }

    /// Marks an accepted (deferred) goal executing.
    pub fn execute(&self) -> Result<(), GoalError> {
        self.owner.goal.transition(GoalStatus::Executing)?;
        self.owner.server.publish_status();
        Ok(())
    }

    /// Publishes `feedback` for this goal on `_action/feedback`.
    pub fn publish_feedback(&self, feedback: A::Feedback) {
        let message = A::feedback_message(self.id().0, feedback);
        trace::goal(
            self.owner.server.handle,
            self.id(),
            Step::Feedback,
            self.status(),
        );
        self.owner.server.feedback.publish(message);
    }

    /// Ends the goal: reached, with `result`.
    pub fn succeed(&self, result: A::Result) -> Result<(), GoalError> {
        self.end(GoalStatus::Succeeded, result)
    }

    /// Ends the goal: the server gave up, with `result`.
    pub fn abort(&self, result: A::Result) -> Result<(), GoalError> {
        self.end(GoalStatus::Aborted, result)
    }

    /// Ends a canceling goal: canceled, with `result`.
    pub fn canceled(&self, result: A::Result) -> Result<(), GoalError> {
        self.end(GoalStatus::Canceled, result)
    }

    /// Ends the goal with the terminal `status` now and its result later: rcl_action's
    /// order, where a goal's status is set first and its result follows when the code
    /// that ran it returns (what Python's rclpy-shaped goals do). The final status is
    /// published at once; clients asking for the result wait for
    /// [`PendingResult::send`], and a `PendingResult` dropped unsent sends the default
    /// result. A `status` that is not terminal, or not allowed from the goal's status, is
    /// a [`GoalError`].
    pub fn end_result_pending(&self, status: GoalStatus) -> Result<PendingResult<A>, GoalError> {
        self.owner.goal.finish(status)?;
        self.owner.server.publish_status();
        Ok(PendingResult {
            goal: Some(self.owner.goal.clone()),
        })
    }

    fn end(&self, status: GoalStatus, result: A::Result) -> Result<(), GoalError> {
        self.owner.goal.end(status, result)?;
        self.owner.server.publish_status();
        Ok(())
    }
}

/// The result an ended goal still owes its clients
/// ([`ServerGoalHandle::end_result_pending`]).
#[must_use = "clients wait for the result until it is sent (or this is dropped)"]
pub struct PendingResult<A: ActionType> {
    goal: Option<Arc<Goal<A>>>,
}

impl<A: ActionType> fmt::Debug for PendingResult<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingResult")
            .field("goal", &self.goal.as_ref().map(|g| g.id))
            .finish()
    }
}

impl<A: ActionType> PendingResult<A> {
    /// Hands `result` to every client waiting for it, and keeps it for later askers.
    pub fn send(mut self, result: A::Result) {
        if let Some(goal) = self.goal.take() {
            goal.deliver(result);
        }
    }
}

impl<A: ActionType> Drop for PendingResult<A> {
    fn drop(&mut self) {
        if let Some(goal) = self.goal.take() {
            goal.deliver(A::Result::default());
        }
    }
}

impl<A: ActionType> Drop for Owner<A> {
    fn drop(&mut self) {
        let status = self.goal.state.lock().status;
        if status.is_terminal() {
            return;
        }
        self.server.logger.warn(format_args!(
            "action {}: goal {} was dropped while {status:?}; it is aborted so its clients \
             do not wait for ever (end every goal with succeed, abort or canceled)",
            self.server.action, self.goal.id
        ));
        if self
            .goal
            .end(GoalStatus::Aborted, A::Result::default())
            .is_ok()
        {
            self.server.publish_status();
        }
    }
}
