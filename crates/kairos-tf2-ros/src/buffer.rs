//! [`Buffer`]: tf2's `BufferCore` shared between the threads that fill it and those that
//! look up, with lookups that wait for a transform to arrive.
//!
//! What this module promises:
//! - **tf2's answers.** Every lookup is `kairos_tf2::BufferCore`'s, under one mutex: the
//!   same transform, the same errors with the same facts.
//! - **A wait ends as soon as it can.** An insertion wakes every waiting lookup, which
//!   tries again under the lock the insertion took (a waiter registers its waker, then
//!   tries, under that lock: no wake-up is lost). Nothing polls: between insertions a
//!   waiting thread is parked, and a waiting future is pending.
//! - **Timeouts on the buffer's clock.** The timeout is measured on the clock the buffer
//!   was made with (a node's clock: simulation time when the node uses it) with kairos's
//!   own wait ([`Clock::wait_until_ready`]): never early, a simulated deadline ends when
//!   simulation time reaches it, whatever the wall clock does. On a timeout the error is
//!   [`Tf2Error::Timeout`] with the last attempt's error (the range of stamps held, the
//!   frames that exist).
//! - **Never hangs.** A wait also ends on its cancel token, on the shutdown of the
//!   executor whose callback waits, and on the program's shutdown (SIGINT/SIGTERM). A
//!   blocking wait that could never complete (the listener's subscriptions can only run
//!   once the waiting callback returns: they are in a mutually exclusive group it holds,
//!   or its single-threaded executor has no other worker) fails at once with
//!   [`WouldDeadlock`](kairos::exec::WouldDeadlock), decided by the runtime's own check
//!   ([`kairos::exec::check_blocking_wait`], the one `Client::call` makes), naming the
//!   group and the fix. So does an `.await` of [`Buffer::wait_for_transform`] in an async
//!   callback that holds the listener's group.
//! - **A lookup the buffer can answer never waits**, so never fails that way: the
//!   check is made only when a wait is about to block.

use crate::error::TransformError;
use kairos::exec::{WaitAdvice, WaitCompleter};
use kairos::time::{CancelRegistration, CancelToken, Clock, Duration, Sleep, Time, WaitError};
use kairos_tf2::{BufferCore, Invalid, Stamp, Tf2Error, TransformStamped};
use parking_lot::Mutex;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// What a `WouldDeadlock` of a waiting lookup offers besides a multi-threaded executor.
const ADVICE: WaitAdvice<'static> = WaitAdvice {
    non_blocking: "look up without waiting (Buffer::lookup_transform, or a timeout of zero)",
    await_instead: "`.await` Buffer::wait_for_transform in an async callback",
    relocate: Some(
        "the TransformListener (create it on node.with_group(&node.create_callback_group(..)))",
    ),
};

/// tf2's transform buffer, shared: clones refer to the same buffer. A
/// [`TransformListener`](crate::TransformListener) fills it from `/tf` and `/tf_static`;
/// lookups may wait for the transforms they need.
///
/// ```
/// use kairos::graph::{Context, Node};
/// use kairos_tf2::{Quaternion, Stamp, Transform, TransformStamped, Vector3};
/// use kairos_tf2_ros::Buffer;
///
/// let node = Node::new_in(&Context::new(), "robot", "/")?;
/// let buffer = Buffer::new(node.clock());
/// let mount = Transform::new(Vector3::new(0.2, 0.0, 0.3), Quaternion::IDENTITY);
/// let t = TransformStamped::new("base_link", "lidar", Stamp::from_secs(1), mount);
/// buffer.set_transform(&t, "urdf", true)?;
/// let found = buffer.lookup_transform_timeout("base_link", "lidar", Stamp::LATEST, std::time::Duration::from_millis(100))?;
/// assert_eq!(found.transform.translation.x, 0.2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Buffer {
    shared: Arc<Shared>,
}

struct Shared {
    clock: Clock,
    state: Mutex<State>,
}

struct State {
    core: BufferCore,
    /// Waiting lookups: (key, the waker that wakes it).
    waiters: Vec<(u64, Waker)>,
    next_key: u64,
    /// The subscriptions of each listener filling this buffer (listener key, completers):
    /// what a blocking wait needs to run.
    listeners: Vec<(u64, Vec<WaitCompleter>)>,
    /// What a `WouldDeadlock` of a wait offers, in the words of the caller's API.
    advice: WaitAdvice<'static>,
}

