//! A cursor over the bits of one packet: CTF fields are bit-aligned and either byte
//! order fills a byte from a different end (little-endian from the least significant bit,
//! big-endian from the most significant).

use super::metadata::types::ByteOrder;

/// Why decoding stopped: the bit offset in the packet and what was expected there.
///
/// The reader turns it into [`ReadError::Damaged`](super::ReadError::Damaged), which adds
/// the file and the byte offset in it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("at bit {bit_offset} of the packet: expected {expected}")]
pub struct DecodeError {
    /// The bit offset in the packet where decoding stopped.
    pub bit_offset: u64,
    /// What the decoder expected to find there.
    pub expected: String,
}

/// Positions are bits from the start of the packet; `buf` may hold a window of it that
/// begins further on (at byte `base / 8`), so that alignment stays relative to the packet.
#[derive(Debug)]
pub(crate) struct Bits<'a> {
    buf: &'a [u8],
    base: u64,
    pos: u64,
    end: u64,
}

impl<'a> Bits<'a> {
    /// A cursor at bit `pos` that may not read past bit `end` (nor past `buf`).
    pub(crate) fn new(buf: &'a [u8], pos: u64, end: u64) -> Self {
        Self::window(buf, 0, pos, end)
    }

    /// A cursor over `buf`, which holds the packet's bytes from byte `first` on, at bit
    /// `pos` (`>= first * 8`) of the packet; it may not read past bit `end` nor past `buf`.
    pub(crate) fn window(buf: &'a [u8], first: u64, pos: u64, end: u64) -> Self {
        let base = first * 8;
        debug_assert!(pos >= base);
        let end = end.min(base + buf.len() as u64 * 8);
        Self {
            buf,
            base,
            pos,
            end,
        }
    }

