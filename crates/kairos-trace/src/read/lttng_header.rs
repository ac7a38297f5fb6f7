//! LTTng's event headers, read without interpreting their plan.
//!
//! Every LTTng trace (kernel and user space, ros2_tracing's included) heads each event
//! with one of two headers of one shape: an id tag; for most tags a short timestamp
//! (compact: 5-bit tag and 27-bit timestamp; large: 16-bit tag and 32-bit timestamp),
//! and for the escape tag a full id and a 64-bit timestamp. The header is read for every
//! event of a trace, and running its plan (an interpreter of aligns, reads and jumps)
//! was a fifth of reading a many-stream trace. A header plan of exactly that shape is
//! recognised here and run as straight code: the same reads through the same cursor, so
//! the same values, clock updates and errors as the plan.

use super::bits::{Bits, DecodeError};
use super::decode::DecodeState;
use super::metadata::types::ByteOrder;
use super::plan::Op;

/// An unsigned integer the header reads, aligned first.
#[derive(Debug, Clone, Copy)]
struct Read {
    align: u32,
    size: u32,
    order: ByteOrder,
}

#[derive(Debug, Clone, Copy)]
enum Arm {
    /// The timestamp, mapped to a clock; the tag is the id.
    Compact { ts: Read, clock: usize },
    /// The id, then the timestamp mapped to a clock.
    Extended { id: Read, ts: Read, clock: usize },
}

#[derive(Debug, Clone)]
pub(crate) struct LttngHeader {
    tag: Read,
    /// The variant's arms in the metadata's order (the first whose range holds the tag
    /// wins, as in the plan).
    arms: [(i128, i128, Arm); 2],
    tag_name: std::sync::Arc<str>,
}

/// An option's steps read as integers, each with the alignment of the steps before it;
/// where its closing jump goes, and how many steps it took.
struct OptionSteps<'a> {
    reads: Vec<(Read, &'a Op)>,
    end: usize,
    steps: usize,
}

fn reads(ops: &[Op]) -> Option<OptionSteps<'_>> {
    let mut out = Vec::new();
    let mut align = 1;
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Align(a) => align = align.max(*a),
            Op::Int {
                size,
                order,
                signed: false,
                ..
            } => {
                out.push((
                    Read {
                        align,
                        size: *size,
                        order: *order,
                    },
                    op,
                ));
                align = 1;
            }
            Op::Jump(end) if align == 1 => {
                return Some(OptionSteps {
                    reads: out,
                    end: *end as usize,
                    steps: i + 1,
                });
            }
            _ => return None,
        }
    }
    None
}

/// What an option's reads are, if one of the two LTTng options.
fn option(reads: &[(Read, &Op)]) -> Option<Arm> {
    match reads {
        [
            (
                ts,
                Op::Int {
                    clock: Some(clock),
                    is_id: false,
                    ..
                },
            ),
        ] => Some(Arm::Compact {
            ts: *ts,
            clock: *clock,
        }),
        [
            (
                id,
                Op::Int {
                    clock: None,
                    is_id: true,
                    ..
                },
            ),
            (
                ts,
                Op::Int {
                    clock: Some(clock),
                    is_id: false,
                    ..
                },
            ),
        ] => Some(Arm::Extended {
            id: *id,
            ts: *ts,
            clock: *clock,
        }),
        _ => None,
    }
}

impl LttngHeader {
    /// The header a plan's steps describe, if they have LTTng's shape.
    pub(crate) fn recognise(ops: &[Op]) -> Option<Self> {
        let (lead, rest) = match ops {
            [Op::Align(a), rest @ ..] => (*a, rest),
            rest => (1, rest),
        };
        let [
            Op::Int {
                size,
                order,
                signed: false,
                clock: None,
                slot,
                is_id: true,
            },
            Op::Variant {
                tag_slot,
                signed: false,
                arms,
                tag,
            },
            ..,
        ] = rest
        else {
            return None;
        };
        if tag_slot != slot || arms.len() != 2 {
            return None;
        }
        let base = ops.len() - rest.len() + 2;
        let mut options = Vec::new();
        let mut at = base;
        // The options follow the variant step one after the other, each closed by a
        // jump to the end of the plan.
        while at < ops.len() {
            let o = reads(&ops[at..])?;
            if o.end != ops.len() {
                return None;
            }
            options.push((at as u32, option(&o.reads)?));
            at += o.steps;
        }
        let arm = |(lo, hi, target): (i128, i128, u32)| {
            let (_, o) = options.iter().find(|(start, _)| *start == target)?;
            Some((lo, hi, *o))
        };
        Some(Self {
            tag: Read {
                align: lead,
                size: *size,
                order: *order,
            },
            arms: [arm(arms[0])?, arm(arms[1])?],
            tag_name: tag.clone(),
        })
    }

    #[inline]
    fn read(bits: &mut Bits<'_>, r: Read) -> Result<u64, DecodeError> {
        bits.align(r.align)?;
        bits.read_uint(r.size, r.order)
    }

    /// Reads the header as its plan would: advances `bits` past it, updates the clock,
    /// and returns the event id.
    #[inline]
    pub(crate) fn run(
        &self,
        bits: &mut Bits<'_>,
        state: &mut DecodeState,
    ) -> Result<Option<u64>, DecodeError> {
        let tag = Self::read(bits, self.tag)?;
        let key = i128::from(tag);
        let [(lo0, hi0, o0), (lo1, hi1, o1)] = self.arms;
        let option = if lo0 <= key && key <= hi0 {
            o0
        } else if lo1 <= key && key <= hi1 {
            o1
        } else {
            return Err(bits.error(format!(
                "a variant option for tag `{}` = {key}, but no option matches its label",
                self.tag_name
            )));
        };
        match option {
            Arm::Compact { ts, clock } => {
                let v = Self::read(bits, ts)?;
                state.update(clock, ts.size, v);
                Ok(Some(tag))
            }
            Arm::Extended { id, ts, clock } => {
                let id = Self::read(bits, id)?;
                let v = Self::read(bits, ts)?;
                state.update(clock, ts.size, v);
                Ok(Some(id))
            }
        }
    }
}