/// One attempt of a waiting lookup, made under the buffer's lock.
type Attempt<'a, R> = dyn Fn(&BufferCore) -> Result<R, Tf2Error> + 'a;

impl Buffer {
    /// An empty buffer keeping 10 s of each frame's transforms, whose waits time out on
    /// `clock` (pass `node.clock()`: simulation time when the node uses it).
    pub fn new(clock: Clock) -> Buffer {
        Buffer::from_core(clock, BufferCore::new())
    }

    /// An empty buffer keeping `cache_length` of each frame's transforms.
    pub fn with_cache_length(clock: Clock, cache_length: std::time::Duration) -> Buffer {
        Buffer::from_core(clock, BufferCore::with_cache_length(cache_length))
    }

    fn from_core(clock: Clock, core: BufferCore) -> Buffer {
        Buffer {
            shared: Arc::new(Shared {
                clock,
                state: Mutex::new(State {
                    core,
                    waiters: Vec::new(),
                    next_key: 1,
                    listeners: Vec::new(),
                    advice: ADVICE,
                }),
            }),
        }
    }

    /// The clock waits are measured on.
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// Stores one transform (see [`BufferCore::set_transform`]) and wakes the waiting
    /// lookups.
    ///
    /// # Errors
    ///
    /// As [`BufferCore::set_transform`]: nothing is stored.
    pub fn set_transform(
        &self,
        transform: &TransformStamped,
        authority: &str,
        is_static: bool,
    ) -> Result<(), Tf2Error> {
        let mut errors = self.set_transforms(std::slice::from_ref(transform), authority, is_static);
        errors.pop().map_or(Ok(()), Err)
    }

    /// Stores each of `transforms` (one message's worth), then wakes the waiting lookups
    /// once; returns the errors of those not stored, in order.
    pub fn set_transforms(
        &self,
        transforms: &[TransformStamped],
        authority: &str,
        is_static: bool,
    ) -> Vec<Tf2Error> {
        let mut errors = Vec::new();
        let wakers: Vec<Waker> = {
            let mut state = self.shared.state.lock();
            for transform in transforms {
                if let Err(e) = state.core.set_transform(transform, authority, is_static) {
                    errors.push(e);
                }
            }
            state.waiters.iter().map(|(_, w)| w.clone()).collect()
        };
        wakers.into_iter().for_each(Waker::wake);
        errors
    }

    /// Runs `f` with the buffer's core, under its lock: every query that does not wait
    /// (`all_frames_as_string`, `frames`, `latest_common_time`, `lookup_transform_full`).
    /// Keep `f` short: insertions wait for it.
    pub fn with_core<R>(&self, f: impl FnOnce(&BufferCore) -> R) -> R {
        f(&self.shared.state.lock().core)
    }

    /// How many lookups wait on this buffer right now (blocked threads and pending
    /// futures): for tests and diagnostics.
    pub fn waiters(&self) -> usize {
        self.shared.state.lock().waiters.len()
    }

    /// Clears every frame's data (see [`BufferCore::clear`]).
    pub fn clear(&self) {
        self.shared.state.lock().core.clear();
    }

    /// The transform from `source` to `target` at `time` as the buffer holds it now,
    /// without waiting (see [`BufferCore::lookup_transform`]).
    ///
    /// # Errors
    ///
    /// As [`BufferCore::lookup`].
    pub fn lookup_transform(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
    ) -> Result<TransformStamped, Tf2Error> {
        self.with_core(|core| core.lookup_transform(target, source, time))
    }

    /// Whether [`Buffer::lookup_transform`] would succeed now.
    pub fn can_transform(&self, target: &str, source: &str, time: Stamp) -> bool {
        self.with_core(|core| core.can_transform(target, source, time))
    }

