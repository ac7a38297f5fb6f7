//! The kairos event schema: every event a kairos trace can hold, written once.
//!
//! The table in the `for_each_event!` macro below is the single definition. Three things
//! are generated from it, so they cannot disagree: the [`Event`] enum that the per-thread
//! buffers carry, the [`EVENT_CLASSES`] table from which the writer prints the CTF
//! metadata (and which a reader or analyzer can consult), and the typed tracepoint
//! functions in [`crate::tp`].
//!
//! Names follow ros2_tracing wherever the meaning is the same: provider `ros2`, the same
//! event names, field names and field types as ros2_tracing 4.1.0 writes them (see the
//! reference trace `shared/traces/ros2-sync-one-to-one`), so babeltrace2, Trace Compass and
//! tracetools_analysis read kairos traces as ROS 2 traces. Events ROS 2 does not have use
//! provider `kairos`. Every event about one message also carries kairos extra fields
//! `publisher_handle` (where ros2_tracing lacks it) and `seq`, the per-publisher sequence
//! number, appended after the ros2_tracing fields: tools that look fields up by name keep
//! working, and a message's stages are linked exactly by `(publisher_handle, seq)`.
//!
//! In the metadata every field name gets a leading underscore, as LTTng writes it: CTF
//! readers strip one leading underscore, so babeltrace2 prints `message`, not `_message`.

use std::fmt;

/// The clock a time value was read from, as `kairos:*` time events record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ClockKind {
    /// The monotonic clock (never jumps).
    Steady = 0,
    /// The wall clock (can be stepped by NTP or `date -s`).
    System = 1,
    /// Simulation time, advanced by a simulator.
    Sim = 2,
}

impl ClockKind {
    /// Every clock kind with the label the metadata gives it, in value order.
    pub const ALL: [(ClockKind, &'static str); 3] = [
        (ClockKind::Steady, "steady"),
        (ClockKind::System, "system"),
        (ClockKind::Sim, "sim"),
    ];
}

/// The type of one event field, as it is laid out in the trace (little-endian,
/// byte-aligned, like LTTng writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// A 64-bit unsigned integer shown in hexadecimal: handles and addresses.
    Hex64,
    /// A 64-bit unsigned integer shown in decimal: counts, depths, sequence numbers.
    U64,
    /// A 64-bit signed integer: times and durations in nanoseconds.
    I64,
    /// A 32-bit signed integer: ros2_tracing's flags (`taken`, `is_intra_process`).
    I32,
    /// A NUL-terminated UTF-8 string.
    Str,
    /// An 8-bit enumeration of [`ClockKind`] labels.
    Clock,
}

impl FieldType {
    /// The CTF 1.8 TSDL type that declares a field of this type.
    pub fn tsdl(self) -> String {
        let integer = |size: u32, signed: u8, base: u32| {
            format!(
                "integer {{ size = {size}; align = 8; signed = {signed}; encoding = none; base = {base}; }}"
            )
        };
        match self {
            FieldType::Hex64 => integer(64, 0, 16),
            FieldType::U64 => integer(64, 0, 10),
            FieldType::I64 => integer(64, 1, 10),
            FieldType::I32 => integer(32, 1, 10),
            FieldType::Str => "string".to_owned(),
            FieldType::Clock => {
                let labels: Vec<String> = ClockKind::ALL
                    .iter()
                    .map(|(kind, label)| format!("{label} = {}", *kind as u8))
                    .collect();
                format!(
                    "enum : integer {{ size = 8; align = 8; signed = 0; }} {{ {} }}",
                    labels.join(", ")
                )
            }
        }
    }
}

/// How a [`FieldType`] is taken by a tracepoint, kept in a buffer and encoded.
pub trait FieldKind {
    /// The field's type.
    const TYPE: FieldType;
    /// What the tracepoint function takes.
    type Arg<'a>;
    /// What the per-thread buffer keeps until the writer thread encodes it.
    type Stored: fmt::Debug + Clone + PartialEq + Send;
    /// Converts a tracepoint argument into its stored form (only runs when tracing is on).
    fn store(arg: Self::Arg<'_>) -> Self::Stored;
    /// Appends the field's bytes, laid out as [`FieldType::tsdl`] declares them.
    fn encode(value: &Self::Stored, out: &mut Vec<u8>);
}

/// The field kinds the schema table names.
pub mod kind {
    use super::{ClockKind, FieldKind, FieldType};

