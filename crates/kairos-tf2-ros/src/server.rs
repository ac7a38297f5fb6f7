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
use kairos_action::{ActionServer, CancelResponse, GoalResponse, ServerGoalHandle};
use kairos_msgs::tf2_msgs::action::{LookupTransform, LookupTransformGoal, LookupTransformResult};
use kairos_msgs::tf2_msgs::msg::TF2Error;
use kairos_tf2::TransformStamped;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many lookups a server lets wait at once.
pub const MAX_LOOKUPS: usize = 64;

/// Serves `tf2_msgs/action/LookupTransform` from a [`Buffer`]; dropping it ends the action
/// and every waiting lookup (their goals are aborted).
pub struct BufferServer {
    _server: ActionServer<LookupTransform>,
    waiting: Arc<AtomicUsize>,
}

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
            // The goal's cancel token ends its lookup once the goal is canceling.
            |_, _| CancelResponse::Accept,
            move |handle: ServerGoalHandle<LookupTransform>| {
                let (buffer, running) = (buffer.clone(), running.clone());
                std::thread::spawn(move || {
                    let found = lookup(&buffer, handle.goal(), &handle.cancel_token());
                    // No longer waiting once the lookup has returned: counted before the
                    // answer goes out, so a client holding its result never sees it waiting.
                    running.fetch_sub(1, Ordering::AcqRel);
                    answer(&handle, found);
                });
            },
        )?;
        Ok(BufferServer {
            _server: server,
            waiting,
        })
    }

    /// How many lookups wait now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }
}

/// Ends one goal with its lookup's answer: succeeded with the transform, canceled when a
/// cancel ended it, aborted with tf2's code otherwise (a dropped server included).
fn answer(
    handle: &ServerGoalHandle<LookupTransform>,
    found: Result<TransformStamped, TransformError>,
) {
    let error = match found {
        Ok(transform) => {
            let _ = handle.succeed(LookupTransformResult {
                transform: to_msg(&transform),
                error: TF2Error::default(),
            });
            return;
        }
        Err(e) => e,
    };
    let ended = LookupTransformResult {
        transform: Default::default(),
        error: TF2Error {
            error: error.last_tf2_error().map_or(6, |e| e.tf2_code()),
            error_string: error.to_string(),
        },
    };
    // The token fires only after the goal became canceling; a dropped server's goals
    // still execute.
    let _ = match error {
        TransformError::Cancelled { .. } if handle.is_canceling() => handle.canceled(ended),
        _ => handle.abort(ended),
    };
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