    /// The index in `buf` of the byte holding the cursor's bit.
    #[inline]
    fn byte(&self) -> usize {
        ((self.pos - self.base) / 8) as usize
    }

    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    pub(crate) fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.pos)
    }

    pub(crate) fn error(&self, expected: impl Into<String>) -> DecodeError {
        DecodeError {
            bit_offset: self.pos,
            expected: expected.into(),
        }
    }

    fn need(&self, bits: u64, what: &str) -> Result<(), DecodeError> {
        if self.remaining() < bits {
            return Err(self.error(format!(
                "{what} ({bits} bits), but only {} bits are left in the packet",
                self.remaining()
            )));
        }
        Ok(())
    }

    /// Moves to the next multiple of `align` bits, a power of two (the parser checks).
    #[inline]
    pub(crate) fn align(&mut self, align: u32) -> Result<(), DecodeError> {
        let a = u64::from(align.max(1));
        debug_assert!(a.is_power_of_two());
        let aligned = (self.pos + a - 1) & !(a - 1);
        if aligned > self.end {
            return Err(self.error(format!(
                "padding to a {a}-bit boundary past the end of the packet"
            )));
        }
        self.pos = aligned;
        Ok(())
    }

    /// Reads an unsigned integer of 1 to 64 bits.
    #[inline]
    pub(crate) fn read_uint(&mut self, size: u32, order: ByteOrder) -> Result<u64, DecodeError> {
        debug_assert!((1..=64).contains(&size));
        let start = self.byte();
        let shift = (self.pos % 8) as u32;
        // The common case, a little-endian field within one 8-byte load (byte-aligned
        // words included): one load, a shift and a mask.
        if order != ByteOrder::Big
            && shift + size <= 64
            && self.pos + u64::from(size) <= self.end
            && let Some(window) = self.buf.get(start..start + 8)
        {
            let word = u64::from_le_bytes(window.try_into().expect("8 bytes"));
            self.pos += u64::from(size);
            return Ok((word >> shift) & (u64::MAX >> (64 - size)));
        }
        self.read_uint_slow(size, order, start, shift)
    }

    /// Big-endian fields, and fields near the end of the buffer.
    #[inline(never)]
    fn read_uint_slow(
        &mut self,
        size: u32,
        order: ByteOrder,
        start: usize,
        shift: u32,
    ) -> Result<u64, DecodeError> {
        self.need(u64::from(size), "an integer")?;
        let value = if shift == 0 && order != ByteOrder::Big && matches!(size, 8 | 16 | 32 | 64) {
            let b = &self.buf[start..];
            match size {
                8 => u64::from(b[0]),
                16 => u64::from(u16::from_le_bytes([b[0], b[1]])),
                32 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                _ => u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            }
        } else if shift == 0 && size % 8 == 0 {
            let bytes = &self.buf[start..start + (size / 8) as usize];
            match order {
                ByteOrder::Big => bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
                _ => bytes
                    .iter()
                    .rev()
                    .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
            }
        } else {
            let nbytes = (shift + size).div_ceil(8) as usize;
            let bytes = &self.buf[start..start + nbytes];
            let mask = if size == 64 {
                u128::from(u64::MAX)
            } else {
                (1u128 << size) - 1
            };
            let v = match order {
                ByteOrder::Big => {
                    let acc = bytes
                        .iter()
                        .fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
                    acc >> (nbytes as u32 * 8 - shift - size)
                }
                _ => {
                    let acc = bytes
                        .iter()
                        .rev()
                        .fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
                    acc >> shift
                }
            };
            (v & mask) as u64
        };
        self.pos += u64::from(size);
        Ok(value)
    }

    /// Moves `n` bits on; the caller has checked that they are there.
    #[inline]
    pub(crate) fn skip(&mut self, n: u64) {
        debug_assert!(n <= self.remaining());
        self.pos += n;
    }

    /// Skips `n` bits of fixed-size fields nothing reads.
    #[inline]
    pub(crate) fn skip_fixed(&mut self, n: u64) -> Result<(), DecodeError> {
        if self.remaining() < n {
            return Err(self.error(format!(
                "{n} bits of fixed-size fields, but only {} bits are left in the packet",
                self.remaining()
            )));
        }
        self.pos += n;
        Ok(())
    }

    /// Reads `n` whole bytes; the cursor must be byte-aligned.
    pub(crate) fn read_bytes(&mut self, n: u64) -> Result<&'a [u8], DecodeError> {
        self.need(n.saturating_mul(8), "bytes")?;
        let start = self.byte();
        self.pos += n * 8;
        Ok(&self.buf[start..start + n as usize])
    }

    /// Reads a NUL-terminated string; the cursor must be byte-aligned.
    pub(crate) fn read_cstr(&mut self) -> Result<&'a [u8], DecodeError> {
        let start = self.byte();
        let end = ((self.end - self.base) / 8) as usize;
        let hay = &self.buf[start.min(end)..end];
        match hay.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += (n as u64 + 1) * 8;
                Ok(&hay[..n])
            }
            None => Err(self.error("a NUL-terminated string, but the packet ends first")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn little_endian_bitfields_fill_from_the_low_bit() {
        // 5-bit id = 31, then 27-bit value = 0x123456.
        let word: u32 = 31 | (0x0012_3456 << 5);
        let buf = word.to_le_bytes();
        let mut b = Bits::new(&buf, 0, 32);
        assert_eq!(b.read_uint(5, ByteOrder::Little).unwrap(), 31);
        assert_eq!(b.read_uint(27, ByteOrder::Little).unwrap(), 0x0012_3456);
    }

    #[test]
    fn big_endian_bitfields_fill_from_the_high_bit() {
        // IPv4: version 4 (high nibble), ihl 5 (low nibble).
        let buf = [0x45u8, 0x12, 0x34];
        let mut b = Bits::new(&buf, 0, 24);
        assert_eq!(b.read_uint(4, ByteOrder::Big).unwrap(), 4);
        assert_eq!(b.read_uint(4, ByteOrder::Big).unwrap(), 5);
        assert_eq!(b.read_uint(16, ByteOrder::Big).unwrap(), 0x1234);
    }

    #[test]
    fn a_64_bit_read_at_an_odd_bit_offset() {
        let v: u128 = 0xDEAD_BEEF_CAFE_F00D << 3;
        let buf = v.to_le_bytes();
        let mut b = Bits::new(&buf, 3, 128);
        assert_eq!(
            b.read_uint(64, ByteOrder::Little).unwrap(),
            0xDEAD_BEEF_CAFE_F00D
        );
    }

    #[test]
    fn reading_past_the_end_is_an_error() {
        let buf = [b'a', b'b'];
        let mut b = Bits::new(&buf, 0, 16);
        assert!(b.read_uint(32, ByteOrder::Little).is_err());
        assert!(b.read_cstr().is_err());
    }
}
