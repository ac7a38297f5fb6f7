//! Quality of service: how many messages a subscription keeps, whether late subscribers
//! get the last message, whether a transport may lose messages, and the timing contracts
//! of ROS 2 (deadline, lifespan, liveliness) that `graph::qos_event` watches.
//!
//! A full queue drops its oldest message and counts it: every subscription can account for
//! every message published to it (received = delivered + dropped + expired + still queued).
//!
//! Compatibility follows ROS 2's rules ([`Qos::check_compatible`]): a publisher must offer
//! at least what a subscription requests. An incompatible pair is reported on both sides
//! (an event, a count, a warning in the log) and still delivers: across processes Zenoh
//! matches on the key alone, as rmw_zenoh does, and in the process kairos keeps one rule.

use crate::time::Duration;

/// How many messages a subscription queue keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// The newest `depth` messages.
    KeepLast(usize),
    /// Every message, up to `bound` (then the oldest is dropped and counted).
    KeepAll {
        /// The most messages kept.
        bound: usize,
    },
}

/// Whether a topic keeps its last message for subscriptions created later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Only messages published after a subscription exists reach it (the default).
    Volatile,
    /// A transient-local publisher keeps its last `depth` messages; a transient-local
    /// subscription created later receives them first, oldest first, from each such
    /// publisher (`/clock`, `/tf_static`, parameters).
    TransientLocal,
}

/// Whether a transport may lose messages on the way to another process. In the process
/// every message reaches every queue (a full queue still drops its oldest, counted), so
/// this only matters beyond it: a reliable publisher retransmits, and blocks rather than
/// drop when it also keeps all; a best-effort one sends once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reliability {
    /// Every message is retransmitted until it arrives (ROS 2's default).
    #[default]
    Reliable,
    /// Each message is sent once; a lost one stays lost.
    BestEffort,
}

/// How a publisher shows it is alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Liveliness {
    /// Alive while it exists (and, across processes, while its process is reachable).
    #[default]
    Automatic,
    /// Alive only while it publishes or calls
    /// [`Publisher::assert_liveliness`](super::Publisher::assert_liveliness) at least once
    /// per lease duration.
    ManualByTopic,
}

/// The quality of service of a publisher or subscription: how many messages its queue
/// keeps, whether late subscribers get the last message, whether a transport may
/// lose messages, and its timing contracts (`None`: infinite, ROS 2's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    /// How many messages a subscription queue keeps.
    pub history: History,
    /// Whether the topic keeps its last message for later subscriptions.
    pub durability: Durability,
    /// Whether a transport beyond the process may lose messages.
    pub reliability: Reliability,
    /// The longest time between two messages: a publisher offers it, a subscription
    /// requests it; each period that passes without one is a deadline missed.
    pub deadline: Option<Duration>,
    /// How long a publisher's message stays valid: a message older than this when its
    /// subscription would take it is dropped and counted as expired.
    pub lifespan: Option<Duration>,
    /// How a publisher shows it is alive.
    pub liveliness: Liveliness,
    /// How long a publisher stays alive without showing it (for
    /// [`Liveliness::ManualByTopic`]).
    pub liveliness_lease: Option<Duration>,
}

/// A QoS policy, as ROS 2 names them in incompatible-QoS events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QosPolicy {
    /// Reliable or best effort.
    Reliability,
    /// Volatile or transient local.
    Durability,
    /// The deadline.
    Deadline,
    /// The liveliness kind or its lease duration.
    Liveliness,
}

impl QosPolicy {
    /// ROS 2's name of the policy (`RELIABILITY`, as rclcpp prints it).
    pub fn as_str(self) -> &'static str {
        match self {
            QosPolicy::Reliability => "RELIABILITY",
            QosPolicy::Durability => "DURABILITY",
            QosPolicy::Deadline => "DEADLINE",
            QosPolicy::Liveliness => "LIVELINESS",
        }
    }
}

impl std::fmt::Display for QosPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a publisher's QoS does not give what a subscription asks for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{policy}: {reason}")]
pub struct Incompatibility {
    /// The first policy found incompatible.
    pub policy: QosPolicy,
    /// What differs, and how to make them match.
    pub reason: String,
}

/// A QoS that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QosError {
    /// `keep_last(0)`.
    #[error("a keep-last history needs a depth of at least 1, got 0")]
    ZeroDepth,
    /// `keep_all(0)`.
    #[error("a keep-all history needs a bound of at least 1, got 0")]
    ZeroBound,
    /// A depth or bound above [`Qos::MAX_DEPTH`].
    #[error(
        "a queue of {requested} messages is more than the {max} a subscription may keep (its slots are allocated up front); use a smaller depth or bound"
    )]
    TooDeep {
        /// The depth or bound asked for.
        requested: usize,
        /// The most allowed.
        max: usize,
    },
    /// A deadline, lifespan or lease duration of zero or less.
    #[error("a {policy} of {value} is not a duration; give a positive one, or None for infinite")]
    NotPositive {
        /// `deadline`, `lifespan` or `liveliness lease`.
        policy: &'static str,
        /// The value given.
        value: Duration,
    },
}

impl Qos {
    /// The most messages a subscription queue may hold (4 Mi; 32 MiB of slots).
    pub const MAX_DEPTH: usize = 1 << 22;

    /// Keep the newest `depth` messages, volatile (rclcpp's `KeepLast(depth)`).
    pub const fn keep_last(depth: usize) -> Self {
        Self::with_history(History::KeepLast(depth))
    }

    /// Keep every message up to `bound`, volatile.
    pub const fn keep_all(bound: usize) -> Self {
        Self::with_history(History::KeepAll { bound })
    }

