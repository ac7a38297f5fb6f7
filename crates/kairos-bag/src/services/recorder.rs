//! The recorder's control services, as rosbag2's recorder serves them under its node
//! (`/rosbag2_recorder/pause`, `resume`, `is_paused`, `split_bagfile`), with
//! `rosbag2_interfaces`' types, and its split events on `events/write_split`: so `ros2
//! service call /rosbag2_recorder/split_bagfile rosbag2_interfaces/srv/SplitBagfile` and a
//! tool that waits for `WriteSplitEvent`s work on `kairos bag record`. Each answers
//! through a [`RecorderControl`] (see [`crate::record`] for what each promises).
//!
//! `~/snapshot` is served in snapshot mode only (`--snapshot-mode`), as rosbag2 serves it.

use super::ControlServices;
use crate::FileSplit;
use crate::record::{RecorderControl, SplitHook};
use kairos::graph::{GraphError, Node, Publisher, Qos};
use kairos_msgs::rosbag2_interfaces::msg::WriteSplitEvent;
use kairos_msgs::rosbag2_interfaces::srv::*;
use std::sync::Arc;

/// The topic of the split events, relative to the recorder's namespace, as rosbag2's.
pub const SPLIT_EVENTS: &str = "events/write_split";

/// A hook that publishes each split as a `WriteSplitEvent` of `node` (keep last 1, as
/// rosbag2's publisher).
pub fn split_events(node: &Node) -> Result<SplitHook, GraphError> {
    let publisher: Publisher<WriteSplitEvent> =
        node.create_publisher(SPLIT_EVENTS, Qos::keep_last(1))?;
    let node_name = node.fully_qualified_name().to_owned();
    Ok(SplitHook(Arc::new(move |split: &FileSplit| {
        publisher.publish(WriteSplitEvent {
            closed_file: split.closed_file.display().to_string(),
            opened_file: split.opened_file.display().to_string(),
            node_name: node_name.clone(),
        });
    })))
}

/// Serves the control services of `control` under `node`; `~/snapshot` in snapshot mode
/// only, as rosbag2's recorder.
pub fn serve(
    node: &Node,
    control: &RecorderControl,
    snapshot_mode: bool,
) -> Result<ControlServices, GraphError> {
    let mut services = ControlServices::default();
    let (c, logger) = (control.clone(), node.logger().clone());
    services.keep(node.create_service("~/pause", move |_: PauseRequest| {
        if c.pause() {
            logger.info("Pausing recording.");
        }
        PauseResponse::default()
    }))?;
    let (c, logger) = (control.clone(), node.logger().clone());
    services.keep(node.create_service("~/resume", move |_: ResumeRequest| {
        if c.resume() {
            logger.info("Resuming recording.");
        }
        ResumeResponse::default()
    }))?;
    let c = control.clone();
    services.keep(
        node.create_service("~/is_paused", move |_: IsPausedRequest| IsPausedResponse {
            paused: c.is_paused(),
        }),
    )?;
    let (c, logger) = (control.clone(), node.logger().clone());
    services.keep(
        node.create_service("~/split_bagfile", move |_: SplitBagfileRequest| {
            if let Err(e) = c.split() {
                logger.error(format!("cannot split the bag: {e}"));
            }
            SplitBagfileResponse::default()
        }),
    )?;
    if snapshot_mode {
        let (c, logger) = (control.clone(), node.logger().clone());
        services.keep(
            node.create_service("~/snapshot", move |_: SnapshotRequest| {
                let success = match c.snapshot() {
                    Ok(count) => {
                        logger.info(format!("Snapshot: {count} message(s) written."));
                        true
                    }
                    Err(e) => {
                        logger.error(format!("cannot take a snapshot: {e}"));
                        false
                    }
                };
                SnapshotResponse { success }
            }),
        )?;
    }
    Ok(services)
}
