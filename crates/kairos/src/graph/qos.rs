//! Quality of service for intra-process topics: how many messages a subscription keeps
//! and whether late subscribers get the last message.
//!
//! A full queue drops its oldest message and counts it: every subscription can account for
//! every message published to it (received = delivered + dropped + still queued).

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
    /// A transient-local publisher leaves its last message on the topic; a transient-local
    /// subscription created later receives it first (`/clock`, parameters).
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

/// The quality of service of a publisher or subscription: how many messages its queue
/// keeps, whether late subscribers get the last message, and whether a transport may
/// lose messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    /// How many messages a subscription queue keeps.
    pub history: History,
    /// Whether the topic keeps its last message for later subscriptions.
    pub durability: Durability,
    /// Whether a transport beyond the process may lose messages.
    pub reliability: Reliability,
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
}

impl Qos {
    /// The most messages a subscription queue may hold (4 Mi; 32 MiB of slots).
    pub const MAX_DEPTH: usize = 1 << 22;

    /// Keep the newest `depth` messages, volatile (rclcpp's `KeepLast(depth)`).
    pub const fn keep_last(depth: usize) -> Self {
        Self {
            history: History::KeepLast(depth),
            durability: Durability::Volatile,
            reliability: Reliability::Reliable,
        }
    }

    /// Keep every message up to `bound`, volatile.
    pub const fn keep_all(bound: usize) -> Self {
        Self {
            history: History::KeepAll { bound },
            durability: Durability::Volatile,
            reliability: Reliability::Reliable,
        }
    }

    /// The same history, transient local: the topic keeps the last message for later subscriptions.
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

    /// Whether the durability is transient local.
    pub fn is_transient_local(&self) -> bool {
        self.durability == Durability::TransientLocal
    }

    /// The queue capacity this QoS asks for.
    pub fn capacity(&self) -> Result<usize, QosError> {
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

impl Default for Qos {
    /// Keep the last 10 messages, volatile (the ROS 2 default).
    fn default() -> Self {
        Self::keep_last(10)
    }
}
