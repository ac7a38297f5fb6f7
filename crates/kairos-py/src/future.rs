//! Futures and coroutines: rclpy's `Future` over kairos's responses and sleeps, and the
//! task that runs an `async def` callback on the kairos executor.
//!
//! What this module promises:
//! - A [`PyFuture`] made by `call_async` or `sleep_async` is completed by whoever polls it:
//!   the coroutine that awaits it, `spin_until_future_complete`, or (after
//!   `add_done_callback`) the client's done callback, run in the client's group as in Rust.
//!   So an awaited call follows kairos's rules exactly: it completes, or fails at once with
//!   `WouldDeadlock` when its service is in the group the awaiting callback holds.
//! - An `async def` callback is a [`CoroutineTask`]: a Rust future the executor polls. Its
//!   group is held until the coroutine returns, as rclpy holds it for a coroutine task.
//!   Every resume of the coroutine holds the GIL; waiting between resumes does not.
//!   An `async def` service's task keeps what the coroutine returned (or raised) for the
//!   service to answer with ([`CoroutineTask::keeping_result`]).
//! - Done callbacks run once, with the GIL, never under this module's lock.
//!
//! Ground rules: `Shared::state` is a short lock: no Python code runs and no source is
//! polled while it is held. A source is taken out of the state to be polled and put back
//! if it is still pending; a second poller meanwhile registers its waker and is woken by
//! the completion.

