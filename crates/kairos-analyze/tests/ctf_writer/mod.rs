//! A CTF 1.8 trace written byte by byte, so a test does not depend on kairos's writer:
//! one stream, one packet, every event with an LTTng-UST-like context (`vpid`, `vtid`,
//! `procname`). The event classes are the test's own (name, fields, field types), so
//! it can lay out ros2_tracing's or kairos's events as their tracers declare them.

// Each test crate that includes this module uses the field types it needs.
#![allow(dead_code)]

use std::path::Path;

/// Field types: hex handle (u64), unsigned 64, signed 64, signed 32, string, and a
/// sequence of hex handles (with its `_<name>_length` field, as LTTng writes it).
#[derive(Clone, Copy)]
pub enum T {
    H,
    U,
    I,
    N,
    S,
    Seq,
}

/// A field's value.
pub enum V {
    U(u64),
    I(i64),
    S(&'static str),
    Seq(&'static [u64]),
}

/// An event class: its name and its fields.
pub type Class = (&'static str, &'static [(&'static str, T)]);

/// The entity events ros2_tracing's `tp_call.h` and kairos's writer declare alike (nodes,
/// publishers, subscriptions, timers and their callbacks), for a test to put before the
/// events whose layout it is about.
pub const ROS2_ENTITIES: &[Class] = &[
    (
        "ros2:rcl_node_init",
        &[
            ("node_handle", T::H),
            ("rmw_handle", T::H),
            ("node_name", T::S),
            ("namespace", T::S),
        ],
    ),
    (
        "ros2:rcl_publisher_init",
        &[
            ("publisher_handle", T::H),
            ("node_handle", T::H),
            ("rmw_publisher_handle", T::H),
            ("topic_name", T::S),
            ("queue_depth", T::U),
        ],
    ),
    (
        "ros2:rcl_subscription_init",
        &[
            ("subscription_handle", T::H),
            ("node_handle", T::H),
            ("rmw_subscription_handle", T::H),
            ("topic_name", T::S),
            ("queue_depth", T::U),
        ],
    ),
    (
        "ros2:rclcpp_subscription_init",
        &[("subscription_handle", T::H), ("subscription", T::H)],
    ),
    (
        "ros2:rclcpp_subscription_callback_added",
        &[("subscription", T::H), ("callback", T::H)],
    ),
    (
        "ros2:rclcpp_timer_callback_added",
        &[("timer_handle", T::H), ("callback", T::H)],
    ),
    (
        "ros2:rclcpp_timer_link_node",
        &[("timer_handle", T::H), ("node_handle", T::H)],
    ),
];

/// The events of one process, in the order given (timestamps must not go back).
pub struct Writer {
    classes: Vec<Class>,
    env: &'static str,
    pid: i32,
    procname: &'static str,
    bytes: Vec<u8>,
}

impl Writer {
    /// A trace of `classes` (groups, numbered in order) with the `env` block's entries
    /// (`key = value;` ...), whose events come from process `pid` named `procname`.
    pub fn new(
        classes: &[&'static [Class]],
        env: &'static str,
        pid: i32,
        procname: &'static str,
    ) -> Self {
        Self {
            classes: classes.concat(),
            env,
            pid,
            procname,
            bytes: Vec::new(),
        }
    }

    /// Appends one event at `ts` (ns after the clock's offset) on thread `tid`.
    pub fn event(&mut self, ts: u64, tid: i32, name: &str, values: &[V]) {
        let (id, (_, fields)) = self
            .classes
            .iter()
            .enumerate()
            .find(|(_, (n, _))| *n == name)
            .expect("a declared event");
        assert_eq!(fields.len(), values.len(), "{name}");
        let out = &mut self.bytes;
        out.extend((id as u32).to_le_bytes());
        out.extend(ts.to_le_bytes());
        out.extend(self.pid.to_le_bytes());
        out.extend(tid.to_le_bytes());
        out.extend(self.procname.as_bytes());
        out.push(0);
        for ((_, t), v) in fields.iter().zip(values) {
            match (t, v) {
                (T::H | T::U, V::U(u)) => out.extend(u.to_le_bytes()),
                (T::I, V::I(i)) => out.extend(i.to_le_bytes()),
                (T::N, V::I(i)) => out.extend((*i as i32).to_le_bytes()),
                (T::S, V::S(s)) => {
                    out.extend(s.as_bytes());
                    out.push(0);
                }
                (T::Seq, V::Seq(items)) => {
                    out.extend((items.len() as u64).to_le_bytes());
                    for i in *items {
                        out.extend(i.to_le_bytes());
                    }
                }
                _ => panic!("{name}: value does not match the field type"),
            }
        }
    }

    /// Writes the trace into `dir` (created): its metadata and one packet ending at
    /// `end_ts`.
    pub fn write(self, dir: &Path, end_ts: u64) {
        let mut packet = Vec::new();
        packet.extend(0xC1FC_1FC1u32.to_le_bytes());
        packet.extend(0u32.to_le_bytes());
        let bits = ((8 + 44 + self.bytes.len()) * 8) as u64;
        for v in [0u64, end_ts, bits, bits, 0] {
            packet.extend(v.to_le_bytes());
        }
        packet.extend(0u32.to_le_bytes());
        packet.extend(&self.bytes);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("metadata"), self.metadata()).unwrap();
        std::fs::write(dir.join("channel0_0"), packet).unwrap();
    }

    fn metadata(&self) -> String {
        let mut md = format!(
            "/* CTF 1.8 */\n\
             typealias integer {{ size = 32; align = 8; signed = false; }} := uint32_t;\n\
             typealias integer {{ size = 64; align = 8; signed = false; }} := uint64_t;\n\
             trace {{ major = 1; minor = 8; byte_order = le; packet.header := struct {{ uint32_t magic; uint32_t stream_id; }}; }};\n\
             env {{ {} }};\n\
             clock {{ name = \"monotonic\"; freq = 1000000000; offset = 1700000000000000000; }};\n\
             typealias integer {{ size = 64; align = 8; signed = false; map = clock.monotonic.value; }} := uint64_clock_t;\n\
             stream {{ id = 0;\n\
               packet.context := struct {{ uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end; uint64_t content_size; uint64_t packet_size; uint64_t events_discarded; uint32_t cpu_id; }};\n\
               event.header := struct {{ uint32_t id; uint64_clock_t timestamp; }};\n\
               event.context := struct {{ integer {{ size = 32; align = 8; signed = 1; }} _vpid; integer {{ size = 32; align = 8; signed = 1; }} _vtid; string _procname; }};\n\
             }};\n",
            self.env
        );
        for (id, (name, fields)) in self.classes.iter().enumerate() {
            md.push_str(&format!(
                "event {{ name = \"{name}\"; id = {id}; stream_id = 0; fields := struct {{\n"
            ));
            for (f, t) in fields.iter() {
                let int = |signed: u8, size: u8, base: u8| {
                    format!(
                        "integer {{ size = {size}; align = 8; signed = {signed}; base = {base}; }}"
                    )
                };
                match t {
                    T::H => md.push_str(&format!("  {} _{f};\n", int(0, 64, 16))),
                    T::U => md.push_str(&format!("  {} _{f};\n", int(0, 64, 10))),
                    T::I => md.push_str(&format!("  {} _{f};\n", int(1, 64, 10))),
                    T::N => md.push_str(&format!("  {} _{f};\n", int(1, 32, 10))),
                    T::S => md.push_str(&format!("  string _{f};\n")),
                    T::Seq => md.push_str(&format!(
                        "  uint64_t _{f}_length;\n  {} _{f}[ _{f}_length ];\n",
                        int(0, 64, 16)
                    )),
                }
            }
            md.push_str("}; };\n");
        }
        md
    }
}