    /// See [`FieldType::Hex64`].
    #[derive(Debug)]
    pub enum Hex64 {}
    /// See [`FieldType::U64`].
    #[derive(Debug)]
    pub enum U64 {}
    /// See [`FieldType::I64`].
    #[derive(Debug)]
    pub enum I64 {}
    /// See [`FieldType::I32`].
    #[derive(Debug)]
    pub enum I32 {}
    /// See [`FieldType::Str`].
    #[derive(Debug)]
    pub enum Str {}
    /// See [`FieldType::Clock`].
    #[derive(Debug)]
    pub enum Clock {}

    macro_rules! integer_kind {
        ($kind:ident, $ty:ty) => {
            impl FieldKind for $kind {
                const TYPE: FieldType = FieldType::$kind;
                type Arg<'a> = $ty;
                type Stored = $ty;
                #[inline]
                fn store(arg: $ty) -> $ty {
                    arg
                }
                fn encode(value: &$ty, out: &mut Vec<u8>) {
                    out.extend_from_slice(&value.to_le_bytes());
                }
            }
        };
    }
    integer_kind!(Hex64, u64);
    integer_kind!(U64, u64);
    integer_kind!(I64, i64);
    integer_kind!(I32, i32);

    impl FieldKind for Str {
        const TYPE: FieldType = FieldType::Str;
        type Arg<'a> = &'a str;
        type Stored = Box<str>;
        fn store(arg: &str) -> Box<str> {
            // A CTF string ends at its first NUL: an embedded NUL would cut the field and
            // shift every later field, so it is replaced, visibly.
            if arg.contains('\0') {
                arg.replace('\0', "\u{FFFD}").into_boxed_str()
            } else {
                arg.into()
            }
        }
        fn encode(value: &Box<str>, out: &mut Vec<u8>) {
            out.extend_from_slice(value.as_bytes());
            out.push(0);
        }
    }

    impl FieldKind for Clock {
        const TYPE: FieldType = FieldType::Clock;
        type Arg<'a> = ClockKind;
        type Stored = ClockKind;
        #[inline]
        fn store(arg: ClockKind) -> ClockKind {
            arg
        }
        fn encode(value: &ClockKind, out: &mut Vec<u8>) {
            out.push(*value as u8);
        }
    }
}

/// One field of an event class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldClass {
    /// The field name as tools print it (the metadata adds a leading underscore).
    pub name: &'static str,
    /// How the field is laid out.
    pub ty: FieldType,
}

/// One event class: what the metadata declares for an event id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventClass {
    /// The id written in each event header.
    pub id: EventId,
    /// The full name, `provider:event`, e.g. `ros2:rcl_publish`.
    pub name: &'static str,
    /// The payload fields, in the order they are written.
    pub fields: &'static [FieldClass],
}

