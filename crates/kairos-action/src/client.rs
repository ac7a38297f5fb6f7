//! The action client: sends goals, follows their feedback and status, asks for results
//! and cancels.
//!
//! Every wait here is a call of one of the action's services through a
//! `kairos::graph::Client`, so it has the client's guarantees: a deadline, an end at
//! shutdown, `WouldDeadlock` at once where the server could never answer, and an error
//! when the server goes away. Each request also comes as an [`ActionFuture`], for async
//! callbacks and done callbacks.
//!
//! A goal is followed (its status noted, its feedback routed to its callback) from before
//! its request leaves, so no feedback the server sends once it accepts is missed, until:
//! - its handle is dropped (the default), or
//! - with [`GoalOptions::feedback_until_result`] (rclpy's rule), the server answers a
//!   request for its result, or
//!   its handle was dropped and the status topic says it ended (a status that comes
//!   before the goal's response does not count: its handle is not made yet).
//!
//! Feedback for a goal the client does not follow is counted, never dropped silently.

use crate::error::ActionError;
use crate::goal::{GoalId, GoalStatus};
use crate::names::{ActionNames, FEEDBACK_QOS, STATUS_QOS};
use crate::request::ActionFuture;
use crate::trace::{self, Step};
use kairos::graph::{
    ActionType, CallError, Client, GraphError, Node, ServiceType, Subscription, SubscriptionStats,
};
use kairos::time::Duration;
use kairos_msgs::action_msgs::msg::{GoalInfo, GoalStatusArray};
use kairos_msgs::action_msgs::srv::{CancelGoal, CancelGoalRequest, CancelGoalResponse};
use kairos_msgs::builtin_interfaces::msg::Time as TimeMsg;
use kairos_msgs::unique_identifier_msgs::msg::UUID;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI8, AtomicU64, Ordering};

type FeedbackCallback<A> = Box<dyn Fn(<A as ActionType>::Feedback) + Send + Sync>;
type SendGoalResponse<A> = <<A as ActionType>::SendGoal as ServiceType>::Response;
type GetResultResponse<A> = <<A as ActionType>::GetResult as ServiceType>::Response;

/// A goal the client follows: its last status and where its feedback goes.
struct Followed<A: ActionType> {
    status: AtomicI8,
    on_feedback: Option<FeedbackCallback<A>>,
    /// rclpy's rule: followed until its result arrives (see the module docs).
    until_result: bool,
    /// Its handle was dropped before it ended; the status topic ends its following.
    orphaned: AtomicBool,
}

/// How a goal is sent: its id, where its feedback goes, and for how long.
pub struct GoalOptions<A: ActionType> {
    id: Option<GoalId>,
    on_feedback: Option<FeedbackCallback<A>>,
    until_result: bool,
}

impl<A: ActionType> Default for GoalOptions<A> {
    fn default() -> Self {
        Self {
            id: None,
            on_feedback: None,
            until_result: false,
        }
    }
}

impl<A: ActionType> fmt::Debug for GoalOptions<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GoalOptions")
            .field("id", &self.id)
            .field("on_feedback", &self.on_feedback.is_some())
            .field("until_result", &self.until_result)
            .finish()
    }
}

impl<A: ActionType> GoalOptions<A> {
    /// A fresh random id, no feedback callback, followed while its handle lives.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends the goal with this id rather than a fresh random one (rclpy's `goal_uuid`).
    /// An id the server already knows gets the goal rejected.
    pub fn id(mut self, id: GoalId) -> Self {
        self.id = Some(id);
        self
    }

    /// Calls `on_feedback` with each feedback of the goal, on the executor that spins the
    /// client's node.
    pub fn on_feedback(
        mut self,
        on_feedback: impl Fn(A::Feedback) + Send + Sync + 'static,
    ) -> Self {
        self.on_feedback = Some(Box::new(on_feedback));
        self
    }

    /// rclpy's rule: the goal is followed until the server answers a request for its
    /// result (whatever the answer says), even if its handle is dropped before (then
    /// until the status topic says it ended); feedback that comes after the answer is
    /// counted in [`ActionClient::unmatched_feedback`].
    pub fn feedback_until_result(mut self) -> Self {
        self.until_result = true;
        self
    }
}

