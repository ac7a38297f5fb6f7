//! Randomized tests that can be replayed: a generator seeded from `KAIROS_SEED` when set,
//! else from the clock, its seed printed so a failure's output says how to run it again.

pub use fastrand::Rng;

/// A generator for a randomized test: seeded from `KAIROS_SEED` if set (to replay a
/// failure), else from the clock. Prints the seed, which a failed test's output shows.
pub fn seeded() -> fastrand::Rng {
    let seed = std::env::var("KAIROS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("seed {seed} (KAIROS_SEED={seed} replays it)");
    fastrand::Rng::with_seed(seed)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_seed_gives_one_stream() {
        let mut a = fastrand::Rng::with_seed(7);
        let mut b = fastrand::Rng::with_seed(7);
        let draws = |rng: &mut fastrand::Rng| (0..8).map(|_| rng.u64(..)).collect::<Vec<_>>();
        assert_eq!(draws(&mut a), draws(&mut b));
        let _ = super::seeded().u64(..);
    }
}
