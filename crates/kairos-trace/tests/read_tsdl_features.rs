//! A trace that uses the corners of TSDL no real trace here reaches (a big-endian trace,
//! bit fields of both byte orders, signed enumerations with ranges and unknown values,
//! floats, typedef, named struct/variant declarations, arrays of structures, a sequence
//! sized by an absolute path, 2-D arrays, text arrays, octal/binary/hex bases, a 1 MHz
//! clock with offsets), written bit by bit here, read by `dump` and by babeltrace2: the
//! two must print the same lines.

use std::path::Path;

use kairos_trace::read::{TraceSet, text};

const METADATA: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typedef integer { size = 16; align = 8; signed = true; } int16_t;
trace { major = 1; minor = 8; byte_order = be; packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
env { hostname = "feat"; answer = -42; };
clock { name = mono; freq = 1000000; offset_s = 1600000000; offset = 500; };
typealias integer { size = 32; align = 8; signed = false; map = clock.mono.value; } := clk32;
typealias integer { size = 64; align = 8; signed = false; map = clock.mono.value; } := clk64;
enum color : integer { size = 8; align = 8; signed = true; } { RED = -1, GREEN, BLUE = 5 ... 7, "multi word" = 10 };
struct point { int16_t x; int16_t y; } align(16);
variant shape { struct point pt; string label; uint8_t code; };
stream {
  id = 0;
  packet.context := struct { clk64 timestamp_begin; clk64 timestamp_end; uint64_t content_size; uint64_t packet_size; };
  event.header := struct { uint8_t id; clk32 timestamp; };
};
event { name = "feat:ints"; id = 0; stream_id = 0; fields := struct {
  integer { size = 3; align = 1; signed = false; byte_order = le; } _a;
  integer { size = 13; align = 1; signed = true; byte_order = le; } _b;
  integer { size = 4; align = 1; signed = false; } _c;
  integer { size = 12; align = 1; signed = true; base = 16; } _d;
  integer { size = 64; align = 64; signed = true; } _e;
  integer { size = 24; align = 8; signed = false; base = 8; } _f;
  integer { size = 5; align = 8; signed = false; base = 2; } _g;
  integer { size = 32; align = 8; signed = false; byte_order = le; base = hex; } _h;
}; };
event { name = "feat:compound"; id = 1; stream_id = 0; fields := struct {
  enum color _col;
  enum color _col2;
  enum color _col3;
  floating_point { exp_dig = 8; mant_dig = 24; align = 32; } _f32;
  floating_point { exp_dig = 11; mant_dig = 53; align = 64; byte_order = le; } _f64;
  struct point _pts[2];
  uint8_t _n;
  int16_t _seq[ event.fields._n ];
  enum : uint8_t { pt, label, code } _sel;
  variant shape <_sel> _s;
  string _text;
  integer { size = 8; align = 8; signed = false; encoding = ASCII; } _chars[6];
  uint8_t _grid[2][3];
}; };
"#;

/// Writes fields bit by bit, each with its own byte order.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    pos: usize,
}

impl Bits {
    fn align(&mut self, bits: usize) {
        self.pos = self.pos.div_ceil(bits) * bits;
        self.bytes.resize(self.pos.div_ceil(8), 0);
    }

    fn int(&mut self, value: i128, size: usize, align: usize, little: bool) {
        self.align(align);
        self.bytes.resize((self.pos + size).div_ceil(8), 0);
        for i in 0..size {
            let bit = if little {
                (value >> i) & 1
            } else {
                (value >> (size - 1 - i)) & 1
            };
            let p = self.pos + i;
            if bit == 1 {
                let shift = if little { p % 8 } else { 7 - p % 8 };
                self.bytes[p / 8] |= 1 << shift;
            }
        }
        self.pos += size;
    }

    fn be(&mut self, value: i128, size: usize) {
        self.int(value, size, 8, false);
    }

    fn text(&mut self, s: &[u8]) {
        self.align(8);
        self.bytes.extend_from_slice(s);
        self.pos += s.len() * 8;
    }
}

fn header(b: &mut Bits, id: i128, ts: i128) {
    b.be(id, 8);
    b.be(ts, 32);
}

