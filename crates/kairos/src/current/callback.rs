//! The callback this thread runs, as code below the executor sees it: its trace handle,
//! its executor's shutdown token and its node's logger.
//!
//! # Ground rules
//! - Set only by the executor, around each callback run ([`enter`]); entering nests (a
//!   callback that spins another executor), and the innermost callback is the current one.
//! - Entering and leaving are two stores to a thread-local: the scope borrows what it
//!   describes, so the dispatch path touches no reference count. Readers get owned copies
//!   (a `u64`, a token clone, a logger clone), never the borrow.

use crate::logging::Logger;
use crate::time::CancelToken;
use std::cell::Cell;

/// What a running callback tells the code it calls.
pub(crate) struct Running<'a> {
    /// The callback's trace handle (its entity's id).
    pub(crate) handle: u64,
    /// Cancelled when the executor running the callback shuts down.
    pub(crate) shutdown: &'a CancelToken,
    /// The logger of the callback's node, if it has one.
    pub(crate) logger: Option<&'a Logger>,
}

thread_local! {
    /// The innermost callback of this thread (null: none).
    static TOP: Cell<*const Running<'static>> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` as the callback `running` describes.
pub(crate) fn enter<R>(running: &Running<'_>, f: impl FnOnce() -> R) -> R {
    /// Restores the outer callback when `f` returns or unwinds.
    struct Leave(*const Running<'static>);
    impl Drop for Leave {
        fn drop(&mut self) {
            TOP.with(|top| top.set(self.0));
        }
    }
    let outer = TOP.with(|top| top.replace(std::ptr::from_ref(running).cast()));
    let _leave = Leave(outer);
    f()
}

/// Reads the innermost callback of this thread.
#[allow(unsafe_code)]
fn with_top<R>(read: impl FnOnce(&Running<'_>) -> R) -> Option<R> {
    // SAFETY: `TOP` is null or points at the `Running` an `enter` further down this
    // thread's stack borrows; `enter` restores the outer value before that borrow ends
    // (on return and on unwind), and `read` cannot keep the reference (it is only lent
    // for the call, and the values it returns are owned).
    let running = unsafe { TOP.with(Cell::get).as_ref() }?;
    Some(read(running))
}

/// The trace handle of the callback this thread runs, if any.
pub(crate) fn handle() -> Option<u64> {
    with_top(|running| running.handle)
}

/// The shutdown token of the executor whose callback this thread runs, if any: a kairos
/// wait made inside a callback also ends when that executor shuts down.
pub(crate) fn shutdown_token() -> Option<CancelToken> {
    with_top(|running| running.shutdown.clone())
}

/// The logger of the node whose callback this thread runs, if any.
pub(crate) fn logger() -> Option<Logger> {
    with_top(|running| running.logger.cloned()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_callback_is_current_and_leaving_restores_the_outer() {
        let (outer_token, inner_token) = (CancelToken::new(), CancelToken::new());
        assert_eq!(handle(), None);
        let outer = Running {
            handle: 1,
            shutdown: &outer_token,
            logger: None,
        };
        enter(&outer, || {
            assert_eq!(handle(), Some(1));
            let inner = Running {
                handle: 2,
                shutdown: &inner_token,
                logger: None,
            };
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                enter(&inner, || {
                    assert_eq!(handle(), Some(2));
                    inner_token.cancel();
                    assert!(shutdown_token().unwrap().is_cancelled());
                    panic!("a callback that panics");
                })
            }));
            assert!(unwound.is_err());
            assert_eq!(handle(), Some(1), "the outer callback is current again");
            assert!(!shutdown_token().unwrap().is_cancelled());
        });
        assert_eq!(handle(), None);
        assert!(logger().is_none());
    }
}
