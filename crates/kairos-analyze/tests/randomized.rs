//! The builder on real ROS 2 traces damaged at random: fields overwritten with random
//! or extreme values, events lost, events repeated. It must never panic, and no take
//! may go uncounted: every message a subscription took is linked exactly, linked by
//! inference, or counted unlinkable.

use std::path::{Path, PathBuf};

use kairos_analyze::{Builder, Digest, Model, Options};
use kairos_trace::read::{Event, TraceSet, Value};

fn traces() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        root.join("../../../shared/traces/ros2-sync-one-to-one"),
        root.join("tests/data/caret/end_to_end_fastrtps"),
        root.join("tests/data/caret/cyclic_pipeline_intra_process"),
        root.join("tests/data/caret-hook/end_to_end_sample"),
    ]
}

/// A seeded generator with the draws the damage needs (a run is replayed by its seed).
struct Rng(kairos_testkit::random::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.u64(..)
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }

    fn value(&mut self) -> u64 {
        match self.next() % 6 {
            0 => 0,
            1 => u64::MAX,
            2 => i64::MAX as u64,
            3 => i64::MIN as u64,
            4 => self.next() % 16,
            _ => self.next(),
        }
    }
}

/// Overwrites one integer field of the payload, if it has one.
fn damage(ev: &mut Event, rng: &mut Rng) {
    let Some(Value::Struct(fields)) = &mut ev.payload else {
        return;
    };
    if fields.is_empty() {
        return;
    }
    let i = (rng.next() % fields.len() as u64) as usize;
    let v = rng.value();
    fields[i] = match fields[i] {
        Value::SInt(_) => Value::SInt(v as i64),
        Value::UInt(_) => Value::UInt(v),
        _ => return,
    };
}

fn events(path: &Path) -> Vec<Event> {
    let set = TraceSet::open(path).unwrap();
    set.events_with(Builder::selection())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn check(m: &Model, what: &str) {
    for s in &m.subscriptions {
        let t = &s.takes;
        assert_eq!(
            t.taken,
            t.exact + t.inferred + t.unlinked,
            "{what}: {} takes on {} not all counted: {t:?}",
            s.topic,
            t.taken
        );
    }
}

#[test]
fn damaged_real_traces_never_panic_and_every_take_is_counted() {
    // Twelve runs per trace, each from a seed of its own, drawn from one printed seed.
    let mut seeds = kairos_testkit::random::seeded();
    for path in traces() {
        let clean = events(&path);
        for _ in 0..12 {
            let seed = seeds.u64(..);
            let mut rng = Rng(kairos_testkit::random::Rng::with_seed(seed));
            let mut whole = Builder::new(Options::default());
            let mut streaming = Builder::streaming(Digest::default()).with_horizon(200_000_000);
            for ev in &clean {
                if rng.chance(5) {
                    continue;
                }
                let mut ev = ev.clone();
                if rng.chance(20) {
                    damage(&mut ev, &mut rng);
                }
                let repeat = if rng.chance(5) { 2 } else { 1 };
                for _ in 0..repeat {
                    whole.event(&ev);
                    streaming.event(&ev);
                }
            }
            let what = format!(
                "{} run seed {seed} (KAIROS_SEED replays the runs)",
                path.display()
            );
            check(&whole.finish(0, 0), &what);
            let (m, d) = streaming.finish_streaming(0, 0);
            check(&m, &what);
            let d = d.expect("a streaming digest");
            let _ = d.chains.report(&m).to_string();
        }
    }
}
