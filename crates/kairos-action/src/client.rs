//! The action client: sends goals, follows their feedback and status, asks for results
//! and cancels.
//!
//! Every wait here is a call of one of the action's services through a
//! `kairos::graph::Client`, so it has the client's guarantees: a deadline, an end at
//! shutdown, `WouldDeadlock` at once where the server could never answer, and an error
//! when the server goes away.

use crate::error::ActionError;
use crate::goal::{GoalId, GoalStatus};
use crate::names::{ActionNames, FEEDBACK_QOS, STATUS_QOS};
use crate::trace::{self, Step};
use kairos::graph::{ActionType, Client, GraphError, Node, Subscription, SubscriptionStats};
use kairos::time::Duration;
use kairos_msgs::action_msgs::msg::{GoalInfo, GoalStatusArray};
use kairos_msgs::action_msgs::srv::{CancelGoal, CancelGoalRequest};
use kairos_msgs::builtin_interfaces::msg::Time as TimeMsg;
use kairos_msgs::unique_identifier_msgs::msg::UUID;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI8, AtomicU64, Ordering};

type FeedbackCallback<A> = Box<dyn Fn(<A as ActionType>::Feedback) + Send + Sync>;

/// A goal the client follows: its last status and where its feedback goes.
struct Followed<A: ActionType> {
    status: AtomicI8,
    on_feedback: Option<FeedbackCallback<A>>,
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
        self.send(goal, None, timeout.into())
    }

    /// [`send_goal`](Self::send_goal), with `on_feedback` called with each feedback of the
    /// goal (on the executor that spins the client's node).
    pub fn send_goal_with_feedback(
        &self,
        goal: A::Goal,
        on_feedback: impl Fn(A::Feedback) + Send + Sync + 'static,
        timeout: impl Into<Duration>,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        self.send(goal, Some(Box::new(on_feedback)), timeout.into())
    }

    fn send(
        &self,
        goal: A::Goal,
        on_feedback: Option<FeedbackCallback<A>>,
        timeout: Duration,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        let id = GoalId::random();
        let followed = Arc::new(Followed {
            status: AtomicI8::new(GoalStatus::Unknown.code()),
            on_feedback,
        });
        // Followed before it is sent: feedback may come as soon as the server accepts.
        self.shared.followed.lock().insert(id, followed.clone());
        let unfollow = || self.shared.followed.lock().remove(&id);
        trace::goal(self.shared.handle, id, Step::Sent, GoalStatus::Unknown);
        let response = match self
            .shared
            .send_goal
            .call(A::send_goal_request(id.0, goal), timeout)
        {
            Ok(response) => response,
            Err(source) => {
                unfollow();
                return Err(self.shared.call_error(source));
            }
        };
        let (accepted, stamp) = A::split_send_goal_response(response);
        if !accepted {
            trace::goal(self.shared.handle, id, Step::Rejected, GoalStatus::Unknown);
            unfollow();
            return Err(ActionError::Rejected {
                action: self.shared.action.clone(),
                goal: id,
            });
        }
        let _ = followed.status.compare_exchange(
            GoalStatus::Unknown.code(),
            GoalStatus::Accepted.code(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        trace::goal(self.shared.handle, id, Step::Accepted, GoalStatus::Accepted);
        Ok(ClientGoalHandle {
            id,
            stamp,
            followed,
            shared: self.shared.clone(),
        })
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
        let followed = self.followed.lock();
        for status in &array.status_list {
            if let Some(goal) = followed.get(&GoalId(status.goal_info.goal_id.uuid)) {
                goal.status.store(status.status, Ordering::Relaxed);
            }
        }
    }
}

/// A goal the server accepted. Dropping it stops routing the goal's feedback (the goal
/// itself runs on).
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
            .call(A::get_result_request(self.id.0), timeout)
            .map_err(|e| self.shared.call_error(e))?;
        self.outcome(response)
    }

    /// The goal's outcome, as a future (for `async` callbacks and tasks).
    pub fn get_result_async(
        &self,
    ) -> impl Future<Output = Result<GoalOutcome<A::Result>, ActionError>> + Send + 'static {
        let call = self
            .shared
            .get_result
            .call_async(A::get_result_request(self.id.0));
        let (shared, id, followed) = (self.shared.clone(), self.id, self.followed.clone());
        async move {
            let response = call.await.map_err(|e| shared.call_error(e))?;
            outcome::<A>(&shared, id, &followed, response)
        }
    }

    fn outcome(
        &self,
        response: <A::GetResult as kairos::graph::ServiceType>::Response,
    ) -> Result<GoalOutcome<A::Result>, ActionError> {
        outcome::<A>(&self.shared, self.id, &self.followed, response)
    }

    /// Asks the server to cancel the goal, waiting up to `timeout` for its answer. `Ok`
    /// means the goal is canceling: its result (status canceled, or how it ended if it
    /// ended first) still comes through [`get_result`](Self::get_result).
    pub fn cancel(&self, timeout: impl Into<Duration>) -> Result<(), ActionError> {
        let request = CancelGoalRequest {
            goal_info: GoalInfo {
                goal_id: UUID { uuid: self.id.0 },
                stamp: TimeMsg::default(),
            },
        };
        trace::goal(self.shared.handle, self.id, Step::CancelSent, self.status());
        let response = self
            .shared
            .cancel_goal
            .call(request, timeout)
            .map_err(|e| self.shared.call_error(e))?;
        let canceling = response
            .goals_canceling
            .iter()
            .any(|info| info.goal_id.uuid == self.id.0);
        if response.return_code == 0 && canceling {
            self.followed
                .status
                .store(GoalStatus::Canceling.code(), Ordering::Relaxed);
            trace::goal(
                self.shared.handle,
                self.id,
                Step::Canceling,
                GoalStatus::Canceling,
            );
            return Ok(());
        }
        trace::goal(
            self.shared.handle,
            self.id,
            Step::CancelRefused,
            self.status(),
        );
        Err(ActionError::CancelRefused {
            action: self.shared.action.clone(),
            goal: self.id,
            code: response.return_code,
        })
    }
}

fn outcome<A: ActionType>(
    shared: &Shared<A>,
    id: GoalId,
    followed: &Followed<A>,
    response: <A::GetResult as kairos::graph::ServiceType>::Response,
) -> Result<GoalOutcome<A::Result>, ActionError> {
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
        self.shared.followed.lock().remove(&self.id);
    }
}

fn std_duration(d: Duration) -> std::time::Duration {
    std::time::Duration::from_nanos(d.as_nanos().max(0) as u64)
}
