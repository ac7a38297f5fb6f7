//! The wall monitor under real wall-clock steps (libfaketime in a child process).
//!
//! jump.rs promises a step is "reported as a ClockJump with its signed delta". Samples are
//! taken by every system-clock wait and by the monitor thread, concurrently; a sample taken
//! before a step but compared after a later one must not be reported as a backward jump.

use kairos::time::{CancelToken, Clock, Duration, JumpThreshold, Timer};
use kairos_testkit::set_wall_offset;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const CHILD: &str = "KAIROS_REVIEW_WALL_CHILD";
const STEPS: i64 = 100;
const STEP_S: i64 = 5;

/// In the child: several threads sample the wall monitor (through system timers) while the
/// wall clock is stepped forward STEPS times; every jump heard must be forward.
fn child(file: &Path) {
    let heard = Arc::new(Mutex::new(Vec::<i64>::new()));
    let h = Arc::clone(&heard);
    let _handler = Clock::system().create_jump_handler(
        JumpThreshold::ALL,
        || {},
        move |j| h.lock().unwrap().push(j.delta.as_nanos()),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let pollers: Vec<_> = (0..6)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let timer = Timer::new(Clock::system(), Duration::from_secs(3600)).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    let _ = timer.is_ready();
                }
            })
        })
        .collect();
    for i in 1..=STEPS {
        set_wall_offset(file, i * STEP_S);
        Clock::steady()
            .sleep_for(Duration::from_millis(20), &CancelToken::new())
            .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    pollers.into_iter().for_each(|p| p.join().unwrap());
    let heard = heard.lock().unwrap().clone();
    // Only jumps of a second or more: a 5 s step reported backwards, not sampling noise.
    let backward: Vec<_> = heard.iter().filter(|&&d| d <= -1_000_000_000).collect();
    assert!(
        backward.is_empty(),
        "the wall clock was only stepped forward ({STEPS} x {STEP_S} s), yet jump handlers \
         heard backward jumps {backward:?} (all heard, ns: {heard:?})"
    );
}

#[test]
fn a_forward_wall_step_is_never_reported_as_a_backward_jump() {
    if let Ok(file) = std::env::var(CHILD) {
        child(Path::new(&file));
        return;
    }
    let dir = std::env::temp_dir().join(format!("kairos-review-wall-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("offset");
    set_wall_offset(&file, 0);
    let out = kairos_testkit::rerun_self_under_faketime(
        "a_forward_wall_step_is_never_reported_as_a_backward_jump",
        &file,
    )
    .env(CHILD, &file)
    .output()
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