struct Shared<A: ActionType> {
    action: String,
    /// The handle the trace knows this client by.
    handle: u64,
    send_goal: Client<A::SendGoal>,
    cancel_goal: Client<CancelGoal>,
    get_result: Client<A::GetResult>,
    followed: Mutex<HashMap<GoalId, Arc<Followed<A>>>>,
    unmatched_feedback: AtomicU64,
}

/// A client of action `A`; see the [crate docs](crate).
pub struct ActionClient<A: ActionType> {
    shared: Arc<Shared<A>>,
    feedback: Subscription<A::FeedbackMessage>,
    _status: Subscription<GoalStatusArray>,
}

impl<A: ActionType> fmt::Debug for ActionClient<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionClient")
            .field("action", &self.shared.action)
            .finish_non_exhaustive()
    }
}

/// How a goal ended, and its result.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalOutcome<R> {
    /// Succeeded, canceled or aborted.
    pub status: GoalStatus,
    /// The result the server gave.
    pub result: R,
}

impl<A: ActionType> ActionClient<A> {
    /// A client of action `name` (resolved against `node`). Feedback callbacks and status
    /// updates run on the executor that spins `node`.
    pub fn new(node: &Node, name: &str) -> Result<Self, GraphError> {
        let names = ActionNames::resolve(node, name)?;
        let handle = kairos::trace::next_handle();
        kairos::trace::tp::action_client_init(handle, node.trace_handle(), &names.action);
        let shared = Arc::new(Shared {
            action: names.action.clone(),
            handle,
            send_goal: node.create_client(&names.send_goal)?,
            cancel_goal: node.create_client(&names.cancel_goal)?,
            get_result: node.create_client(&names.get_result)?,
            followed: Mutex::new(HashMap::new()),
            unmatched_feedback: AtomicU64::new(0),
        });
        let on_feedback = Arc::downgrade(&shared);
        let feedback = node.create_subscription(
            &names.feedback,
            FEEDBACK_QOS,
            move |message: Arc<A::FeedbackMessage>| {
                if let Some(shared) = on_feedback.upgrade() {
                    shared.feedback(message);
                }
            },
        )?;
        let on_status = Arc::downgrade(&shared);
        let status =
            node.create_subscription(&names.status, STATUS_QOS, move |array: &GoalStatusArray| {
                if let Some(shared) = on_status.upgrade() {
                    shared.status(array);
                }
            })?;
        Ok(ActionClient {
            shared,
            feedback,
            _status: status,
        })
    }

    /// The action's resolved name.
    pub fn name(&self) -> &str {
        &self.shared.action
    }

    /// Waits up to `timeout` for a server of the action; true if one is there.
    pub fn wait_for_server(&self, timeout: impl Into<Duration>) -> bool {
        let deadline = std::time::Instant::now() + std_duration(timeout.into());
        let left = || Duration::from(deadline.saturating_duration_since(std::time::Instant::now()));
        let s = &self.shared;
        s.send_goal.wait_for_service(left())
            && s.cancel_goal.wait_for_service(left())
            && s.get_result.wait_for_service(left())
    }

    /// Whether a server of the action is there now.
    pub fn server_is_ready(&self) -> bool {
        let s = &self.shared;
        s.send_goal.service_is_ready()
            && s.cancel_goal.service_is_ready()
            && s.get_result.service_is_ready()
    }

    /// Sends `goal` and waits up to `timeout` for the server to accept it.
    pub fn send_goal(
        &self,
        goal: A::Goal,
        timeout: impl Into<Duration>,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        self.send_goal_with(goal, GoalOptions::new(), timeout)
    }

    /// [`send_goal`](Self::send_goal), with `on_feedback` called with each feedback of the
    /// goal (on the executor that spins the client's node).
    pub fn send_goal_with_feedback(
        &self,
        goal: A::Goal,
        on_feedback: impl Fn(A::Feedback) + Send + Sync + 'static,
        timeout: impl Into<Duration>,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        self.send_goal_with(goal, GoalOptions::new().on_feedback(on_feedback), timeout)
    }