use crate::env::CallbackEnv;
use crate::errors;
use parking_lot::Mutex;
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// Turns a Rust result into its Python value once the GIL is held.
pub(crate) type Convert = Box<dyn FnOnce(Python<'_>) -> PyResult<PyObject> + Send>;
/// What a source produces: a value to convert, or the Python exception to raise.
pub(crate) type Outcome = Result<Convert, PyErr>;
/// Takes a source's outcome when it arrives.
pub(crate) type DoneFn = Box<dyn FnOnce(Outcome) + Send>;

/// The Rust side of a future: a response or a sleep.
pub(crate) trait Source: Send {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Outcome>;

    /// Delivers the outcome to `done` when it arrives with no one polling; a source that
    /// cannot gives itself back.
    fn on_done(self: Box<Self>, done: DoneFn) -> Result<(), Box<dyn Source>>;
}

enum Slot {
    Pending,
    Converting(Convert),
    /// Being converted by a `result()` call, outside the lock.
    Busy,
    Value(PyObject),
    Error(PyErr),
    Cancelled,
}

struct State {
    /// Set once, by the first completion.
    done: bool,
    source: Option<Box<dyn Source>>,
    slot: Slot,
    wakers: Vec<Waker>,
    callbacks: Vec<PyObject>,
    /// rclpy's `Future(executor=...)`: done callbacks are scheduled on it
    /// (`executor.create_task(callback, future)`) instead of being called at completion.
    executor: Option<PyObject>,
    /// What `set_exception` was given, returned by `exception()` as it was (rclpy keeps
    /// any object; `result()` raises it, a TypeError if it is not an exception).
    exception: Option<PyObject>,
    /// The Python object done callbacks were added on (weakly: it may be a `Task` or a
    /// user's subclass), so each callback gets that very object, as in rclpy.
    owner: Option<Py<pyo3::types::PyWeakrefReference>>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn new(source: Option<Box<dyn Source>>) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                done: false,
                source,
                slot: Slot::Pending,
                wakers: Vec::new(),
                callbacks: Vec::new(),
                executor: None,
                exception: None,
                owner: None,
            }),
        })
    }

    fn is_done(&self) -> bool {
        self.state.lock().done
    }

    /// Stores the outcome (first one wins), wakes the pollers, runs the done callbacks.
    fn complete(self: &Arc<Self>, slot: Slot) {
        let (wakers, callbacks) = {
            let mut state = self.state.lock();
            if state.done {
                return;
            }
            state.done = true;
            state.slot = slot;
            state.source = None;
            (
                std::mem::take(&mut state.wakers),
                std::mem::take(&mut state.callbacks),
            )
        };
        wakers.into_iter().for_each(Waker::wake);
        if !callbacks.is_empty() {
            Python::with_gil(|py| self.run_callbacks(py, callbacks));
        }
    }

    fn run_callbacks(self: &Arc<Self>, py: Python<'_>, callbacks: Vec<PyObject>) {
        let owner = self
            .state
            .lock()
            .owner
            .as_ref()
            .and_then(|weak| weak.bind(py).upgrade());
        let future = match owner {
            Some(owner) => owner.unbind(),
            None => match Py::new(
                py,
                PyFuture {
                    shared: self.clone(),
                },
            ) {
                Ok(f) => f.into_any(),
                Err(err) => return err.print(py),
            },
        };
        let executor = self.state.lock().executor.as_ref().map(|e| e.clone_ref(py));
        for callback in callbacks {
            let called = match &executor {
                Some(executor) => executor
                    .call_method1(py, "create_task", (callback, future.clone_ref(py)))
                    .map(drop),
                None => callback.call1(py, (future.clone_ref(py),)).map(drop),
            };
            if let Err(err) = called {
                err.print(py);
            }
        }
    }

    /// Hands a pending source its completion: a response then arrives as a done callback
    /// of its client, which the executor runs in the client's group (a source that cannot
    /// stays to be polled).
    pub(crate) fn attach(self: &Arc<Self>) {
        let Some(source) = self.state.lock().source.take() else {
            return;
        };
        let shared = self.clone();
        let done: DoneFn = Box::new(move |outcome| shared.complete_with(outcome));
        if let Err(source) = source.on_done(done) {
            let mut state = self.state.lock();
            if !state.done {
                state.source = Some(source);
            }
        }
    }

    fn complete_with(self: &Arc<Self>, outcome: Outcome) {
        self.complete(match outcome {
            Ok(convert) => Slot::Converting(convert),
            Err(err) => Slot::Error(err),
        });
    }

    /// Drives the source, or waits to be woken by whoever completes the future.
    pub(crate) fn poll(self: &Arc<Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state.lock();
        if state.done {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        let Some(mut source) = state.source.take() else {
            return Poll::Pending;
        };
        drop(state);
        match source.poll(cx) {
            Poll::Ready(outcome) => {
                self.complete_with(outcome);
                Poll::Ready(())
            }
            Poll::Pending => {
                let mut state = self.state.lock();
                if !state.done {
                    state.source = Some(source);
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            }
        }
    }

    /// The result as Python sees it: the value, the exception, or `None` while pending.
    fn result(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let mut state = self.state.lock();
        while matches!(state.slot, Slot::Busy) {
            // Another thread converts (it may need the GIL this thread holds).
            drop(state);
            py.allow_threads(std::thread::yield_now);
            state = self.state.lock();
        }
        match std::mem::replace(&mut state.slot, Slot::Busy) {
            Slot::Pending => {
                state.slot = Slot::Pending;
                Ok(None)
            }
            Slot::Busy => unreachable!("waited above"),
            Slot::Converting(convert) => {
                // Converting runs Python code: not under the lock.
                drop(state);
                let converted = convert(py);
                let mut state = self.state.lock();
                match converted {
                    Ok(value) => {
                        state.slot = Slot::Value(value.clone_ref(py));
                        Ok(Some(value))
                    }
                    Err(err) => {
                        state.slot = Slot::Error(err.clone_ref(py));
                        Err(err)
                    }
                }
            }
            Slot::Value(value) => {
                let out = value.clone_ref(py);
                state.slot = Slot::Value(value);
                Ok(Some(out))
            }
            Slot::Error(err) => {
                let out = err.clone_ref(py);
                state.slot = Slot::Error(err);
                Err(out)
            }
            Slot::Cancelled => {
                state.slot = Slot::Cancelled;
                Err(pyo3::exceptions::asyncio::CancelledError::new_err(
                    "the future was cancelled",
                ))
            }
        }
    }
}

/// rclpy's `Future`: the result of `call_async`, `sleep_async`, or one a program makes
/// and completes itself with `set_result`. Awaitable in an `async def` callback.
#[pyclass(name = "Future", module = "kairos", subclass, weakref)]
pub struct PyFuture {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for PyFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Future")
            .field("done", &self.shared.is_done())
            .finish()
    }
}

impl PyFuture {
    pub(crate) fn from_source(source: Box<dyn Source>) -> Self {
        Self {
            shared: Shared::new(Some(source)),
        }
    }

    /// A response future. Made from a callback, it stays to be polled by whoever awaits
    /// it (so an awaited call keeps kairos's deadlock check). Made from a program's own
    /// thread, it completes by itself as a callback of its client, as rclpy's does: so
    /// `spin_once` returns with it, and `done()` turns true without anyone polling.
    pub(crate) fn response(source: Box<dyn Source>) -> Self {
        let future = Self::from_source(source);
        if !kairos::exec::in_callback() {
            future.shared.attach();
        }
        future
    }
}

