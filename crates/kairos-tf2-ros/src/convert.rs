//! Conversions between the ROS messages on `/tf` (`kairos-msgs`) and the plain data of
//! `kairos-tf2`.
//!
//! What this module promises:
//! - **Field for field, nothing lost.** `kairos_tf2::TransformStamped` mirrors
//!   `geometry_msgs/TransformStamped`; a round trip gives back the same message, with one
//!   exception stated at [`stamp_to_msg`]: a stamp outside `builtin_interfaces/Time`'s range
//!   saturates.
//! - **Functions, not `From`.** Both sides are types of other crates, so Rust's orphan rule
//!   forbids `From` impls between them here; the functions are the conversions the
//!   listener and the broadcasters use, public so that a program converting its own
//!   messages gets the same answers.

use kairos_msgs::builtin_interfaces::msg::Time as TimeMsg;
use kairos_msgs::geometry_msgs::msg::{
    Quaternion as QuaternionMsg, Transform as TransformMsg,
    TransformStamped as TransformStampedMsg, Vector3 as Vector3Msg,
};
use kairos_msgs::std_msgs::msg::Header as HeaderMsg;
use kairos_tf2::{Header, Quaternion, Stamp, Transform, TransformStamped, Vector3};

/// A `builtin_interfaces/Time` as a stamp (nanoseconds since the clock's origin).
pub fn stamp_from_msg(time: &TimeMsg) -> Stamp {
    Stamp::from_sec_nanosec(time.sec, time.nanosec)
}

/// A stamp as a `builtin_interfaces/Time`: `sec` rounds towards minus infinity and
/// `nanosec` is in `0..1e9`, as rclcpp writes a negative time; a stamp beyond `sec`'s
/// range (±68 years) saturates at its end.
pub fn stamp_to_msg(stamp: Stamp) -> TimeMsg {
    let nanos = stamp.nanos();
    let sec = nanos.div_euclid(1_000_000_000);
    let nanosec = nanos.rem_euclid(1_000_000_000) as u32;
    match i32::try_from(sec) {
        Ok(sec) => TimeMsg { sec, nanosec },
        Err(_) if sec < 0 => TimeMsg {
            sec: i32::MIN,
            nanosec: 0,
        },
        Err(_) => TimeMsg {
            sec: i32::MAX,
            nanosec: 999_999_999,
        },
    }
}

/// A time of a kairos clock (a node's clock, simulated or not) as a stamp: what a
/// broadcaster stamps a transform with, and a lookup asks for.
pub fn stamp_from_time(time: kairos::time::Time) -> Stamp {
    Stamp::from_nanos(time.nanos())
}

/// A `geometry_msgs/Transform` as a transform.
pub fn transform_from_msg(msg: &TransformMsg) -> Transform {
    let (t, r) = (&msg.translation, &msg.rotation);
    Transform::new(
        Vector3::new(t.x, t.y, t.z),
        Quaternion::new(r.x, r.y, r.z, r.w),
    )
}

/// A transform as a `geometry_msgs/Transform`.
pub fn transform_to_msg(transform: &Transform) -> TransformMsg {
    let (t, r) = (&transform.translation, &transform.rotation);
    TransformMsg {
        translation: Vector3Msg {
            x: t.x,
            y: t.y,
            z: t.z,
        },
        rotation: QuaternionMsg {
            x: r.x,
            y: r.y,
            z: r.z,
            w: r.w,
        },
    }
}

/// A `geometry_msgs/TransformStamped` as `kairos_tf2`'s.
pub fn from_msg(msg: &TransformStampedMsg) -> TransformStamped {
    TransformStamped {
        header: Header {
            stamp: stamp_from_msg(&msg.header.stamp),
            frame_id: msg.header.frame_id.clone(),
        },
        child_frame_id: msg.child_frame_id.clone(),
        transform: transform_from_msg(&msg.transform),
    }
}

/// `kairos_tf2`'s `TransformStamped` as a `geometry_msgs/TransformStamped`.
pub fn to_msg(transform: &TransformStamped) -> TransformStampedMsg {
    TransformStampedMsg {
        header: HeaderMsg {
            stamp: stamp_to_msg(transform.header.stamp),
            frame_id: transform.header.frame_id.clone(),
        },
        child_frame_id: transform.child_frame_id.clone(),
        transform: transform_to_msg(&transform.transform),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_gives_back_the_message() {
        let t = TransformStamped::new(
            "odom",
            "base_link",
            Stamp::from_nanos(12_500_000_001),
            Transform::new(
                Vector3::new(1.0, -2.0, 0.5),
                Quaternion::from_rpy(0.1, 0.2, 0.3),
            ),
        );
        let msg = to_msg(&t);
        assert_eq!(
            (msg.header.stamp.sec, msg.header.stamp.nanosec),
            (12, 500_000_001)
        );
        assert_eq!(msg.header.frame_id, "odom");
        assert_eq!(msg.child_frame_id, "base_link");
        assert_eq!(from_msg(&msg), t);
    }

    #[test]
    fn negative_and_huge_stamps_are_written_as_ros_does() {
        let m = stamp_to_msg(Stamp::from_nanos(-1));
        assert_eq!((m.sec, m.nanosec), (-1, 999_999_999));
        assert_eq!(stamp_from_msg(&m), Stamp::from_nanos(-1));
        let m = stamp_to_msg(Stamp::from_nanos(i64::MAX));
        assert_eq!((m.sec, m.nanosec), (i32::MAX, 999_999_999));
    }
}
