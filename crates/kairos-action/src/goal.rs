//! Goals: their ids, their status and the state machine that moves it.

use kairos::graph::GoalUuid;
use std::fmt;

/// A goal's id: a random 128-bit UUID, made by the client that sends the goal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoalId(pub GoalUuid);

impl GoalId {
    /// A fresh random id (UUID version 4, as rclcpp and rclpy make them).
    pub fn random() -> Self {
        let mut bytes = fastrand::u128(..).to_le_bytes();
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        GoalId(bytes)
    }

    /// The all-zero id (`CancelGoal`'s "every goal").
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 16]
    }
}

impl fmt::Display for GoalId {
    /// The canonical UUID text, `8-4-4-4-12` hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, byte) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for GoalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GoalId({self})")
    }
}

/// A goal's status (`action_msgs/msg/GoalStatus`'s codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum GoalStatus {
    /// Not known (a status the server does not report).
    Unknown = 0,
    /// Accepted, waiting to execute.
    Accepted = 1,
    /// Executing.
    Executing = 2,
    /// A cancel was accepted; the goal is winding down.
    Canceling = 3,
    /// Ended: reached.
    Succeeded = 4,
    /// Ended: canceled.
    Canceled = 5,
    /// Ended: the server gave up.
    Aborted = 6,
}

impl GoalStatus {
    /// The status of `code`; unknown codes are [`GoalStatus::Unknown`].
    pub fn from_code(code: i8) -> Self {
        match code {
            1 => Self::Accepted,
            2 => Self::Executing,
            3 => Self::Canceling,
            4 => Self::Succeeded,
            5 => Self::Canceled,
            6 => Self::Aborted,
            _ => Self::Unknown,
        }
    }

    /// Its `action_msgs/msg/GoalStatus` code.
    pub fn code(self) -> i8 {
        self as i8
    }

    /// Whether the goal has ended (succeeded, canceled or aborted).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Canceled | Self::Aborted)
    }

    /// Whether the state machine allows going from `self` to `to` (ROS 2's actions design:
    /// a goal executes, may be canceled while accepted or executing, and ends once; a goal
    /// may also be aborted before it starts executing).
    pub fn can_become(self, to: GoalStatus) -> bool {
        use GoalStatus::*;
        matches!(
            (self, to),
            (Accepted, Executing | Canceling | Aborted)
                | (Executing, Canceling | Succeeded | Aborted)
                | (Canceling, Canceled | Succeeded | Aborted)
        )
    }
}

/// A server's answer to a new goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoalResponse {
    /// Refuse it.
    Reject,
    /// Accept it and mark it executing at once.
    AcceptAndExecute,
    /// Accept it; the server marks it executing later ([`crate::ServerGoalHandle::execute`]).
    AcceptAndDefer,
}

/// A server's answer to a cancel request for one goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelResponse {
    /// Keep the goal going.
    Reject,
    /// Cancel it: the goal becomes canceling, and its owner ends it.
    Accept,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_ends_once_and_never_comes_back() {
        use GoalStatus::*;
        let all = [
            Unknown, Accepted, Executing, Canceling, Succeeded, Canceled, Aborted,
        ];
        for from in all {
            for to in all {
                if from.is_terminal() || from == Unknown {
                    assert!(!from.can_become(to), "{from:?} -> {to:?}");
                }
                if to == Accepted || to == Unknown {
                    assert!(!from.can_become(to), "{from:?} -> {to:?}");
                }
            }
            assert_eq!(GoalStatus::from_code(from.code()), from);
        }
        assert!(Executing.can_become(Succeeded) && Canceling.can_become(Canceled));
        assert!(
            !Executing.can_become(Canceled),
            "a cancel is accepted first"
        );
    }

    #[test]
    fn ids_are_random_version_4_uuids_printed_canonically() {
        let (a, b) = (GoalId::random(), GoalId::random());
        assert_ne!(a, b);
        let text = a.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(&text[14..15], "4", "version 4: {text}");
        assert!(GoalId([0; 16]).is_zero() && !a.is_zero());
    }
}