#[pymethods]
impl PyFuture {
    /// A pending future. Arguments are for subclasses (rclpy's `Task(handler, ...)`,
    /// `Future(executor=...)`) and are not read here.
    #[new]
    #[pyo3(signature = (*_args, **kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let shared = Shared::new(None);
        if let Some(executor) = kwargs
            .map(|k| k.get_item("executor"))
            .transpose()?
            .flatten()
        {
            if !executor.is_none() {
                shared.state.lock().executor = Some(executor.unbind());
            }
        }
        Ok(Self { shared })
    }

    /// Schedules the done callbacks on `executor` (`Task` passes its executor here).
    fn _set_executor(&self, executor: PyObject) {
        self.shared.state.lock().executor = Some(executor);
    }

    /// Whether the future has a result, an exception, or was cancelled.
    fn done(&self) -> bool {
        self.shared.is_done()
    }

    fn cancelled(&self) -> bool {
        matches!(self.shared.state.lock().slot, Slot::Cancelled)
    }

    /// The result; `None` while pending (as rclpy); raises the exception the future ended with.
    fn result(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        self.shared.result(py)
    }

    /// The exception the future ended with, or `None`.
    fn exception(&self, py: Python<'_>) -> Option<PyObject> {
        if let Some(given) = &self.shared.state.lock().exception {
            return Some(given.clone_ref(py));
        }
        match self.shared.result(py) {
            Err(err) => Some(err.into_value(py).into_any()),
            Ok(_) => None,
        }
    }

    fn set_result(&self, result: PyObject) {
        self.shared.complete(Slot::Value(result));
    }

    fn set_exception(&self, exception: Bound<'_, PyAny>) {
        {
            let mut state = self.shared.state.lock();
            if state.done {
                return;
            }
            state.exception = Some(exception.clone().unbind());
        }
        self.shared
            .complete(Slot::Error(PyErr::from_value(exception)));
    }

    /// Cancels a pending future: pollers wake, `result()` raises `CancelledError`.
    fn cancel(&self) -> bool {
        if self.shared.is_done() {
            return false;
        }
        self.shared.complete(Slot::Cancelled);
        true
    }

    /// Calls `callback(future)` once the future is done (at once if it is). A pending
    /// response is then delivered as a done callback of its client, in the client's group.
    fn add_done_callback(slf: &Bound<'_, Self>, callback: PyObject) -> PyResult<()> {
        let py = slf.py();
        let this = slf.borrow();
        // Made before the lock: making it may run Python code (a garbage collection).
        let weak = pyo3::types::PyWeakrefReference::new(slf.as_any())?.unbind();
        let mut state = this.shared.state.lock();
        if state.owner.is_none() {
            state.owner = Some(weak);
        }
        if state.done {
            drop(state);
            this.shared.run_callbacks(py, vec![callback]);
            return Ok(());
        }
        state.callbacks.push(callback);
        drop(state);
        this.shared.attach();
        Ok(())
    }

    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The await protocol: yields itself to the kairos task driving the coroutine until
    /// done, then ends with the result (or raises the exception). Under an asyncio event
    /// loop it yields `None` instead, which asyncio takes as "resume me soon": an asyncio
    /// task awaits a kairos future by polling it, as it awaits an rclpy one.
    fn __next__(slf: PyRef<'_, Self>, py: Python<'_>) -> PyResult<Option<PyObject>> {
        match slf.shared.result(py)? {
            None if asyncio_running(py) => Ok(Some(py.None())),
            None => Ok(Some(slf.into_pyobject(py)?.into_any().unbind())),
            Some(value) => Err(PyStopIteration::new_err((value,))),
        }
    }

    fn __repr__(&self) -> String {
        format!("<kairos.Future done={}>", self.shared.is_done())
    }
}

/// Whether an asyncio event loop runs in this thread (asyncio not imported: none does).
fn asyncio_running(py: Python<'_>) -> bool {
    py.import("sys")
        .and_then(|sys| sys.getattr("modules"))
        .and_then(|modules| modules.get_item("asyncio"))
        .and_then(|asyncio| asyncio.call_method0("_get_running_loop"))
        .is_ok_and(|running| !running.is_none())
}

/// A Rust future that completes with a [`PyFuture`] (for `spin_until_future_complete`).
pub(crate) struct Awaiting(pub(crate) Arc<Shared>);

impl Future for Awaiting {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.poll(cx)
    }
}

