//! One line of text per event, in the format of babeltrace2's `pretty` sink with
//! `--clock-seconds --no-delta`, so the two can be compared line by line:
//! `[secs.nanos] host name: { packet context }, { stream context }, { context }, { payload }`,
//! the packet context without the fields babeltrace2 keeps as packet properties.

use std::fmt::Write;

use super::event::Event;
use super::metadata::types::{EnumType, FieldType, IntType};
use super::value::Value;

/// Packet-context fields that describe the packet itself: babeltrace2 turns them into
/// packet properties and prints every other packet-context field.
const RESERVED_PACKET_FIELDS: [&str; 6] = [
    "timestamp_begin",
    "timestamp_end",
    "content_size",
    "packet_size",
    "packet_seq_num",
    "events_discarded",
];

/// Nanoseconds since the epoch as `seconds.nanoseconds`.
pub fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    format!("{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000)
}

/// Appends the event's line, without a newline, to `out`.
///
/// As babeltrace2 prints it: no timestamp when the event's stream class has no clock,
/// and `name: ` (with its space) before the fields, even when there are none.
pub fn write_event(out: &mut String, ev: &Event) {
    if ev.trace.clock_of(ev.stream_class).is_some() {
        out.push('[');
        out.push_str(&seconds(ev.timestamp));
        out.push_str("] ");
    }
    if let Some(label) = &ev.trace.label {
        out.push_str(label);
        out.push(' ');
    }
    out.push_str(ev.name());
    out.push_str(": ");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(", ");
        }
        first = false;
    };
    let sc = &ev.trace.metadata.streams[ev.stream_class];
    match (sc.packet_context.as_ref(), ev.packet_context.as_deref()) {
        (Some(FieldType::Struct(st)), Some(Value::Struct(vals))) => {
            let shown: Vec<_> = st
                .fields
                .iter()
                .zip(vals)
                .filter(|(f, _)| !RESERVED_PACKET_FIELDS.contains(&&*f.name))
                .collect();
            if !shown.is_empty() {
                sep(out);
                out.push_str("{ ");
                for (i, (f, v)) in shown.into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&f.name);
                    out.push_str(" = ");
                    write_value(out, &f.ty, v);
                }
                out.push_str(" }");
            }
        }
        _ => {
            if let Some(cpu) = ev.cpu_id {
                sep(out);
                let _ = write!(out, "{{ cpu_id = {cpu} }}");
            }
        }
    }
    for (ty, val) in [
        (sc.event_context.as_ref(), ev.stream_context.as_ref()),
        (ev.class.context.as_ref(), ev.context.as_ref()),
        (ev.class.payload.as_ref(), ev.payload.as_ref()),
    ] {
        if let (Some(ty), Some(val)) = (ty, val) {
            sep(out);
            write_value(out, ty, val);
        }
    }
}

/// Appends a value as babeltrace2 prints it.
pub fn write_value(out: &mut String, ty: &FieldType, val: &Value) {
    match (ty, val) {
        (FieldType::Struct(st), Value::Struct(vals)) => {
            if vals.is_empty() {
                out.push_str("{ }");
                return;
            }
            out.push_str("{ ");
            for (i, (f, v)) in st.fields.iter().zip(vals).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&f.name);
                out.push_str(" = ");
                write_value(out, &f.ty, v);
            }
            out.push_str(" }");
        }
        (FieldType::Variant(var), Value::Variant(i, inner)) => {
            out.push_str("{ ");
            if let Some(opt) = var.options.get(*i) {
                write_value(out, &opt.ty, inner);
            }
            out.push_str(" }");
        }
        (FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. }, Value::Array(items)) => {
            if items.is_empty() {
                out.push_str("[ ]");
                return;
            }
            out.push_str("[ ");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "[{i}] = ");
                write_value(out, elem, v);
            }
            out.push_str(" ]");
        }
        (FieldType::Enum(e), v) => write_enum(out, e, v),
        (FieldType::Int(int), v) => write_int(out, int, v),
        (_, Value::Str(s)) => write_string(out, s),
        (_, Value::Float(f)) => out.push_str(&format_g(*f)),
        (_, Value::UInt(u)) => {
            let _ = write!(out, "{u}");
        }
        (_, Value::SInt(s)) => {
            let _ = write!(out, "{s}");
        }
        (_, other) => {
            let _ = write!(out, "{other:?}");
        }
    }
}

fn write_enum(out: &mut String, e: &EnumType, v: &Value) {
    let raw = super::decode::int_key(v);
    let labels: Vec<&str> = e.labels(raw).map(|l| &**l).collect();
    out.push_str("( ");
    match labels.as_slice() {
        [] => out.push_str("<unknown>"),
        [one] => {
            let _ = write!(out, "\"{one}\"");
        }
        many => {
            out.push_str("{ ");
            for (i, l) in many.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "\"{l}\"");
            }
            out.push_str(" }");
        }
    }
    out.push_str(" : container = ");
    write_int(out, &e.container, v);
    out.push_str(" )");
}

fn write_int(out: &mut String, int: &IntType, v: &Value) {
    let bits = match *v {
        Value::UInt(u) => u,
        Value::SInt(s) => {
            if int.base == 10 {
                let _ = write!(out, "{s}");
                return;
            }
            let mask = if int.size == 64 {
                u64::MAX
            } else {
                (1u64 << int.size) - 1
            };
            (s as u64) & mask
        }
        _ => return write_value(out, &FieldType::Str(int.encoding), v),
    };
    let _ = match int.base {
        // babeltrace2 shows the value's bits rounded up to whole hex (or octal) digits.
        16 => write!(out, "0x{:X}", bits & digit_mask(int.size, 4)),
        8 => write!(out, "0{:o}", bits & digit_mask(int.size, 3)),
        2 => write!(out, "0b{bits:0width$b}", width = int.size as usize),
        _ => write!(out, "{bits}"),
    };
}

fn digit_mask(size: u32, digit_bits: u32) -> u64 {
    let rounded = size.div_ceil(digit_bits) * digit_bits;
    if rounded >= 64 {
        u64::MAX
    } else {
        (1u64 << rounded) - 1
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '?' => out.push_str("\\?"),
            '\0' => out.push_str("\\0"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x1b' => out.push_str("\\e"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// C's `%g`: six significant digits, trailing zeros removed, exponent form for very
/// large or small magnitudes.
pub fn format_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    if !(-4..6).contains(&exp) {
        let m = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{v:.decimals$}")).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_matches_c() {
        assert_eq!(format_g(2222.0), "2222");
        assert_eq!(format_g(2.0), "2");
        assert_eq!(format_g(0.1), "0.1");
        assert_eq!(format_g(1234567.0), "1.23457e+06");
        assert_eq!(format_g(0.00001234), "1.234e-05");
        assert_eq!(format_g(-3.5), "-3.5");
        assert_eq!(format_g(100000.0), "100000");
    }

    #[test]
    fn seconds_are_zero_padded() {
        assert_eq!(seconds(1_000_000_005), "1.000000005");
        assert_eq!(seconds(-5), "-0.000000005");
    }
}