/// Calls `$callback!` with the schema table: one entry per event, as
/// `provider::name => Variant { field: Kind, ... }`, ids given by the order.
macro_rules! for_each_event {
    ($callback:ident) => {
        $callback! {
            // ---- ros2: object creation (ros2_tracing 4.1.0 names and fields) ----
            /// A context (the process's runtime) was initialized.
            ros2::rcl_init => RclInit { context_handle: Hex64, version: Str },
            /// A node was created.
            ros2::rcl_node_init => RclNodeInit {
                node_handle: Hex64, rmw_handle: Hex64, node_name: Str, namespace: Str,
            },
            /// A publisher was created on `topic_name` with a queue of `queue_depth`.
            ros2::rcl_publisher_init => RclPublisherInit {
                publisher_handle: Hex64, node_handle: Hex64, rmw_publisher_handle: Hex64,
                topic_name: Str, queue_depth: U64,
            },
            /// A subscription was created on `topic_name` with a queue of `queue_depth`.
            ros2::rcl_subscription_init => RclSubscriptionInit {
                subscription_handle: Hex64, node_handle: Hex64, rmw_subscription_handle: Hex64,
                topic_name: Str, queue_depth: U64,
            },
            /// Links the subscription handle to the subscription object.
            ros2::rclcpp_subscription_init => RclcppSubscriptionInit {
                subscription_handle: Hex64, subscription: Hex64,
            },
            /// A callback was attached to a subscription.
            ros2::rclcpp_subscription_callback_added => RclcppSubscriptionCallbackAdded {
                subscription: Hex64, callback: Hex64,
            },
            /// A service server was created.
            ros2::rcl_service_init => RclServiceInit {
                service_handle: Hex64, node_handle: Hex64, rmw_service_handle: Hex64,
                service_name: Str,
            },
            /// A callback was attached to a service server.
            ros2::rclcpp_service_callback_added => RclcppServiceCallbackAdded {
                service_handle: Hex64, callback: Hex64,
            },
            /// A service client was created.
            ros2::rcl_client_init => RclClientInit {
                client_handle: Hex64, node_handle: Hex64, rmw_client_handle: Hex64,
                service_name: Str,
            },
            /// A timer was created with a period in nanoseconds.
            ros2::rcl_timer_init => RclTimerInit { timer_handle: Hex64, period: I64 },
            /// A callback was attached to a timer.
            ros2::rclcpp_timer_callback_added => RclcppTimerCallbackAdded {
                timer_handle: Hex64, callback: Hex64,
            },
            /// A timer belongs to a node.
            ros2::rclcpp_timer_link_node => RclcppTimerLinkNode {
                timer_handle: Hex64, node_handle: Hex64,
            },
            /// A callback's readable name (`symbol`).
            ros2::rclcpp_callback_register => RclcppCallbackRegister {
                callback: Hex64, symbol: Str,
            },
            // ---- ros2: a message's life ----
            /// User code published `message` (kairos extras: `publisher_handle`, `seq`).
            ros2::rclcpp_publish => RclcppPublish {
                message: Hex64, publisher_handle: Hex64, seq: U64,
            },
            /// The publisher handed `message` on (kairos extra: `seq`).
            ros2::rcl_publish => RclPublish {
                publisher_handle: Hex64, message: Hex64, seq: U64,
            },
            /// `message` left the process-level publisher for transport (kairos extras:
            /// `publisher_handle`, `seq`).
            ros2::rmw_publish => RmwPublish {
                message: Hex64, publisher_handle: Hex64, seq: U64,
            },
            /// A subscription took `message` from its queue; `taken` is 0 when it was empty
            /// (kairos extras: the taken message's `publisher_handle` and `seq`).
            ros2::rmw_take => RmwTake {
                rmw_subscription_handle: Hex64, message: Hex64, source_timestamp: I64,
                taken: I32, publisher_handle: Hex64, seq: U64,
            },
            /// The take reached the subscription layer (kairos extras as `rmw_take`).
            ros2::rcl_take => RclTake { message: Hex64, publisher_handle: Hex64, seq: U64 },
            /// The take reached user-facing code (kairos extras as `rmw_take`).
            ros2::rclcpp_take => RclcppTake { message: Hex64, publisher_handle: Hex64, seq: U64 },
            /// A callback started; `is_intra_process` is 1 when its message never left the
            /// process.
            ros2::callback_start => CallbackStart { callback: Hex64, is_intra_process: I32 },
            /// A callback returned.
            ros2::callback_end => CallbackEnd { callback: Hex64 },
            // ---- ros2: executor ----
            /// An executor starts waiting for work, for at most `timeout` ns (-1: forever)
            /// (kairos extra: `executor`).
            ros2::rclcpp_executor_wait_for_work => RclcppExecutorWaitForWork {
                timeout: I64, executor: Hex64,
            },
            /// An executor dispatches the entity `handle` (kairos extra: `executor`).
            ros2::rclcpp_executor_execute => RclcppExecutorExecute { handle: Hex64, executor: Hex64 },
            // ---- kairos: queues ----
            /// A message was put in a subscription's queue; `queue_depth` is the depth after.
            kairos::message_enqueue => MessageEnqueue {
                subscription_handle: Hex64, publisher_handle: Hex64, seq: U64, queue_depth: U64,
            },
            /// A message was dropped from a subscription's queue (overflow or shutdown);
            /// `queue_depth` is the depth after.
            kairos::message_drop => MessageDrop {
                subscription_handle: Hex64, publisher_handle: Hex64, seq: U64, queue_depth: U64,
            },
            /// `count` messages of a publisher in another process, from `first_seq` on,
            /// never reached the subscription (a gap in the publisher's sequence numbers
            /// seen on arrival: lost on the network or dropped by its congestion control).
            kairos::message_loss => MessageLoss {
                subscription_handle: Hex64, publisher_handle: Hex64, first_seq: U64, count: U64,
            },
            /// A QoS event of the publisher or subscription `handle`: `event` is ROS 2's
            /// name for it (`requested_deadline_missed`, `offered_deadline_missed`,
            /// `liveliness_lost`, `liveliness_changed`, `requested_incompatible_qos`,
            /// `offered_incompatible_qos`, `message_lost`, `message_expired`,
            /// `publication_matched`, `subscription_matched`), `total_count` its count so
            /// far (for `liveliness_changed`: the alive count), `change` what this event
            /// changed it by (for the matched events: the change of the current count).
            kairos::qos_event => QosEvent {
                handle: Hex64, event: Str, total_count: U64, change: I64,
            },
            // ---- kairos: actions (ros2_tracing has none) ----
            /// An action server for `action_name` was created on the node `node_handle`.
            kairos::action_server_init => ActionServerInit {
                server_handle: Hex64, node_handle: Hex64, action_name: Str,
            },
            /// An action client for `action_name` was created on the node `node_handle`.
            kairos::action_client_init => ActionClientInit {
                client_handle: Hex64, node_handle: Hex64, action_name: Str,
            },
            /// A step in the life of goal `goal_id` (its UUID as text) at the action server
            /// or client `handle`. `event` names the step: at a client `sent`, `accepted`,
            /// `rejected`, `feedback`, `cancel_sent`, `canceling`, `cancel_refused`,
            /// `result`; at a server `accepted`, `rejected`, `executing`, `feedback`,
            /// `canceling`, `succeeded`, `canceled`, `aborted`, `expired`. `status` is the
            /// goal's `action_msgs/GoalStatus` code after the step (0 when unknown).
            kairos::goal => Goal { handle: Hex64, goal_id: Str, event: Str, status: I32 },
            // ---- kairos: security ----
            /// The access rules of this process's enclave refused an entity: `kind` is
            /// `publisher`, `subscription`, `service` or `client`, `name` the topic or
            /// service, `key` the Zenoh key expression it would use, `enclave` the
            /// process's enclave, and `rule` the id of the deny rule that covers it (empty
            /// when no allow rule does: default deny). `refused` is 1 when the program got
            /// an error, 0 for the runtime's own entities, which are declared anyway and
            /// whose traffic the network drops.
            kairos::access_denied => AccessDenied {
                kind: Str, name: Str, key: Str, enclave: Str, rule: Str, refused: I32,
            },
            // ---- kairos: executor ----
            /// An executor's wait ended with `ready` entities ready to run.
            kairos::executor_wake => ExecutorWake { executor: Hex64, ready: U64 },
            // ---- kairos: time ----
            /// A timer fired: `scheduled` is when it was due, `actual` when it ran, both in
            /// ns on `clock`.
            kairos::timer_fire => TimerFire {
                timer_handle: Hex64, clock: Clock, scheduled: I64, actual: I64,
            },
            /// A sleep started, until `deadline` ns on `clock`.
            kairos::sleep_start => SleepStart { clock: Clock, deadline: I64 },
            /// A sleep ended at `woke` ns on `clock` (never before `deadline`).
            kairos::sleep_end => SleepEnd { clock: Clock, deadline: I64, woke: I64 },
            /// `clock` jumped from `before` to `after` ns.
            kairos::clock_jump => ClockJump { clock: Clock, before: I64, after: I64 },
            /// The simulator set simulation time to `time` ns.
            kairos::sim_clock_update => SimClockUpdate { time: I64 },
            /// `clock` stopped advancing at `time` ns; waits on it are stalled.
            kairos::stall => Stall { clock: Clock, time: I64 },
            /// `clock` advances again from `time` ns after `stalled_ns` of stall.
            kairos::resume => Resume { clock: Clock, time: I64, stalled_ns: I64 },
            /// A lock-step wait on the simulated clock at `time` ns gave up after its
            /// timeout with `pending` callbacks it waited for not yet run: that step was
            /// not deterministic.
            kairos::sim_settle_timeout => SimSettleTimeout { time: I64, pending: U64 },
            // ---- kairos: frames (tf2) ----
            /// A transform lookup that could wait ended: `operation` is the call
            /// (`lookup_transform`, `can_transform`, ...), `target_frame` and
            /// `source_frame` its frames, `time` the stamp asked for in ns (0: the latest),
            /// `waited` how long it waited in ns of the buffer's clock, `outcome` how it
            /// ended (`found`, `timeout`, `cancelled`, `shut_down`, `would_deadlock`,
            /// `error`), `callback` the callback it waited in (0: none).
            kairos::tf_lookup => TfLookup {
                callback: Hex64, operation: Str, target_frame: Str, source_frame: Str,
                time: I64, waited: I64, outcome: Str,
            },
            // ---- kairos: bags ----
            /// A bag player published the message recorded on `topic_name` at bag time
            /// `log_time` (ns) as message `seq` of `publisher_handle`, `late` ns after it
            /// was due (-1 when it was played at once: asked for with play next or burst,
            /// or in lock step). The message's chain starts here. A duration, not a
            /// clock reading: it needs no clock offset to compare with event times.
            kairos::bag_play => BagPlay {
                publisher_handle: Hex64, seq: U64, topic_name: Str, log_time: I64, late: I64,
            },
            /// A recorder wrote message `seq` of `publisher_handle`, received by its
            /// subscription `subscription_handle` on `topic_name`, into its bag at log
            /// time `log_time` (ns), `size` bytes of CDR.
            kairos::bag_write => BagWrite {
                subscription_handle: Hex64, publisher_handle: Hex64, seq: U64,
                topic_name: Str, log_time: I64, size: U64,
            },
            /// A recorder closed `closed_file` of its bag and went on in `opened_file`,
            /// because of `reason` (`max_bag_size`, `max_bag_duration`, or `asked`: the
            /// `split_bagfile` service).
            kairos::bag_split => BagSplit {
                closed_file: Str, opened_file: Str, reason: Str,
            },
            // ---- kairos: logging ----
            /// Logger `logger` wrote `message` at `severity` (rcutils' values: 10 debug,
            /// 20 info, 30 warn, 40 error, 50 fatal) from the callback `callback` (0:
            /// outside any callback).
            kairos::log => Log {
                callback: Hex64, logger: Str, severity: I32, message: Str,
            },
            // ---- kairos: shutdown ----
            /// One counter of one entity at shutdown, e.g. (`sub`, "/chatter", "dropped", 3).
            kairos::shutdown_report => ShutdownReport {
                handle: Hex64, name: Str, counter: Str, value: U64,
            },
        }
    };
}
pub(crate) use for_each_event;