    /// The transform from `source` to `target` at `time`, waiting up to `timeout` of the
    /// buffer's clock for the transforms it needs (a timeout of zero: no wait). Returns as
    /// soon as an insertion makes the lookup succeed.
    ///
    /// # Errors
    ///
    /// - [`TransformError::Tf2`]: without waiting for an invalid frame id or a timeout
    ///   of zero (the lookup's error), else [`Tf2Error::Timeout`] with the last
    ///   attempt's error;
    /// - [`TransformError::WouldDeadlock`] at once, when the wait would block a callback
    ///   whose executor could not run the listener meanwhile;
    /// - [`TransformError::ShutDown`], [`TransformError::Clock`].
    pub fn lookup_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        timeout: impl Into<Duration>,
    ) -> Result<TransformStamped, TransformError> {
        let cancel = CancelToken::new();
        self.lookup_transform_with_cancel(target, source, time, timeout, &cancel)
    }

    /// [`Buffer::lookup_transform_timeout`], which `cancel` also ends
    /// ([`TransformError::Cancelled`]).
    ///
    /// # Errors
    ///
    /// As [`Buffer::lookup_transform_timeout`], and [`TransformError::Cancelled`].
    pub fn lookup_transform_with_cancel(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        timeout: impl Into<Duration>,
        cancel: &CancelToken,
    ) -> Result<TransformStamped, TransformError> {
        let operation = Operation::new("lookup_transform", target, source, time);
        self.block(&operation, timeout.into(), cancel, &|core| {
            core.lookup_transform(target, source, time)
        })
    }

    /// Whether the transform from `source` to `target` at `time` is available within
    /// `timeout` of the buffer's clock; [`Buffer::check_transform_timeout`] says why not.
    pub fn can_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        timeout: impl Into<Duration>,
    ) -> bool {
        self.check_transform_timeout(target, source, time, timeout, &CancelToken::new())
            .is_ok()
    }

    /// `Ok` once the transform from `source` to `target` at `time` is available, waiting
    /// up to `timeout` of the buffer's clock, or until `cancel` fires.
    ///
    /// # Errors
    ///
    /// As [`Buffer::lookup_transform_with_cancel`].
    pub fn check_transform_timeout(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        timeout: impl Into<Duration>,
        cancel: &CancelToken,
    ) -> Result<(), TransformError> {
        let operation = Operation::new("can_transform", target, source, time);
        self.block(&operation, timeout.into(), cancel, &|core| {
            core.check_transform(target, source, time)
        })
    }

    /// The async form of [`Buffer::lookup_transform_with_cancel`], for an async
    /// callback: the future completes once the transform is available, `timeout` of the
    /// buffer's clock has passed, or `cancel` fires. Awaited in an async callback that
    /// holds the mutually exclusive group the listener's subscriptions are in (they could
    /// never run before it completes) it fails at once with
    /// [`TransformError::WouldDeadlock`].
    pub fn wait_for_transform(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        timeout: impl Into<Duration>,
        cancel: &CancelToken,
    ) -> TransformFuture {
        TransformFuture {
            buffer: self.clone(),
            operation: Operation::new("wait_for_transform(..).await", target, source, time),
            timeout: timeout.into(),
            cancel: cancel.clone(),
            checked: false,
            key: None,
            sleep: None,
            program: None,
            last: None,
        }
    }

    /// The transform from `source` at `source_time` to `target` at `target_time`, through
    /// `fixed` (see [`BufferCore::lookup_transform_full`]), waiting up to `timeout` of the
    /// buffer's clock for both halves.
    ///
    /// # Errors
    ///
    /// As [`Buffer::lookup_transform_with_cancel`].
    #[allow(clippy::too_many_arguments)]
    pub fn lookup_transform_full_with_cancel(
        &self,
        target: &str,
        target_time: Stamp,
        source: &str,
        source_time: Stamp,
        fixed: &str,
        timeout: impl Into<Duration>,
        cancel: &CancelToken,
    ) -> Result<TransformStamped, TransformError> {
        let operation = Operation::new("lookup_transform_full", target, source, target_time);
        self.block(&operation, timeout.into(), cancel, &|core| {
            core.lookup_transform_full(target, target_time, source, source_time, fixed)
        })
    }

    /// `Ok` once [`Buffer::lookup_transform_full_with_cancel`] would succeed, waiting as it
    /// does.
    ///
    /// # Errors
    ///
    /// As [`Buffer::lookup_transform_with_cancel`].
    #[allow(clippy::too_many_arguments)]
    pub fn check_transform_full_timeout(
        &self,
        target: &str,
        target_time: Stamp,
        source: &str,
        source_time: Stamp,
        fixed: &str,
        timeout: impl Into<Duration>,
        cancel: &CancelToken,
    ) -> Result<(), TransformError> {
        let operation = Operation::new("can_transform_full", target, source, target_time);
        self.block(&operation, timeout.into(), cancel, &|core| {
            core.check_transform_full(target, target_time, source, source_time, fixed)
        })
    }

    /// Makes the subscriptions behind `completers` (a listener's, built on subscriptions
    /// of its own: kairos for Python's `TransformListener`) what a blocking wait of this
    /// buffer needs to run, so a wait that could never complete is `WouldDeadlock` at once;
    /// returns the key [`Buffer::remove_listener`] takes. [`TransformListener`](crate::TransformListener)
    /// registers its own.
    pub fn add_listener(&self, completers: Vec<WaitCompleter>) -> u64 {
        let mut state = self.shared.state.lock();
        let key = state.take_key();
        state.listeners.push((key, completers));
        key
    }

    /// Forgets the subscriptions [`Buffer::add_listener`] registered under `key`.
    pub fn remove_listener(&self, key: u64) {
        self.shared
            .state
            .lock()
            .listeners
            .retain(|(k, _)| *k != key);
    }

    /// Words the fix of a `WouldDeadlock` in the API of the caller (kairos for Python
    /// names its own methods); by default, this crate's.
    pub fn set_wait_advice(&self, advice: WaitAdvice<'static>) {
        self.shared.state.lock().advice = advice;
    }

    /// The subscriptions a wait needs to run, and the advice its `WouldDeadlock` gives.
    fn completers(&self) -> (Vec<WaitCompleter>, WaitAdvice<'static>) {
        let state = self.shared.state.lock();
        let completers = state
            .listeners
            .iter()
            .flat_map(|(_, c)| c.iter().cloned())
            .collect();
        (completers, state.advice)
    }

    /// Registers (or updates) the waiter `key`'s waker, then makes one attempt, under one
    /// lock: an insertion after the attempt wakes `waker`.
    fn attempt<R>(
        &self,
        key: &mut Option<u64>,
        waker: &Waker,
        attempt: &Attempt<'_, R>,
    ) -> Result<R, Tf2Error> {
        let mut state = self.shared.state.lock();
        match *key {
            Some(k) => {
                if let Some((_, w)) = state.waiters.iter_mut().find(|(wk, _)| *wk == k) {
                    if !w.will_wake(waker) {
                        w.clone_from(waker);
                    }
                }
            }
            None => {
                let k = state.take_key();
                state.waiters.push((k, waker.clone()));
                *key = Some(k);
            }
        }
        attempt(&state.core)
    }

    fn remove_waiter(&self, key: Option<u64>) {
        if let Some(key) = key {
            self.shared.state.lock().waiters.retain(|(k, _)| *k != key);
        }
    }

    /// The blocking wait behind every `*_timeout` method.
    fn block<R>(
        &self,
        operation: &Operation,
        timeout: Duration,
        cancel: &CancelToken,
        attempt: &Attempt<'_, R>,
    ) -> Result<R, TransformError> {
        if !(timeout.is_positive() && kairos::trace::tp::enabled()) {
            return self.wait(operation, timeout, cancel, attempt);
        }
        let start = self.shared.clock.now();
        let result = self.wait(operation, timeout, cancel, attempt);
        let waited = self.shared.clock.now().since(start).unwrap_or(timeout);
        operation.trace(waited, &result);
        result
    }

    /// The wait of [`Buffer::block`].
    fn wait<R>(
        &self,
        operation: &Operation,
        timeout: Duration,
        cancel: &CancelToken,
        attempt: &Attempt<'_, R>,
    ) -> Result<R, TransformError> {
        let first = self.with_core(attempt);
        let last = match first {
            Ok(found) => return Ok(found),
            Err(e) if gives_up_at_once(&e) || !timeout.is_positive() => return Err(e.into()),
            Err(e) => e,
        };
        let (completers, advice) = self.completers();
        let _blocked =
            kairos::exec::check_blocking_wait(&operation.describe(timeout), &completers, &advice)?;
        let clock = &self.shared.clock;
        let start = clock.now();
        let program = kairos::signal::shutdown_token();
        let mut program_registration: Option<CancelRegistration> = None;
        let mut key = None;
        let mut last = Some(last);
        let ended = clock.wait_until_ready(start + timeout, cancel, |waker| {
            if program_registration.is_none() {
                program_registration = Some(program.register(waker));
            }
            if program.is_cancelled() {
                return Some(Err(()));
            }
            match self.attempt(&mut key, waker, attempt) {
                Ok(found) => Some(Ok(found)),
                Err(e) => {
                    last = Some(e);
                    None
                }
            }
        });
        self.remove_waiter(key);
        let waited = clock.now().since(start).unwrap_or(timeout);
        match ended {
            Ok(Some(Ok(found))) => Ok(found),
            Ok(Some(Err(()))) => Err(operation.shut_down(waited, true, last)),
            Ok(None) => Err(operation.timeout(waited, last)),
            Err(WaitError::Cancelled) if cancel.is_cancelled() => {
                Err(operation.cancelled(waited, last))
            }
            Err(WaitError::Cancelled) => Err(operation.shut_down(waited, false, last)),
            Err(reason) => Err(operation.clock(reason, last)),
        }
    }
}

