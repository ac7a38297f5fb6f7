//! The message of the `/clock` topic: simulation time, as ROS's `rosgraph_msgs/msg/Clock`.
//!
//! It is a [`Message`] like any generated type, so it crosses processes on the same path
//! as every other topic (a kairos simulator drives ROS 2 nodes, and a ROS 2 simulator
//! drives kairos nodes); in the process it carries a [`Time`] of
//! [`ClockKind::Sim`].

use crate::time::{ClockKind, Time};
use kairos_interface::Message;
use kairos_interface::type_hash::TypeDescription;
use serde::{Deserialize, Serialize};

/// The topic simulated time is published on.
pub const CLOCK_TOPIC: &str = "/clock";

/// The message of the `/clock` topic (ROS's `rosgraph_msgs/msg/Clock`): the current
/// simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "WireClock", from = "WireClock")]
pub struct ClockMsg {
    /// The simulated time now (a [`ClockKind::Sim`] time).
    pub clock: Time,
}

impl Message for ClockMsg {
    const TYPE_NAME: &'static str = "rosgraph_msgs/msg/Clock";

    fn description() -> TypeDescription {
        kairos_interface::builtin::clock()
    }
}

/// `rosgraph_msgs/msg/Clock` field by field.
#[derive(Serialize, Deserialize)]
struct WireClock {
    clock: WireTime,
}

/// `builtin_interfaces/msg/Time` field by field.
#[derive(Serialize, Deserialize)]
struct WireTime {
    sec: i32,
    nanosec: u32,
}

impl From<ClockMsg> for WireClock {
    /// Times before zero are written as zero, seconds past `i32::MAX` as `i32::MAX` (the
    /// wire has no more).
    fn from(message: ClockMsg) -> Self {
        let nanos = message.clock.nanos().max(0);
        WireClock {
            clock: WireTime {
                sec: i32::try_from(nanos / 1_000_000_000).unwrap_or(i32::MAX),
                nanosec: (nanos % 1_000_000_000) as u32,
            },
        }
    }
}

impl From<WireClock> for ClockMsg {
    fn from(wire: WireClock) -> Self {
        let nanos = i64::from(wire.clock.sec) * 1_000_000_000 + i64::from(wire.clock.nanosec);
        ClockMsg {
            clock: Time::new(ClockKind::Sim, nanos),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_round_trips_as_rosgraph_clock() {
        let message = ClockMsg {
            clock: Time::new(ClockKind::Sim, 5_250_000_001),
        };
        let payload = kairos_interface::encode(&message);
        // Header, then sec = 5 and nanosec = 250_000_001, little endian.
        assert_eq!(payload, [0, 1, 0, 0, 5, 0, 0, 0, 0x81, 0xb2, 0xe6, 0x0e]);
        assert_eq!(kairos_interface::decode::<ClockMsg>(&payload), Ok(message));
    }
}
