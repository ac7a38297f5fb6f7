//! Tracepoints: one typed function per event of the [schema](crate::schema).
//!
//! Call them from the runtime at each step they describe, e.g.
//! `kairos_trace::tp::rcl_publish(publisher, message, seq)`. Each is `#[inline]` and, while
//! no [`Session`](crate::Session) runs, costs one relaxed atomic load and a branch: the
//! arguments are not even converted (strings are copied only when tracing is on). With a
//! session running, the event is time-stamped and pushed to the calling thread's buffer
//! without taking a lock; if that buffer is full the event is counted as discarded.
//!
//! Handles are any stable `u64` that identifies the object for the life of the trace
//! (kairos uses its own ids); times are nanoseconds on the clock the event names.

use crate::schema::{Event, FieldKind, for_each_event, kind};
use crate::write;

/// True while a trace session records events: the one check every tracepoint makes.
#[inline]
pub fn enabled() -> bool {
    write::enabled()
}

/// The trace clock's reading now, in ns: what the next event would be stamped with (the
/// monotonic clock, or the session's own clock such as simulation time). For values a
/// field carries that must compare with event timestamps, such as a message's
/// `source_timestamp`.
#[inline]
pub fn timestamp() -> u64 {
    write::now_ns()
}

macro_rules! define_tracepoints {
    ($(
        $(#[doc = $doc:literal])*
        $provider:ident :: $name:ident => $variant:ident { $($field:ident : $kind:ident),* $(,)? }
    ),* $(,)?) => {
        $(
            $(#[doc = $doc])*
            #[doc = concat!("\n\nRecords `", stringify!($provider), ":", stringify!($name), "`.")]
            #[inline]
            pub fn $name($($field: <kind::$kind as FieldKind>::Arg<'_>),*) {
                if write::enabled() {
                    write::emit(Event::$variant {
                        $( $field: <kind::$kind as FieldKind>::store($field), )*
                    });
                }
            }
        )*
    };
}

for_each_event!(define_tracepoints);
