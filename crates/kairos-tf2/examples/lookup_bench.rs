//! How fast the buffer looks up and stores transforms, single thread.
//!
//! `cargo run --release -p kairos-tf2 --example lookup_bench`
//!
//! - lookups: a 5-link chain (`world` → `l1` → … → `l5`), 100 stamps per link 10 ms
//!   apart, every rotation different; each lookup of `l5` in `world` falls between two
//!   stamps, so all five links interpolate (lerp + slerp) and compose.
//! - floor: the least a lookup of that chain can cost with strings for names: a
//!   `HashMap<String, (String, Transform)>` walked from `l5` up to `world`, composing the
//!   five transforms, with no time and no interpolation.
//! - inserts: `set_transform` of 5 frames at 1 kHz each, in time order, into a 10 s cache
//!   that is full after the first 10 s, so most inserts also prune.
//!
//! Each row is the median of 7 rounds (the min beside it); the goals are a lookup
//! under 250 ns and at least 1 M inserts per second.

use kairos_tf2::{BufferCore, Quaternion, Stamp, Transform, TransformStamped, Vector3};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

const LINKS: usize = 5;
const STAMPS: i64 = 100;
const STEP_NS: i64 = 10_000_000;
const ROUNDS: usize = 7;

fn frame(i: usize) -> String {
    if i == 0 {
        "world".into()
    } else {
        format!("l{i}")
    }
}

fn link_at(i: usize, k: i64) -> Transform {
    let a = 0.01 * k as f64 + i as f64;
    Transform::new(
        Vector3::new(1.0 + 0.001 * k as f64, 0.5, -0.25 * i as f64),
        Quaternion::from_rpy(0.1 * a.sin(), 0.2 * a.cos(), 0.3 * a),
    )
}

/// Runs `f` `n` times per round; returns (median, min) nanoseconds per call.
fn measure(n: u64, mut f: impl FnMut(u64)) -> (f64, f64) {
    let mut per_call: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for i in 0..n {
                f(i);
            }
            start.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    (per_call[ROUNDS / 2], per_call[0])
}

fn main() {
    // The chain, 100 stamps per link.
    let mut buffer = BufferCore::new();
    let mut floor: HashMap<String, (String, Transform)> = HashMap::new();
    for i in 1..=LINKS {
        for k in 0..STAMPS {
            let t = TransformStamped::new(
                frame(i - 1),
                frame(i),
                Stamp::from_nanos((k + 1) * STEP_NS),
                link_at(i, k),
            );
            buffer.set_transform(&t, "bench", false).expect("valid");
        }
        floor.insert(frame(i), (frame(i - 1), link_at(i, 0)));
    }
    let (target, source) = (frame(0), frame(LINKS));
    // Times between stamps, cycling through the whole range.
    let between =
        |i: u64| Stamp::from_nanos((1 + (i % (STAMPS as u64 - 1)) as i64) * STEP_NS + STEP_NS / 3);

    let n = 400_000;
    let lookup = measure(n, |i| {
        black_box(
            buffer
                .lookup(black_box(&target), black_box(&source), between(i))
                .expect("in range"),
        );
    });
    let one_link = measure(n, |i| {
        black_box(
            buffer
                .lookup(black_box("l4"), black_box("l5"), between(i))
                .expect("in range"),
        );
    });
    let lookup_stamped = measure(n, |i| {
        black_box(
            buffer
                .lookup_transform(&target, &source, between(i))
                .expect("in range"),
        );
    });
    let latest = measure(n, |_| {
        black_box(
            buffer
                .lookup(&target, &source, Stamp::LATEST)
                .expect("in range"),
        );
    });
    let can = measure(n, |i| {
        black_box(buffer.can_transform(&target, &source, between(i)));
    });
    let floor_walk = measure(n, |_| {
        let mut frame = black_box(source.as_str());
        let mut t = Transform::IDENTITY;
        while frame != target {
            let (parent, link) = &floor[frame];
            t = *link * t;
            frame = parent;
        }
        black_box(t);
    });

    // Inserts: 5 frames at 1 kHz, 20 s of data (the cache is full after 10 s).
    let per_frame: i64 = 20_000;
    let mut messages: Vec<TransformStamped> = (1..=LINKS)
        .map(|i| TransformStamped::new(frame(i - 1), frame(i), Stamp::LATEST, link_at(i, 0)))
        .collect();
    let inserts = LINKS as u64 * per_frame as u64;
    let mut insert_rounds: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let mut buffer = BufferCore::new();
            let start = Instant::now();
            for k in 0..per_frame {
                for msg in &mut messages {
                    msg.header.stamp = Stamp::from_nanos((k + 1) * 1_000_000);
                    msg.transform.translation.x = k as f64 * 1e-3;
                    buffer.set_transform(msg, "bench", false).expect("valid");
                }
            }
            black_box(&buffer);
            start.elapsed().as_nanos() as f64 / inserts as f64
        })
        .collect();
    insert_rounds.sort_by(f64::total_cmp);
    let insert = (insert_rounds[ROUNDS / 2], insert_rounds[0]);

    println!(
        "kairos-tf2 lookup_bench: {LINKS}-link chain, {STAMPS} stamps per link, single thread"
    );
    println!("median of {ROUNDS} rounds (min in brackets)\n");
    println!(
        "{:<44} {:>16} {:>12} {:>9}",
        "case", "ns/op", "ops/s", "/ floor"
    );
    let row = |name: &str, (median, min): (f64, f64)| {
        println!(
            "{name:<44} {:>16} {:>12} {:>8.2}x",
            format!("{median:.1} [{min:.1}]"),
            format!("{:.2} M", 1e3 / median),
            median / floor_walk.0
        );
    };
    row("lookup, between stamps (interpolated)", lookup);
    row("lookup, 1 link, between stamps", one_link);
    row("lookup_transform (+ 2 frame-name Strings)", lookup_stamped);
    row("lookup at Stamp::LATEST (common time)", latest);
    row("can_transform, between stamps", can);
    row("floor: HashMap<String,..> walk, no time", floor_walk);
    row("set_transform (5 frames at 1 kHz, 10 s cache)", insert);
    println!(
        "\ngoals: lookup < 250 ns: {}; inserts >= 1 M/s: {}",
        if lookup.0 < 250.0 { "met" } else { "NOT met" },
        if 1e3 / insert.0 >= 1.0 {
            "met"
        } else {
            "NOT met"
        }
    );
}