impl State {
    fn take_key(&mut self) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        key
    }
}

/// An error no wait can mend: the lookup's arguments are wrong.
fn gives_up_at_once(error: &Tf2Error) -> bool {
    matches!(
        error,
        Tf2Error::InvalidArgument {
            what: Invalid::LeadingSlash { .. } | Invalid::EmptyFrameId { .. },
        }
    )
}

/// What a wait looks for, for its errors.
#[derive(Debug, Clone)]
struct Operation {
    name: &'static str,
    target: String,
    source: String,
    time: Stamp,
}

impl Operation {
    fn new(name: &'static str, target: &str, source: &str, time: Stamp) -> Operation {
        Operation {
            name,
            target: target.to_owned(),
            source: source.to_owned(),
            time,
        }
    }

    /// Records how a wait that could have waited ended (`kairos:tf_lookup`), in the
    /// callback it ran in.
    fn trace<R>(&self, waited: Duration, result: &Result<R, TransformError>) {
        let outcome = match result {
            Ok(_) => "found",
            Err(TransformError::Tf2(Tf2Error::Timeout { .. })) => "timeout",
            Err(TransformError::WouldDeadlock(_)) => "would_deadlock",
            Err(TransformError::Cancelled { .. }) => "cancelled",
            Err(TransformError::ShutDown { .. }) => "shut_down",
            Err(_) => "error",
        };
        kairos::trace::tp::tf_lookup(
            kairos::trace::running_callback().unwrap_or(0),
            self.name,
            &self.target,
            &self.source,
            self.time.nanos(),
            waited.as_nanos(),
            outcome,
        );
    }

