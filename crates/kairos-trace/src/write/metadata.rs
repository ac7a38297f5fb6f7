//! The plain-text CTF 1.8 metadata (TSDL) of a kairos trace.
//!
//! Layout as LTTng-UST 2.x writes it for a ROS 2 trace, so tools that recognize LTTng-UST
//! traces (Trace Compass's LTTng UST and ROS 2 analyses) take kairos traces for one: the
//! `env` says `domain = "ust"` and `tracer_name = "lttng-ust"`, and `kairos_writer` says
//! which program really wrote it.

use crate::schema::EVENT_CLASSES;
use std::fmt::Write;

/// What the metadata says about one trace.
#[derive(Debug, Clone)]
pub(crate) struct TraceInfo {
    pub(crate) uuid: [u8; 16],
    pub(crate) clock_uuid: [u8; 16],
    /// The clock's name and description, and the Unix-epoch time of its zero in ns.
    pub(crate) clock_name: String,
    pub(crate) clock_description: String,
    pub(crate) clock_offset_ns: i64,
    pub(crate) hostname: String,
    pub(crate) procname: String,
}

/// The canonical 8-4-4-4-12 form of a UUID.
pub(crate) fn format_uuid(uuid: &[u8; 16]) -> String {
    let hex: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Escapes a value for a TSDL string literal.
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const PREAMBLE: &str = r#"/* CTF 1.8 */

typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
"#;

/// The stream's types, mapped onto the clock named `CLOCK`.
const STREAM: &str = r#"
typealias integer {
	size = 32; align = 8; signed = false;
	map = clock.CLOCK.value;
} := uint32_clock_monotonic_t;

typealias integer {
	size = 64; align = 8; signed = false;
	map = clock.CLOCK.value;
} := uint64_clock_monotonic_t;

struct packet_context {
	uint64_clock_monotonic_t timestamp_begin;
	uint64_clock_monotonic_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	uint64_t packet_seq_num;
	unsigned long events_discarded;
	uint32_t cpu_id;
};

struct event_header_large {
	enum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;
	variant <id> {
		struct {
			uint32_clock_monotonic_t timestamp;
		} compact;
		struct {
			uint32_t id;
			uint64_clock_monotonic_t timestamp;
		} extended;
	} v;
} align(8);

stream {
	id = 0;
	event.header := struct event_header_large;
	packet.context := struct packet_context;
	event.context := struct {
		integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vtid;
		integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;
		integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17];
	};
};
"#;

/// The whole metadata text for `info`, declaring every event of the schema.
pub(crate) fn tsdl(info: &TraceInfo) -> String {
    let mut out = String::from(PREAMBLE);
    // `write!` into a String cannot fail.
    let _ = write!(
        out,
        r#"
trace {{
	major = 1;
	minor = 8;
	uuid = "{uuid}";
	byte_order = le;
	packet.header := struct {{
		uint32_t magic;
		uint8_t  uuid[16];
		uint32_t stream_id;
		uint64_t stream_instance_id;
	}};
}};

env {{
	domain = "ust";
	tracer_name = "lttng-ust";
	tracer_major = 2;
	tracer_minor = 13;
	tracer_patchlevel = 0;
	tracer_buffering_scheme = "pid";
	architecture_bit_width = 64;
	hostname = {hostname};
	procname = {procname};
	kairos_writer = "kairos-trace {version}";
}};

clock {{
	name = "{clock_name}";
	uuid = "{clock_uuid}";
	description = {clock_description};
	freq = 1000000000; /* Frequency, in Hz */
	/* clock value offset from Epoch is: offset * (1/freq) */
	offset = {offset};
}};
"#,
        uuid = format_uuid(&info.uuid),
        hostname = quoted(&info.hostname),
        procname = quoted(&info.procname),
        version = env!("CARGO_PKG_VERSION"),
        clock_uuid = format_uuid(&info.clock_uuid),
        clock_name = info.clock_name,
        clock_description = quoted(&info.clock_description),
        offset = info.clock_offset_ns,
    );
    out.push_str(&STREAM.replace("CLOCK", &info.clock_name));
    for class in EVENT_CLASSES {
        let _ = write!(
            out,
            "\nevent {{\n\tname = \"{}\";\n\tid = {};\n\tstream_id = 0;\n\tloglevel = 13;\n\tfields := struct {{\n",
            class.name, class.id as u16
        );
        for field in class.fields {
            let _ = writeln!(out, "\t\t{} _{};", field.ty.tsdl(), field.name);
        }
        out.push_str("\t};\n};\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_formatted_canonically() {
        let uuid = [
            0x8c, 0x53, 0x5f, 0x0e, 0xd7, 0x13, 0x42, 0xbc, 0x80, 0x50, 0xb2, 0x07, 0xc5, 0x3a,
            0x86, 0xa5,
        ];
        assert_eq!(format_uuid(&uuid), "8c535f0e-d713-42bc-8050-b207c53a86a5");
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c?\"");
    }
}