macro_rules! define_schema {
    ($(
        $(#[doc = $doc:literal])*
        $provider:ident :: $name:ident => $variant:ident { $($field:ident : $kind:ident),* $(,)? }
    ),* $(,)?) => {
        /// The id of an event class, as written in each event header.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum EventId {
            $( $(#[doc = $doc])* $variant, )*
        }

        /// One event with its payload: what a tracepoint records and the writer encodes.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(missing_docs)]
        pub enum Event {
            $(
                $(#[doc = $doc])*
                $variant { $( $field: <kind::$kind as FieldKind>::Stored, )* },
            )*
        }

        /// Every event class, indexed by `EventId as usize`.
        pub static EVENT_CLASSES: &[EventClass] = &[
            $(
                EventClass {
                    id: EventId::$variant,
                    name: concat!(stringify!($provider), ":", stringify!($name)),
                    fields: &[
                        $( FieldClass {
                            name: stringify!($field),
                            ty: <kind::$kind as FieldKind>::TYPE,
                        }, )*
                    ],
                },
            )*
        ];

        impl Event {
            /// This event's class id.
            pub fn id(&self) -> EventId {
                match self {
                    $( Event::$variant { .. } => EventId::$variant, )*
                }
            }

            /// Appends the payload bytes, in the order [`EVENT_CLASSES`] declares.
            pub fn encode_payload(&self, out: &mut Vec<u8>) {
                match self {
                    $( Event::$variant { $($field),* } => {
                        $( <kind::$kind as FieldKind>::encode($field, out); )*
                    } )*
                }
            }
        }
    };
}

for_each_event!(define_schema);

impl EventId {
    /// This id's class.
    pub fn class(self) -> &'static EventClass {
        &EVENT_CLASSES[self as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_indexed_by_id() {
        for (index, class) in EVENT_CLASSES.iter().enumerate() {
            assert_eq!(class.id as usize, index, "{}", class.name);
        }
    }

    #[test]
    fn payload_follows_the_declared_fields() {
        let event = Event::RclPublisherInit {
            publisher_handle: 1,
            node_handle: 2,
            rmw_publisher_handle: 3,
            topic_name: "/a".into(),
            queue_depth: 10,
        };
        let mut out = Vec::new();
        event.encode_payload(&mut out);
        let mut expected = Vec::new();
        for v in [1u64, 2, 3] {
            expected.extend_from_slice(&v.to_le_bytes());
        }
        expected.extend_from_slice(b"/a\0");
        expected.extend_from_slice(&10u64.to_le_bytes());
        assert_eq!(out, expected);
        assert_eq!(event.id().class().name, "ros2:rcl_publisher_init");
    }

    #[test]
    fn embedded_nul_cannot_cut_a_string_field() {
        let stored = <kind::Str as FieldKind>::store("a\0b");
        let mut out = Vec::new();
        <kind::Str as FieldKind>::encode(&stored, &mut out);
        assert_eq!(out.iter().filter(|b| **b == 0).count(), 1);
    }
}