    fn describe(&self, timeout: Duration) -> String {
        format!(
            "{}('{}', '{}', {}) with a timeout of {timeout}",
            self.name, self.target, self.source, self.time
        )
    }

    fn timeout(&self, waited: Duration, last: Option<Tf2Error>) -> TransformError {
        TransformError::Tf2(Tf2Error::Timeout {
            target_frame: self.target.clone(),
            source_frame: self.source.clone(),
            time: self.time,
            waited: waited.to_std().unwrap_or_default(),
            last_error: last.map(Box::new),
        })
    }

    fn cancelled(&self, waited: Duration, last: Option<Tf2Error>) -> TransformError {
        TransformError::Cancelled {
            target_frame: self.target.clone(),
            source_frame: self.source.clone(),
            time: self.time,
            waited,
            last_error: last.map(Box::new),
        }
    }

    fn shut_down(&self, waited: Duration, program: bool, last: Option<Tf2Error>) -> TransformError {
        TransformError::ShutDown {
            target_frame: self.target.clone(),
            source_frame: self.source.clone(),
            time: self.time,
            waited,
            program,
            last_error: last.map(Box::new),
        }
    }

    fn clock(&self, reason: WaitError, last: Option<Tf2Error>) -> TransformError {
        TransformError::Clock {
            target_frame: self.target.clone(),
            source_frame: self.source.clone(),
            time: self.time,
            reason,
            last_error: last.map(Box::new),
        }
    }
}

