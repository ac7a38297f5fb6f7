//! The two forms a `metadata` file takes: plain TSDL text, or TSDL split into packets
//! that each start with a 37-byte header (magic 0x75D11D57, uuid, checksum, content
//! and packet sizes in bits, compression/encryption/checksum schemes, version).

use super::MetadataError;

const MAGIC: u32 = 0x75D1_1D57;
const HEADER_BYTES: usize = 37;

/// The TSDL text of a metadata file and whether it came in packets.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataText {
    /// The TSDL text, packets joined.
    pub text: String,
    /// Whether the file held the text in metadata packets (as LTTng writes it) rather than plain.
    pub packetized: bool,
}

/// Extracts the TSDL text from the bytes of a metadata file. An error in the packet
/// framing has no line (`line` is `None`) and names the packet's byte offset in its message.
pub fn read_metadata_text(bytes: &[u8]) -> Result<MetadataText, MetadataError> {
    let Some(first) = bytes.get(..4) else {
        return plain(bytes);
    };
    let first = [first[0], first[1], first[2], first[3]];
    let little = if u32::from_le_bytes(first) == MAGIC {
        true
    } else if u32::from_be_bytes(first) == MAGIC {
        false
    } else {
        return plain(bytes);
    };
    let u32_at = |at: usize| {
        let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let mut text = Vec::new();
    let mut offset = 0usize;
    while offset < bytes.len() {
        let bad = |what: String| {
            MetadataError::whole(format!("metadata packet at byte {offset}: {what}"))
        };
        if bytes.len() - offset < HEADER_BYTES {
            return Err(bad(format!(
                "expected a {HEADER_BYTES}-byte packet header, found {} bytes",
                bytes.len() - offset
            )));
        }
        if u32_at(offset) != MAGIC {
            return Err(bad(format!("expected magic 0x{MAGIC:08X}")));
        }
        let content_bits = u32_at(offset + 24) as usize;
        let packet_bits = u32_at(offset + 28) as usize;
        let (compression, encryption) = (bytes[offset + 32], bytes[offset + 33]);
        if compression != 0 || encryption != 0 {
            return Err(bad(
                "compressed or encrypted metadata is not supported".into()
            ));
        }
        if content_bits % 8 != 0
            || packet_bits % 8 != 0
            || content_bits < HEADER_BYTES * 8
            || content_bits > packet_bits
        {
            return Err(bad(format!(
                "content size {content_bits} bits / packet size {packet_bits} bits are inconsistent"
            )));
        }
        let (content, packet) = (content_bits / 8, packet_bits / 8);
        if packet > bytes.len() - offset {
            return Err(bad(format!(
                "packet size {packet} bytes runs past the end of the file ({} bytes left)",
                bytes.len() - offset
            )));
        }
        text.extend_from_slice(&bytes[offset + HEADER_BYTES..offset + content]);
        offset += packet;
    }
    Ok(MetadataText {
        text: into_text(text),
        packetized: true,
    })
}

fn plain(bytes: &[u8]) -> Result<MetadataText, MetadataError> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]);
    if !head.trim_start().starts_with("/* CTF") {
        return Err(MetadataError::new(
            1,
            "neither packetized metadata (magic 0x75D11D57) nor TSDL text starting with `/* CTF`",
        ));
    }
    Ok(MetadataText {
        text: into_text(bytes.to_vec()),
        packetized: false,
    })
}

fn into_text(mut bytes: Vec<u8>) -> String {
    // Packets may be zero-padded; the NULs are not part of the TSDL.
    bytes.retain(|&b| b != 0);
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(body: &str, pad: usize) -> Vec<u8> {
        let content = HEADER_BYTES + body.len();
        let total = content + pad;
        let mut p = Vec::new();
        p.extend_from_slice(&MAGIC.to_le_bytes());
        p.extend_from_slice(&[0; 16]);
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&((content * 8) as u32).to_le_bytes());
        p.extend_from_slice(&((total * 8) as u32).to_le_bytes());
        p.extend_from_slice(&[0, 0, 0, 1, 8]);
        p.extend_from_slice(body.as_bytes());
        p.resize(total, 0);
        p
    }

    #[test]
    fn packets_are_concatenated() {
        let mut bytes = packet("/* CTF 1.8 */ trace {", 5);
        bytes.extend(packet(" major = 1; };", 0));
        let md = read_metadata_text(&bytes).unwrap();
        assert!(md.packetized);
        assert_eq!(md.text, "/* CTF 1.8 */ trace { major = 1; };");
    }

    #[test]
    fn a_packet_size_past_the_end_is_an_error() {
        let mut bytes = packet("/* CTF 1.8 */", 0);
        bytes[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = read_metadata_text(&bytes).unwrap_err();
        assert!(err.message.contains("inconsistent") || err.message.contains("past the end"));
    }

    #[test]
    fn text_without_the_ctf_comment_is_rejected() {
        assert!(read_metadata_text(b"hello").is_err());
    }
}