    /// Sends `goal` as `options` say and waits up to `timeout` for the server to accept it.
    pub fn send_goal_with(
        &self,
        goal: A::Goal,
        options: GoalOptions<A>,
        timeout: impl Into<Duration>,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        let (sending, request) = self.start(goal, options);
        sending.answered(self.shared.send_goal.call(request, timeout))
    }

    /// Sends `goal` as `options` say; the future completes with its handle once the server
    /// accepted it, or with [`ActionError::Rejected`].
    pub fn send_goal_async(
        &self,
        goal: A::Goal,
        options: GoalOptions<A>,
    ) -> ActionFuture<Result<ClientGoalHandle<A>, ActionError>> {
        let (sending, request) = self.start(goal, options);
        let response = self.shared.send_goal.call_async(request);
        ActionFuture::new(response, move |response| sending.answered(response))
    }

    /// Follows the goal (before its request leaves: feedback may come as soon as the
    /// server accepts) and makes its request.
    fn start(
        &self,
        goal: A::Goal,
        options: GoalOptions<A>,
    ) -> (Sending<A>, <A::SendGoal as ServiceType>::Request) {
        let id = options.id.unwrap_or_else(GoalId::random);
        let followed = Arc::new(Followed {
            status: AtomicI8::new(GoalStatus::Unknown.code()),
            on_feedback: options.on_feedback,
            until_result: options.until_result,
            orphaned: AtomicBool::new(false),
        });
        self.shared.follow(id, &followed);
        trace::goal(self.shared.handle, id, Step::Sent, GoalStatus::Unknown);
        let sending = Sending {
            shared: self.shared.clone(),
            id,
            followed: Some(followed),
        };
        (sending, A::send_goal_request(id.0, goal))
    }

    /// Feedback messages for goals this client does not follow (other clients' goals, or
    /// goals whose handle was dropped).
    pub fn unmatched_feedback(&self) -> u64 {
        self.shared.unmatched_feedback.load(Ordering::Relaxed)
    }

    /// The feedback subscription's counts (received, delivered, dropped, queued).
    /// Feedback and results travel apart, so feedback sent just before a result may still
    /// be queued when [`ClientGoalHandle::get_result`] returns; a program that spins the
    /// client and wants every feedback first waits for `queued` to reach 0.
    pub fn feedback_stats(&self) -> SubscriptionStats {
        self.feedback.stats()
    }
}

impl<A: ActionType> Shared<A> {
    /// Follows goal `id` (unless a goal with its id is followed already: a copy the server
    /// will reject must not take the first one's place).
    fn follow(&self, id: GoalId, followed: &Arc<Followed<A>>) {
        self.followed
            .lock()
            .entry(id)
            .or_insert_with(|| followed.clone());
    }

    /// Stops following goal `id`, if `followed` is what is followed under its id.
    fn unfollow(&self, id: GoalId, followed: &Arc<Followed<A>>) {
        let mut all = self.followed.lock();
        if all.get(&id).is_some_and(|f| Arc::ptr_eq(f, followed)) {
            all.remove(&id);
        }
    }

    fn call_error(&self, source: kairos::graph::CallError) -> ActionError {
        ActionError::Call {
            action: self.action.clone(),
            source,
        }
    }