fn write_trace(dir: &Path) {
    // Events start after the 8-byte header and 32-byte context: offset 320 bits.
    let mut ev = Bits {
        bytes: vec![0; 40],
        pos: 320,
    };
    for (ts, a, b, c, d) in [(1_000, 5, -1000, 9, -2), (2_000, 7, 4095, 15, 2047)] {
        header(&mut ev, 0, ts);
        // The payload structure aligns as its most aligned member (`_e`, 64 bits).
        ev.align(64);
        ev.int(a, 3, 1, true);
        ev.int(b, 13, 1, true);
        ev.int(c, 4, 1, false);
        ev.int(d, 12, 1, false);
        ev.int(-1234567890123, 64, 64, false);
        ev.be(0o7654321, 24);
        ev.int(0b10110, 5, 8, false);
        ev.int(0xDEADBEEF, 32, 8, true);
    }
    // The clock's low 32 bits wrap between these two events.
    for (ts, sel) in [(0xFFFF_FFF0_i128, 0), (0x10, 1), (0x20, 2)] {
        header(&mut ev, 1, ts);
        ev.align(64);
        ev.be(-1, 8);
        ev.be(6, 8);
        ev.be(3, 8);
        ev.int(i128::from(1.5f32.to_bits()), 32, 32, false);
        ev.int(i128::from((-0.000123f64).to_bits()), 64, 64, true);
        for v in [1, -2, 300, -400] {
            ev.int(v, 16, 16, false);
        }
        ev.be(3, 8);
        for v in [-7, 8, 9] {
            ev.int(v, 16, 8, false);
        }
        ev.be(sel, 8);
        match sel {
            0 => {
                ev.int(11, 16, 16, false);
                ev.int(-12, 16, 16, false);
            }
            1 => ev.text(b"a \"label\"\n\0"),
            _ => ev.be(200, 8),
        }
        ev.text(b"tab\there ? \\ 'q'\0");
        ev.text(b"abc\0xy");
        for v in 0..6 {
            ev.be(v * 10, 8);
        }
    }
    let bits = ev.bytes.len() as i128 * 8;
    let mut head = Bits::default();
    head.be(0xC1FC_1FC1, 32);
    head.be(0, 32);
    for v in [0x0000_0000_0000_0100_i128, 0x1_0000_0100, bits, bits] {
        head.be(v, 64);
    }
    let mut packet = head.bytes;
    packet.extend_from_slice(&ev.bytes[40..]);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("metadata"), METADATA).unwrap();
    std::fs::write(dir.join("stream"), packet).unwrap();
}

#[test]
fn every_tsdl_feature_reads_as_babeltrace2_reads_it() {
    let dir = std::env::temp_dir().join(format!("kairos-tsdl-features-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write_trace(&dir);
    let bt = kairos_testkit::babeltrace2_output(&["--clock-seconds", "--no-delta"], &dir);
    let set = TraceSet::open(&dir).unwrap();
    let mut ours = String::new();
    for ev in set.events().unwrap() {
        text::write_event(&mut ours, &ev.unwrap());
        ours.push('\n');
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        bt.status.success(),
        "babeltrace2: {}",
        String::from_utf8_lossy(&bt.stderr)
    );
    let theirs = String::from_utf8_lossy(&bt.stdout);
    assert_eq!(ours.lines().count(), 5, "{ours}");
    // And the values are the ones written.
    for expected in [
        "[1600000000.001500000] feat feat:ints: { a = 5, b = -1000, c = 9, d = 0xFFE, e = -1234567890123, f = 07654321, g = 0b10110, h = 0xDEADBEEF }",
        "a = 7, b = 4095, c = 15, d = 0x7FF,",
        "col = ( \"RED\" : container = -1 ), col2 = ( \"BLUE\" : container = 6 ), col3 = ( <unknown> : container = 3 )",
        "f32 = 1.5, f64 = -0.000123, pts = [ [0] = { x = 1, y = -2 }, [1] = { x = 300, y = -400 } ], n = 3, seq = [ [0] = -7, [1] = 8, [2] = 9 ]",
        "sel = ( \"pt\" : container = 0 ), s = { { x = 11, y = -12 } }",
        "sel = ( \"label\" : container = 1 ), s = { \"a \\\"label\\\"\\n\" }",
        "sel = ( \"code\" : container = 2 ), s = { 200 }",
        "text = \"tab\\there \\? \\\\ \\'q\\'\", chars = \"abc\", grid = [ [0] = [ [0] = 0, [1] = 10, [2] = 20 ], [1] = [ [0] = 30, [1] = 40, [2] = 50 ] ]",
        // 0x10 after 0xFFFFFFF0: the 32-bit clock field wrapped into the 33rd bit.
        "[1600004294.967812000] feat feat:compound:",
    ] {
        assert!(ours.contains(expected), "missing {expected}\nin\n{ours}");
    }
    for (a, b) in ours.lines().zip(theirs.lines()) {
        assert_eq!(a, b);
    }
    assert_eq!(
        ours.lines().count(),
        theirs.lines().count(),
        "babeltrace2 printed:\n{theirs}"
    );
}