/// Makes the coroutine on its first poll (with the GIL).
pub(crate) type Start = Box<dyn FnOnce(Python<'_>) -> PyResult<PyObject> + Send>;

/// Where a coroutine's return value (or what it raised) is kept once it ends.
pub(crate) type ResultSlot = Arc<Mutex<Option<PyResult<PyObject>>>>;

/// An `async def` callback as a task of the kairos executor.
pub(crate) struct CoroutineTask {
    start: Option<Start>,
    coroutine: Option<PyObject>,
    awaiting: Option<Arc<Shared>>,
    env: Arc<CallbackEnv>,
    /// `None`: the result is dropped and an exception reported to `env`.
    result: Option<ResultSlot>,
}

enum Step {
    Await(Arc<Shared>),
    /// It yielded nothing (`asyncio.sleep(0)`, a bare `yield`): resume it soon.
    Yield,
    /// It ended, returning this (`None`: nothing to return).
    Done(Option<PyObject>),
}

impl CoroutineTask {
    pub(crate) fn new(env: Arc<CallbackEnv>, start: Start) -> Self {
        Self {
            start: Some(start),
            coroutine: None,
            awaiting: None,
            env,
            result: None,
        }
    }

    /// Keeps the coroutine's return value, or its exception (then not reported), in
    /// `slot` when it ends.
    pub(crate) fn keeping_result(mut self, slot: ResultSlot) -> Self {
        self.result = Some(slot);
        self
    }

    /// Resumes the coroutine once; what it awaits next, or that it ended.
    fn resume(&mut self, py: Python<'_>) -> PyResult<Step> {
        if let Some(start) = self.start.take() {
            let made = start(py)?;
            if !made.bind(py).hasattr("send")? {
                // A plain function registered where a coroutine was expected: it has run.
                return Ok(Step::Done(Some(made)));
            }
            self.coroutine = Some(made);
        }
        let Some(coroutine) = &self.coroutine else {
            return Ok(Step::Done(None));
        };
        match coroutine.bind(py).call_method1("send", (py.None(),)) {
            Ok(yielded) if yielded.is_none() => Ok(Step::Yield),
            Ok(yielded) => match yielded.downcast::<PyFuture>() {
                Ok(future) => Ok(Step::Await(future.borrow().shared.clone())),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "an async callback awaited {}; kairos runs coroutines on its own executor, so they await kairos futures (client.call_async, clock.sleep_async, kairos.Future), not asyncio ones",
                    yielded.repr()?
                ))),
            },
            Err(err) if err.is_instance_of::<PyStopIteration>(py) => {
                let returned = err.value(py).getattr("value")?.unbind();
                Ok(Step::Done(Some(returned)))
            }
            Err(err) => Err(err),
        }
    }
}

impl Future for CoroutineTask {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            if let Some(awaiting) = &self.awaiting {
                if awaiting.poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.awaiting = None;
            }
            let step = Python::with_gil(|py| match self.resume(py) {
                Ok(Step::Done(returned)) => {
                    if let Some(slot) = &self.result {
                        *slot.lock() = Some(Ok(returned.unwrap_or_else(|| py.None())));
                    }
                    None
                }
                Ok(Step::Await(shared)) => Some(Some(shared)),
                Ok(Step::Yield) => Some(None),
                Err(err) => {
                    match &self.result {
                        Some(slot) => *slot.lock() = Some(Err(err)),
                        None => self.env.report(py, err),
                    }
                    None
                }
            });
            match step {
                Some(Some(shared)) => self.awaiting = Some(shared),
                Some(None) => {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                None => {
                    self.coroutine = None;
                    return Poll::Ready(());
                }
            }
        }
    }
}

/// A service response as a future source.
pub(crate) struct ResponseSource<Resp: Send + 'static> {
    pub(crate) future: kairos::graph::ResponseFuture<Resp>,
    pub(crate) layout: Arc<crate::convert::Layout>,
}

fn response_outcome<Resp: serde::Serialize + Send + 'static>(
    result: Result<Resp, kairos::graph::CallError>,
    layout: Arc<crate::convert::Layout>,
) -> Outcome {
    match result {
        Ok(response) => Ok(Box::new(move |py| {
            crate::convert::to_py(py, &response, &layout)
        })),
        Err(err) => Err(errors::call_error(err)),
    }
}

impl<Resp: serde::Serialize + Send + 'static> Source for ResponseSource<Resp> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Outcome> {
        Pin::new(&mut self.future)
            .poll(cx)
            .map(|result| response_outcome(result, self.layout.clone()))
    }

    fn on_done(self: Box<Self>, done: DoneFn) -> Result<(), Box<dyn Source>> {
        let layout = self.layout;
        // As in rclpy, a response completes its future only when an executor takes it: a
        // response that comes between two `spin_once` calls waits for the next one (and
        // ends it) rather than completing unseen.
        self.future
            .on_done_spun(move |result| done(response_outcome(result, layout)));
        Ok(())
    }
}

/// A sleep on a kairos clock as a future source.
pub(crate) struct SleepSource(pub(crate) kairos::time::Sleep);

impl Source for SleepSource {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Outcome> {
        Pin::new(&mut self.0).poll(cx).map(|result| match result {
            Ok(()) => Ok(Box::new(|py: Python<'_>| Ok(py.None())) as Convert),
            Err(err) => Err(errors::wait_error(err)),
        })
    }

    fn on_done(self: Box<Self>, _done: DoneFn) -> Result<(), Box<dyn Source>> {
        // A sleep completes only while something awaits it.
        Err(self)
    }
}