    fn feedback(&self, message: Arc<A::FeedbackMessage>) {
        // The message is shared with other subscriptions; the callback gets its own copy.
        let Ok(message) = Arc::try_unwrap(message).or_else(|shared| {
            kairos_msgs::decode::<A::FeedbackMessage>(&kairos_msgs::encode(&*shared))
        }) else {
            return;
        };
        let (uuid, feedback) = A::split_feedback_message(message);
        let id = GoalId(uuid);
        let followed = self.followed.lock().get(&id).cloned();
        match followed {
            Some(followed) => {
                let status = GoalStatus::from_code(followed.status.load(Ordering::Relaxed));
                trace::goal(self.handle, id, Step::Feedback, status);
                if let Some(on_feedback) = &followed.on_feedback {
                    on_feedback(feedback);
                }
            }
            None => {
                self.unmatched_feedback.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn status(&self, array: &GoalStatusArray) {
        let mut followed = self.followed.lock();
        for status in &array.status_list {
            let id = GoalId(status.goal_info.goal_id.uuid);
            let Some(goal) = followed.get(&id) else {
                continue;
            };
            goal.status.store(status.status, Ordering::Relaxed);
            let ended = GoalStatus::from_code(status.status).is_terminal();
            if ended && goal.orphaned.load(Ordering::Relaxed) {
                followed.remove(&id);
            }
        }
    }
}

/// A goal whose request is out: followed until its answer, and no longer if the answer
/// is a rejection, an error, or never read (its future dropped).
struct Sending<A: ActionType> {
    shared: Arc<Shared<A>>,
    id: GoalId,
    /// Taken by the handle of an accepted goal.
    followed: Option<Arc<Followed<A>>>,
}

impl<A: ActionType> Sending<A> {
    fn answered(
        mut self,
        response: Result<SendGoalResponse<A>, CallError>,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        let (shared, id) = (self.shared.clone(), self.id);
        let (accepted, stamp) =
            A::split_send_goal_response(response.map_err(|e| shared.call_error(e))?);
        if !accepted {
            trace::goal(shared.handle, id, Step::Rejected, GoalStatus::Unknown);
            return Err(ActionError::Rejected {
                action: shared.action.clone(),
                goal: id,
            });
        }
        let followed = self.followed.take().expect("a goal is answered once");
        let _ = followed.status.compare_exchange(
            GoalStatus::Unknown.code(),
            GoalStatus::Accepted.code(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        trace::goal(shared.handle, id, Step::Accepted, GoalStatus::Accepted);
        Ok(ClientGoalHandle {
            id,
            stamp,
            followed,
            shared,
        })
    }
}

impl<A: ActionType> Drop for Sending<A> {
    fn drop(&mut self) {
        if let Some(followed) = &self.followed {
            self.shared.unfollow(self.id, followed);
        }
    }
}

/// A goal the server accepted. Dropping it stops routing the goal's feedback (the goal
/// itself runs on), unless it was sent with [`GoalOptions::feedback_until_result`].
pub struct ClientGoalHandle<A: ActionType> {
    id: GoalId,
    stamp: (i32, u32),
    followed: Arc<Followed<A>>,
    shared: Arc<Shared<A>>,
}

impl<A: ActionType> fmt::Debug for ClientGoalHandle<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientGoalHandle")
            .field("goal", &self.id)
            .field("status", &self.status())
            .finish()
    }
}

impl<A: ActionType> ClientGoalHandle<A> {
    /// The goal's id.
    pub fn id(&self) -> GoalId {
        self.id
    }

    /// When the server accepted it (`(sec, nanosec)` of the server's clock).
    pub fn stamp(&self) -> (i32, u32) {
        self.stamp
    }

    /// The goal's last status the server published.
    pub fn status(&self) -> GoalStatus {
        GoalStatus::from_code(self.followed.status.load(Ordering::Relaxed))
    }

    /// Waits up to `timeout` for the goal to end, and returns how it ended and its result.
    pub fn get_result(
        &self,
        timeout: impl Into<Duration>,
    ) -> Result<GoalOutcome<A::Result>, ActionError> {
        let response = self
            .shared
            .get_result
            .call(A::get_result_request(self.id.0), timeout);
        outcome(&self.shared, self.id, &self.followed, response)
    }

    /// The goal's outcome, as a future (for `async` callbacks, tasks and done callbacks).
    pub fn get_result_async(&self) -> ActionFuture<Result<GoalOutcome<A::Result>, ActionError>> {
        let call = self
            .shared
            .get_result
            .call_async(A::get_result_request(self.id.0));
        let (shared, id, followed) = (self.shared.clone(), self.id, self.followed.clone());
        ActionFuture::new(call, move |response| {
            outcome(&shared, id, &followed, response)
        })
    }

    /// Asks the server to cancel the goal, waiting up to `timeout` for its answer. `Ok`
    /// means the goal is canceling: its result (status canceled, or how it ended if it
    /// ended first) still comes through [`get_result`](Self::get_result).
    pub fn cancel(&self, timeout: impl Into<Duration>) -> Result<(), ActionError> {
        let response = self.cancel_answer(timeout)?;
        if canceling(self.id, &response) {
            return Ok(());
        }
        Err(ActionError::CancelRefused {
            action: self.shared.action.clone(),
            goal: self.id,
            code: response.return_code,
        })
    }

    /// Asks the server to cancel the goal, waiting up to `timeout` for its answer, which
    /// it returns as it came (rclpy's `cancel_goal`): `return_code` 0 with this goal among
    /// `goals_canceling` means it is canceling; an error only if the call failed.
    pub fn cancel_answer(
        &self,
        timeout: impl Into<Duration>,
    ) -> Result<CancelGoalResponse, ActionError> {
        let response = self
            .shared
            .cancel_goal
            .call(self.cancel_request(), timeout)
            .map_err(|e| self.shared.call_error(e))?;
        cancel_answered(&self.shared, self.id, &self.followed, &response);
        Ok(response)
    }

    /// [`cancel_answer`](Self::cancel_answer) as a future (rclpy's `cancel_goal_async`).
    pub fn cancel_async(&self) -> ActionFuture<Result<CancelGoalResponse, ActionError>> {
        let call = self.shared.cancel_goal.call_async(self.cancel_request());
        let (shared, id, followed) = (self.shared.clone(), self.id, self.followed.clone());
        ActionFuture::new(call, move |response| {
            let response = response.map_err(|e| shared.call_error(e))?;
            cancel_answered(&shared, id, &followed, &response);
            Ok(response)
        })
    }

    /// The cancel request of this goal (traced as sent).
    fn cancel_request(&self) -> CancelGoalRequest {
        trace::goal(self.shared.handle, self.id, Step::CancelSent, self.status());
        CancelGoalRequest {
            goal_info: GoalInfo {
                goal_id: UUID { uuid: self.id.0 },
                stamp: TimeMsg::default(),
            },
        }
    }
}

/// Whether the server's answer to a cancel request says goal `id` is canceling.
fn canceling(id: GoalId, response: &CancelGoalResponse) -> bool {
    response.return_code == 0
        && response
            .goals_canceling
            .iter()
            .any(|info| info.goal_id.uuid == id.0)
}

/// Notes the server's answer to a cancel request of goal `id`, and traces it.
fn cancel_answered<A: ActionType>(
    shared: &Shared<A>,
    id: GoalId,
    followed: &Followed<A>,
    response: &CancelGoalResponse,
) {
    if canceling(id, response) {
        followed
            .status
            .store(GoalStatus::Canceling.code(), Ordering::Relaxed);
        trace::goal(shared.handle, id, Step::Canceling, GoalStatus::Canceling);
    } else {
        let status = GoalStatus::from_code(followed.status.load(Ordering::Relaxed));
        trace::goal(shared.handle, id, Step::CancelRefused, status);
    }
}

fn outcome<A: ActionType>(
    shared: &Shared<A>,
    id: GoalId,
    followed: &Arc<Followed<A>>,
    response: Result<GetResultResponse<A>, CallError>,
) -> Result<GoalOutcome<A::Result>, ActionError> {
    let response = response.map_err(|e| shared.call_error(e))?;
    if followed.until_result {
        // rclpy's rule: whatever the answer says, the result request was answered.
        shared.unfollow(id, followed);
    }
    let (code, result) = A::split_get_result_response(response);
    let status = GoalStatus::from_code(code);
    if !status.is_terminal() {
        return Err(ActionError::UnknownGoal {
            action: shared.action.clone(),
            goal: id,
        });
    }
    followed.status.store(code, Ordering::Relaxed);
    trace::goal(shared.handle, id, Step::Result, status);
    Ok(GoalOutcome { status, result })
}

impl<A: ActionType> Drop for ClientGoalHandle<A> {
    fn drop(&mut self) {
        let mut all = self.shared.followed.lock();
        if !all
            .get(&self.id)
            .is_some_and(|f| Arc::ptr_eq(f, &self.followed))
        {
            return;
        }
        // Under the lock the status callback notes statuses under: an end it notes from
        // now on sees the goal orphaned.
        if self.followed.until_result && !self.status().is_terminal() {
            self.followed.orphaned.store(true, Ordering::Relaxed);
        } else {
            all.remove(&self.id);
        }
    }
}

fn std_duration(d: Duration) -> std::time::Duration {
    std::time::Duration::from_nanos(d.as_nanos().max(0) as u64)
}