/// The future of [`Buffer::wait_for_transform`]: the transform, or why there is none.
#[must_use = "a TransformFuture does nothing unless awaited"]
pub struct TransformFuture {
    buffer: Buffer,
    operation: Operation,
    timeout: Duration,
    cancel: CancelToken,
    /// Whether the await was checked for a deadlock (on the first poll).
    checked: bool,
    /// Its place among the buffer's waiters.
    key: Option<u64>,
    /// The timeout, on the buffer's clock, and when it started (the first poll).
    sleep: Option<(Time, Sleep)>,
    program: Option<CancelRegistration>,
    last: Option<Tf2Error>,
}

impl Future for TransformFuture {
    type Output = Result<TransformStamped, TransformError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let result = this.poll_once(cx);
        if let Poll::Ready(ended) = &result {
            if this.timeout.is_positive() && kairos::trace::tp::enabled() {
                let clock = this.buffer.clock();
                let waited = this.sleep.as_ref().map_or(Duration::ZERO, |(start, _)| {
                    clock.now().since(*start).unwrap_or(this.timeout)
                });
                this.operation.trace(waited, ended);
            }
            this.buffer.remove_waiter(this.key.take());
            this.sleep = None;
            this.program = None;
        }
        result
    }
}

impl TransformFuture {
    fn poll_once(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<TransformStamped, TransformError>> {
        let op = &self.operation;
        let program = kairos::signal::shutdown_token();
        match &self.program {
            Some(registration) => registration.update(cx.waker()),
            None => self.program = Some(program.register(cx.waker())),
        }
        let (target, source, time) = (op.target.as_str(), op.source.as_str(), op.time);
        let attempt = |core: &BufferCore| core.lookup_transform(target, source, time);
        match self.buffer.attempt(&mut self.key, cx.waker(), &attempt) {
            Ok(found) => return Poll::Ready(Ok(found)),
            Err(e) if gives_up_at_once(&e) || !self.timeout.is_positive() => {
                return Poll::Ready(Err(e.into()));
            }
            Err(e) => self.last = Some(e),
        }
        // Checked only once the future must wait, as the blocking form does: an answer
        // the buffer holds never fails this way.
        if !self.checked {
            self.checked = true;
            let (completers, advice) = self.buffer.completers();
            kairos::exec::check_await(&op.describe(self.timeout), &completers, &advice)?;
        }
        let clock = self.buffer.clock();
        let (start, sleep) = self.sleep.get_or_insert_with(|| {
            let start = clock.now();
            (
                start,
                clock.sleep_until_async(start + self.timeout, &self.cancel),
            )
        });
        let start = *start;
        let waited = || clock.now().since(start).unwrap_or(self.timeout);
        if program.is_cancelled() {
            return Poll::Ready(Err(op.shut_down(waited(), true, self.last.take())));
        }
        match Pin::new(sleep).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => {
                // The deadline: one last attempt, as the blocking wait makes.
                match self.buffer.with_core(attempt) {
                    Ok(found) => Poll::Ready(Ok(found)),
                    Err(e) => Poll::Ready(Err(op.timeout(waited(), Some(e)))),
                }
            }
            Poll::Ready(Err(WaitError::Cancelled)) => {
                Poll::Ready(Err(op.cancelled(waited(), self.last.take())))
            }
            Poll::Ready(Err(reason)) => Poll::Ready(Err(op.clock(reason, self.last.take()))),
        }
    }
}

impl Drop for TransformFuture {
    fn drop(&mut self) {
        self.buffer.remove_waiter(self.key.take());
    }
}

impl fmt::Debug for TransformFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransformFuture")
            .field("operation", &self.operation)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Buffer")
            .field("frames", &state.core.frame_names())
            .field("waiters", &state.waiters.len())
            .field("listeners", &state.listeners.len())
            .finish()
    }
}
