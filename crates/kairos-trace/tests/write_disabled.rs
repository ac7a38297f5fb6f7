//! With no session, a tracepoint does no work beyond its check: it allocates nothing, not
//! even for its string arguments, and records nothing.

mod write_support;

use kairos_trace::tp;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts allocations made by the whole test process.
struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's guarantees for `layout` are passed on as they are.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System.alloc` with this `layout` above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn a_disabled_tracepoint_allocates_nothing() {
    let _session_lock = write_support::exclusive();
    assert!(!tp::enabled());
    let topic = String::from("/a/topic/name/long/enough/to/need/the/heap");
    // Warm up anything lazily allocated on first use (thread-locals, stdout).
    tp::rcl_publisher_init(1, 2, 3, &topic, 10);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for seq in 0..1_000 {
        tp::rcl_publisher_init(1, 2, 3, &topic, 10);
        tp::rclcpp_callback_register(seq, &topic);
        tp::rcl_publish(1, seq, seq);
    }
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(after - before, 0, "allocations by disabled tracepoints");

    // The counter does see a tracepoint's allocations once a session records.
    let dir = tempfile::tempdir().unwrap();
    let session = kairos_trace::Session::start(dir.path()).unwrap();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    tp::rclcpp_callback_register(1, &topic);
    assert!(ALLOCATIONS.load(Ordering::Relaxed) > before);
    session.stop().unwrap();
}
