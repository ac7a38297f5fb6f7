//! Work the runtime must finish when the process exits: Rust never drops statics, and
//! returning from `main` or calling `std::process::exit` ends every thread at once.
//!
//! One of the crate's few uses of `unsafe` (see the crate root): registering a
//! plain function with libc's `atexit`. The functions registered here run on the exiting
//! thread, in reverse order of registration, and must themselves never wait without a
//! bound.

/// Runs `f` when the process exits normally; says on stderr if it cannot be arranged.
// The crate denies `unsafe`: this call is the one place that needs it (see SAFETY).
#[allow(unsafe_code)]
pub(crate) fn at_exit(f: extern "C" fn(), what: &str) {
    // SAFETY: `f` is an `extern "C" fn()` without arguments, as `atexit` requires; the
    // functions passed here touch only statics and threads of the runtime, which exist
    // until `exit` ends the process, and catch nothing that could unwind into C.
    let registered = unsafe { libc::atexit(f) };
    if registered != 0 {
        crate::say::say(format_args!("kairos: cannot arrange to {what} at exit"));
    }
}
