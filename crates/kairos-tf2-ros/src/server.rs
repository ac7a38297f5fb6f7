//! [`BufferServer`]: lookups for other programs, as tf2_ros's `buffer_server` serves them
//! (`tf2_msgs/action/LookupTransform`), so a program can look up without keeping a
//! buffer and a listener of its own (Python's `tf2_ros.BufferClient`, rclcpp's).
//!
//! What this module promises:
//! - **tf2_ros's protocol.** A goal is a lookup (simple, or with a fixed frame and two
//!   times when `advanced`) that may wait up to the goal's `timeout` on the buffer's
//!   clock. It succeeds with the transform, or is aborted with `tf2_msgs/TF2Error`'s code
//!   and the Rust error's message (the frames known, the range held, the fix).
//! - **Never hangs, nothing unbounded.** Each lookup waits on a thread of its own, bounded
//!   by its timeout, and ends as soon as its goal's cancel is accepted (the goal ends
//!   "canceled"), the program shuts down, or the server is dropped. At most
//!   [`MAX_LOOKUPS`] wait at once; a goal beyond them is rejected, and the rejection is
//!   logged, never silent.

use crate::buffer::Buffer;
use crate::convert::{stamp_from_msg, to_msg};
use crate::error::TransformError;
use kairos::graph::{GraphError, Node};
use kairos::time::{CancelToken, Duration};
use kairos_action::{ActionServer, CancelResponse, GoalId, GoalResponse, ServerGoalHandle};
use kairos_msgs::tf2_msgs::action::{LookupTransform, LookupTransformGoal, LookupTransformResult};
use kairos_msgs::tf2_msgs::msg::TF2Error;
use kairos_tf2::TransformStamped;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many lookups a server lets wait at once.
pub const MAX_LOOKUPS: usize = 64;

/// Serves `tf2_msgs/action/LookupTransform` from a [`Buffer`]; dropping it ends the action.
pub struct BufferServer {
    server: Option<ActionServer<LookupTransform>>,
    waiting: Arc<AtomicUsize>,
    cancels: Cancels,
    /// Set when the server is dropped: its lookups' cancels are then not a client's.
    closed: Arc<AtomicBool>,
}

/// Each waiting lookup's cancel token, by goal.
type Cancels = Arc<Mutex<HashMap<GoalId, CancelToken>>>;

impl fmt::Debug for BufferServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferServer")
            .field("waiting", &self.waiting.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl BufferServer {
    /// Serves lookups in `buffer` as action `name` on `node` (tf2_ros's default name is
    /// `tf2_buffer_server`).
    ///
    /// # Errors
    ///
    /// As [`ActionServer::new`].
    pub fn new(node: &Node, buffer: Buffer, name: &str) -> Result<BufferServer, GraphError> {
        let waiting = Arc::new(AtomicUsize::new(0));
        let (admitted, logger) = (waiting.clone(), node.logger().clone());
        let running = waiting.clone();
        // A cancel request ends its goal's wait; dropping the server ends them all.
        let cancels: Cancels = Arc::default();
        let (to_cancel, to_run) = (cancels.clone(), cancels.clone());
        let closed = Arc::new(AtomicBool::new(false));
        let closing = closed.clone();
        let server = ActionServer::<LookupTransform>::new(
            node,
            name,
            move |_, goal| {
                // Counted when admitted, so a burst cannot pass the bound between the
                // check and the thread's start.
                let taken = admitted.fetch_add(1, Ordering::AcqRel);
                if taken >= MAX_LOOKUPS {
                    admitted.fetch_sub(1, Ordering::AcqRel);
                    logger.warn(format_args!(
                        "lookup from '{}' to '{}' rejected: {MAX_LOOKUPS} lookups already wait",
                        goal.source_frame, goal.target_frame
                    ));
                    return GoalResponse::Reject;
                }
                GoalResponse::AcceptAndExecute
            },
            move |id, _| {
                if let Some(cancel) = to_cancel.lock().get(&id) {
                    cancel.cancel();
                }
                CancelResponse::Accept
            },
            move |handle: ServerGoalHandle<LookupTransform>| {
                let (buffer, running, cancels) = (buffer.clone(), running.clone(), to_run.clone());
                let closing = closing.clone();
                let cancel = CancelToken::new();
                cancels.lock().insert(handle.id(), cancel.clone());
                std::thread::spawn(move || {
                    answer(&buffer, &handle, &cancel, &closing);
                    cancels.lock().remove(&handle.id());
                    running.fetch_sub(1, Ordering::AcqRel);
                });
            },
        )?;
        Ok(BufferServer {
            server: Some(server),
            waiting,
            cancels,
            closed,
        })
    }

    /// How many lookups wait now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }
}

impl Drop for BufferServer {
    /// Ends every waiting lookup, so none outlives the server by its timeout.
    fn drop(&mut self) {
        // The action first, so no goal starts after the cancels.
        drop(self.server.take());
        self.closed.store(true, Ordering::Release);
        for cancel in self.cancels.lock().values() {
            cancel.cancel();
        }
    }
}

/// Runs one goal's lookup and ends the goal with its answer.
fn answer(
    buffer: &Buffer,
    handle: &ServerGoalHandle<LookupTransform>,
    cancel: &CancelToken,
    closed: &AtomicBool,
) {
    let found = lookup(buffer, handle.goal(), cancel);
    let result = match found {
        Ok(transform) => {
            let _ = handle.succeed(LookupTransformResult {
                transform: to_msg(&transform),
                error: TF2Error::default(),
            });
            return;
        }
        Err(e) => e,
    };
    let error = TF2Error {
        error: result.last_tf2_error().map_or(6, |e| e.tf2_code()),
        error_string: result.to_string(),
    };
    let ended = LookupTransformResult {
        transform: Default::default(),
        error,
    };
    let _ = match result {
        TransformError::Cancelled { .. } if becomes_canceling(handle, closed) => {
            handle.canceled(ended)
        }
        _ => handle.abort(ended),
    };
}

/// Whether a goal whose lookup a cancel ended is canceling. A client's cancel fires the
/// token from `handle_cancel`, and the goal becomes canceling as soon as that callback has
/// returned `Accept`: this waits out that moment (bounded), so the goal can end canceled
/// and not be refused as still executing. A dropped server's cancels are not a client's.
fn becomes_canceling(handle: &ServerGoalHandle<LookupTransform>, closed: &AtomicBool) -> bool {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !handle.is_canceling() {
        if closed.load(Ordering::Acquire) || std::time::Instant::now() >= give_up {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

fn lookup(
    buffer: &Buffer,
    goal: &LookupTransformGoal,
    cancel: &CancelToken,
) -> Result<TransformStamped, TransformError> {
    let timeout = Duration::from_nanos(
        i64::from(goal.timeout.sec)
            .saturating_mul(1_000_000_000)
            .saturating_add(i64::from(goal.timeout.nanosec)),
    );
    let source_time = stamp_from_msg(&goal.source_time);
    if goal.advanced {
        buffer.lookup_transform_full_with_cancel(
            &goal.target_frame,
            stamp_from_msg(&goal.target_time),
            &goal.source_frame,
            source_time,
            &goal.fixed_frame,
            timeout,
            cancel,
        )
    } else {
        buffer.lookup_transform_with_cancel(
            &goal.target_frame,
            &goal.source_frame,
            source_time,
            timeout,
            cancel,
        )
    }
}