    const fn with_history(history: History) -> Self {
        Self {
            history,
            durability: Durability::Volatile,
            reliability: Reliability::Reliable,
            deadline: None,
            lifespan: None,
            liveliness: Liveliness::Automatic,
            liveliness_lease: None,
        }
    }

    /// The same QoS with a deadline: a publisher offers to publish, a subscription
    /// requests to receive, at least once per `period`.
    pub const fn with_deadline(self, period: Duration) -> Self {
        Self {
            deadline: Some(period),
            ..self
        }
    }

    /// The same QoS with a lifespan: a message not taken within `span` of its publish is
    /// dropped, counted as expired.
    pub const fn with_lifespan(self, span: Duration) -> Self {
        Self {
            lifespan: Some(span),
            ..self
        }
    }

    /// The same QoS with liveliness `kind` and its lease duration.
    pub const fn with_liveliness(self, kind: Liveliness, lease: Option<Duration>) -> Self {
        Self {
            liveliness: kind,
            liveliness_lease: lease,
            ..self
        }
    }

    /// The same history, transient local: the publisher keeps its last `depth` messages for
    /// later subscriptions.
    pub const fn transient_local(self) -> Self {
        Self {
            durability: Durability::TransientLocal,
            ..self
        }
    }

    /// Beyond the process, messages may be lost rather than retransmitted (sensor streams
    /// where the newest sample matters more than each one).
    pub const fn best_effort(self) -> Self {
        Self {
            reliability: Reliability::BestEffort,
            ..self
        }
    }

    /// The history depth: a keep-last depth, or a keep-all bound.
    pub const fn depth(&self) -> usize {
        match self.history {
            History::KeepLast(depth) | History::KeepAll { bound: depth } => depth,
        }
    }

    /// Whether the durability is transient local.
    pub fn is_transient_local(&self) -> bool {
        self.durability == Durability::TransientLocal
    }

    /// The queue capacity this QoS asks for (also checks its durations).
    pub fn capacity(&self) -> Result<usize, QosError> {
        for (policy, value) in [
            ("deadline", self.deadline),
            ("lifespan", self.lifespan),
            ("liveliness lease", self.liveliness_lease),
        ] {
            if let Some(value) = value.filter(|v| !v.is_positive()) {
                return Err(QosError::NotPositive { policy, value });
            }
        }
        match self.history {
            History::KeepLast(0) => Err(QosError::ZeroDepth),
            History::KeepAll { bound: 0 } => Err(QosError::ZeroBound),
            History::KeepLast(depth) | History::KeepAll { bound: depth }
                if depth > Self::MAX_DEPTH =>
            {
                Err(QosError::TooDeep {
                    requested: depth,
                    max: Self::MAX_DEPTH,
                })
            }
            History::KeepLast(depth) => Ok(depth),
            History::KeepAll { bound } => Ok(bound),
        }
    }
}

impl Qos {
    /// Whether a publisher with QoS `publisher` gives what a subscription with QoS
    /// `subscription` asks for, by ROS 2's rules (`rmw_qos_profile_check_compatible`):
    /// reliable, transient-local, a deadline, manual liveliness or a lease asked for
    /// must be offered, and a deadline or lease offered must be no longer than asked.
    ///
    /// ```
    /// use kairos::graph::{Qos, QosPolicy};
    ///
    /// let sensor = Qos::keep_last(5).best_effort();
    /// let wants_every_message = Qos::keep_last(5);
    /// let why = Qos::check_compatible(&sensor, &wants_every_message).unwrap_err();
    /// assert_eq!(why.policy, QosPolicy::Reliability);
    /// assert!(Qos::check_compatible(&wants_every_message, &sensor).is_ok());
    /// ```
    pub fn check_compatible(publisher: &Qos, subscription: &Qos) -> Result<(), Incompatibility> {
        let incompatible = |policy, reason: String| Err(Incompatibility { policy, reason });
        if publisher.reliability == Reliability::BestEffort
            && subscription.reliability == Reliability::Reliable
        {
            return incompatible(
                QosPolicy::Reliability,
                "the publisher is best effort and the subscription asks for reliable; make the subscription best effort".into(),
            );
        }
        if publisher.durability == Durability::Volatile
            && subscription.durability == Durability::TransientLocal
        {
            return incompatible(
                QosPolicy::Durability,
                "the publisher is volatile and the subscription asks for transient local; make the subscription volatile or the publisher transient local".into(),
            );
        }
        within(
            publisher.deadline,
            subscription.deadline,
            QosPolicy::Deadline,
            "deadline",
        )?;
        if publisher.liveliness < subscription.liveliness {
            return incompatible(
                QosPolicy::Liveliness,
                "the subscription asks for manual-by-topic liveliness and the publisher offers automatic".into(),
            );
        }
        within(
            publisher.liveliness_lease,
            subscription.liveliness_lease,
            QosPolicy::Liveliness,
            "liveliness lease",
        )?;
        Ok(())
    }
}

/// A duration the subscription asks for (`asked`) is offered, no longer (`None`: infinite).
fn within(
    offered: Option<Duration>,
    asked: Option<Duration>,
    policy: QosPolicy,
    what: &str,
) -> Result<(), Incompatibility> {
    let reason = match (offered, asked) {
        (None, Some(asked)) => {
            format!("the subscription asks for a {what} of {asked} and the publisher offers none")
        }
        (Some(offered), Some(asked)) if offered > asked => format!(
            "the publisher offers a {what} of {offered}, longer than the {asked} the subscription asks for"
        ),
        _ => return Ok(()),
    };
    Err(Incompatibility { policy, reason })
}

impl Default for Qos {
    /// Keep the last 10 messages, volatile (the ROS 2 default).
    fn default() -> Self {
        Self::keep_last(10)
    }
}
