//! The player's control services, as rosbag2's player serves them under its node
//! (`/rosbag2_player/pause`, `/rosbag2_player/play_next`, ...), with
//! `rosbag2_interfaces`' types: so `ros2 service call /rosbag2_player/pause
//! rosbag2_interfaces/srv/Pause` works on `kairos bag play`, from a ROS 2 process on
//! rmw_zenoh or a kairos one. Each answers through [`PlayerControl`] (see
//! [`crate::play`] for what each promises).
//!
//! `~/play` answers `false` while the bag plays (paused included), as rosbag2's does
//! ("Trying to play() while in playback"); `kairos bag play` ends when the bag has been
//! played, so there is no idle player for it to start.

use super::ControlServices;
use crate::play::PlayerControl;
use kairos::graph::{GraphError, Node};
use kairos_msgs::builtin_interfaces::msg::Time as RosTime;
use kairos_msgs::rosbag2_interfaces::srv::*;

/// Serves the control services of `control` under `node`.
pub fn serve(node: &Node, control: &PlayerControl) -> Result<ControlServices, GraphError> {
    let mut services = ControlServices::default();
    let c = control.clone();
    services.keep(node.create_service("~/pause", move |_: PauseRequest| {
        c.pause();
        PauseResponse::default()
    }))?;
    let c = control.clone();
    services.keep(node.create_service("~/resume", move |_: ResumeRequest| {
        c.resume();
        ResumeResponse::default()
    }))?;
    let c = control.clone();
    services.keep(
        node.create_service("~/toggle_paused", move |_: TogglePausedRequest| {
            c.toggle();
            TogglePausedResponse::default()
        }),
    )?;
    let c = control.clone();
    services.keep(
        node.create_service("~/is_paused", move |_: IsPausedRequest| IsPausedResponse {
            paused: c.is_paused(),
        }),
    )?;
    let c = control.clone();
    services.keep(
        node.create_service("~/get_rate", move |_: GetRateRequest| GetRateResponse {
            rate: c.rate(),
        }),
    )?;
    let c = control.clone();
    services.keep(
        node.create_service("~/set_rate", move |r: SetRateRequest| SetRateResponse {
            success: c.set_rate(r.rate),
        }),
    )?;
    let c = control.clone();
    services.keep(
        node.create_service("~/play_next", move |_: PlayNextRequest| PlayNextResponse {
            success: c.play_next(),
        }),
    )?;
    let c = control.clone();
    services.keep(
        node.create_service("~/burst", move |r: BurstRequest| BurstResponse {
            actually_burst: c.burst(r.num_messages),
        }),
    )?;
    let c = control.clone();
    services.keep(
        node.create_service("~/seek", move |r: SeekRequest| SeekResponse {
            success: c.seek(nanoseconds(&r.time)),
        }),
    )?;
    let c = control.clone();
    services.keep(node.create_service("~/stop", move |_: StopRequest| {
        c.stop();
        StopResponse::default()
    }))?;
    let logger = node.logger().clone();
    services.keep(node.create_service("~/play", move |_: PlayRequest| {
        logger.warn("Trying to play() while in playback, dismissing request.");
        PlayResponse { success: false }
    }))?;
    Ok(services)
}

/// A builtin_interfaces/Time as nanoseconds since the epoch (a time before it is 0).
fn nanoseconds(time: &RosTime) -> u64 {
    let ns = i128::from(time.sec) * 1_000_000_000 + i128::from(time.nanosec);
    u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
}
