//! Fuzzes the metadata reader: packetized or plain bytes, then the TSDL parser. Any
//! input must end in a value or an error, never a panic, a hang or a huge allocation.
#![no_main]

use kairos_trace::read::Metadata;
use kairos_trace::read::metadata::read_metadata_text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = read_metadata_text(data) {
        let _ = Metadata::parse(&text.text);
    }
    let _ = Metadata::parse(&String::from_utf8_lossy(data));
});
