//! Fuzzes the packet decoder: stream bytes decoded with the metadata of the LTTng-UST
//! hello test trace (compact event headers with variants, sequences, strings, floats,
//! big-endian integers). Any input must end in events and/or a typed error.
#![no_main]

use std::sync::LazyLock;

use kairos_trace::read::{Metadata, decode_stream_bytes};
use libfuzzer_sys::fuzz_target;

static METADATA: LazyLock<Metadata> = LazyLock::new(|| {
    Metadata::parse(include_str!("../hello-lost.tsdl")).expect("the seed metadata parses")
});

fuzz_target!(|data: &[u8]| {
    let _ = decode_stream_bytes(&METADATA, data);
});
