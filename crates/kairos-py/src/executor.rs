//! Executors for Python: kairos's executors, spun with the GIL released.
//!
//! What this module promises:
//! - `spin`, `spin_once` and `spin_until_future_complete` are the kairos ones: the thread
//!   that calls them waits without the GIL, and takes it only to run a Python callback.
//! - A nested spin from a callback raises `WouldDeadlock` at once (kairos's `NestedSpin`).
//! - The first exception a callback raises ends the spin and is raised by it.
//! - `shutdown(timeout_sec)` returns by its deadline with kairos's report.
//! - `wait_for_ready` hands one ready callback out unrun (rclpy's custom executors run
//!   it where they like); it holds its callback group until it has run or is dropped.

use crate::env::{ErrorSink, FOREVER};
use crate::errors::exec_error;
use crate::future::{Awaiting, PyFuture};
use crate::node::NodeCore;
use crate::time::duration_arg;
use kairos::exec::{ExecError, Executor, ReadyCallback, ShutdownReport};
use parking_lot::Mutex;
use pyo3::prelude::*;
use std::sync::Arc;

/// Every executor Python made, for `kairos.shutdown()`.
static EXECUTORS: Mutex<Vec<Executor>> = Mutex::new(Vec::new());

/// Shuts down every executor Python made, each with `deadline`; their reports.
pub(crate) fn shutdown_all(
    py: Python<'_>,
    deadline: kairos::time::Duration,
) -> Vec<PyShutdownReport> {
    let executors = std::mem::take(&mut *EXECUTORS.lock());
    py.allow_threads(|| {
        executors
            .iter()
            .map(|e| PyShutdownReport {
                report: e.shutdown(deadline),
            })
            .collect()
    })
}

/// The Rust half of `kairos.executors.SingleThreadedExecutor` / `MultiThreadedExecutor`.
#[pyclass(name = "ExecutorCore", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyExecutor {
    sink: Arc<ErrorSink>,
}

impl PyExecutor {
    fn executor(&self) -> &Executor {
        &self.sink.executor
    }

    /// After a spin: the first exception a callback raised, then a pending signal.
    fn finish<T>(&self, py: Python<'_>, result: Result<T, ExecError>) -> PyResult<Option<T>> {
        if let Some(err) = self.sink.error.lock().take() {
            return Err(err);
        }
        py.check_signals()?;
        match result {
            Ok(value) => Ok(Some(value)),
            // As rclpy: spinning a shut down or cancelled executor just returns.
            Err(ExecError::ShutDown | ExecError::Cancelled) => Ok(None),
            Err(err) => Err(exec_error(err)),
        }
    }
}

fn timeout_arg(timeout_sec: Option<&Bound<'_, PyAny>>) -> PyResult<kairos::time::Duration> {
    match timeout_sec {
        Some(t) if !t.is_none() => duration_arg(t),
        _ => Ok(FOREVER),
    }
}

#[pymethods]
impl PyExecutor {
    /// `num_threads` 1 is single threaded, `None` one worker per core.
    #[new]
    #[pyo3(signature = (num_threads = Some(1)))]
    fn new(num_threads: Option<usize>) -> PyResult<Self> {
        let executor = match num_threads {
            Some(1) => Executor::single_threaded(),
            Some(n) => Executor::multi_threaded(n).map_err(exec_error)?,
            None => Executor::multi_threaded_default(),
        };
        EXECUTORS.lock().push(executor.clone());
        Ok(Self {
            sink: Arc::new(ErrorSink {
                error: Mutex::new(None),
                executor,
            }),
        })
    }

    #[getter]
    fn num_threads(&self) -> usize {
        self.executor().workers()
    }

    /// Seconds a worker that ran out of work polls for more before it sleeps (Rust's
    /// `Executor::set_idle_spin`): 0 to 1.
    #[getter]
    fn idle_spin_sec(&self) -> f64 {
        self.executor().idle_spin().as_secs_f64()
    }

    #[setter]
    fn set_idle_spin_sec(&self, window: &Bound<'_, PyAny>) -> PyResult<()> {
        let window = duration_arg(window)?;
        self.executor()
            .set_idle_spin(window)
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))
    }

    /// Whether the executor has been shut down (by `shutdown()` or the context's).
    #[getter]
    fn is_shut_down(&self) -> bool {
        self.executor().shutdown_token().is_cancelled()
    }

    fn add_node(&self, node: &NodeCore) -> PyResult<()> {
        self.executor().add_node(&node.node).map_err(exec_error)?;
        *node.env.sink.lock() = Some(self.sink.clone());
        Ok(())
    }

    fn remove_node(&self, node: &NodeCore) -> PyResult<()> {
        match self.executor().remove_node(&node.node) {
            // A shutdown already detached it.
            Ok(()) | Err(ExecError::NotAttached { .. }) => {}
            Err(err) => return Err(exec_error(err)),
        }
        node.env.sink.lock().take();
        Ok(())
    }

    /// Runs callbacks until shutdown, cancel, or a callback's exception.
    fn spin(&self, py: Python<'_>) -> PyResult<()> {
        let executor = self.executor();
        let result = py.allow_threads(|| executor.spin());
        self.finish(py, result).map(|_| ())
    }

    /// Runs at most one callback, waiting up to `timeout_sec` (forever if `None`) for one.
    #[pyo3(signature = (timeout_sec = None))]
    fn spin_once(&self, py: Python<'_>, timeout_sec: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let timeout = timeout_arg(timeout_sec)?;
        let executor = self.executor();
        let result = py.allow_threads(|| executor.spin_once(timeout));
        Ok(self.finish(py, result)?.unwrap_or(false))
    }

    /// Runs callbacks until `future` is done or `timeout_sec` passed; whether it is done.
    #[pyo3(signature = (future, timeout_sec = None))]
    fn spin_until_future_complete(
        &self,
        py: Python<'_>,
        future: PyRef<'_, PyFuture>,
        timeout_sec: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let timeout = timeout_arg(timeout_sec)?;
        let awaiting = Awaiting(future.shared.clone());
        let executor = self.executor();
        let result = py.allow_threads(|| executor.spin_until_future_complete(awaiting, timeout));
        match result {
            // As rclpy: a timeout returns with the future still pending.
            Err(ExecError::Timeout { .. }) => {
                self.finish(py, Ok(()))?;
                Ok(false)
            }
            other => Ok(self.finish(py, other)?.is_some()),
        }
    }

    /// Runs at most one callback, waiting up to `timeout_sec` for one, and returns as soon
    /// as `future` is done (another thread may complete it); whether it is done.
    #[pyo3(signature = (future, timeout_sec = None))]
    fn spin_once_until_future_complete(
        &self,
        py: Python<'_>,
        future: PyRef<'_, PyFuture>,
        timeout_sec: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let timeout = timeout_arg(timeout_sec)?;
        let awaiting = Awaiting(future.shared.clone());
        let executor = self.executor();
        let result =
            py.allow_threads(|| executor.spin_once_until_future_complete(awaiting, timeout));
        Ok(self.finish(py, result)?.flatten().is_some())
    }

    /// Makes the spin in progress return.
    /// Waits up to `timeout_sec` (forever if `None`) for one ready callback and returns
    /// it unrun; `None` on timeout, cancel or shutdown.
    #[pyo3(signature = (timeout_sec = None))]
    fn wait_for_ready(
        &self,
        py: Python<'_>,
        timeout_sec: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<PyReadyCallback>> {
        let timeout = timeout_arg(timeout_sec)?;
        let executor = self.executor();
        let result = py.allow_threads(|| executor.wait_for_ready(timeout));
        Ok(self
            .finish(py, result)?
            .flatten()
            .map(|work| PyReadyCallback {
                group_id: work.group().id(),
                name: work.name().to_owned(),
                work: Mutex::new(Some(work)),
            }))
    }

    fn cancel(&self) {
        self.executor().cancel();
    }

    /// Shuts down within `timeout_sec` (1 s by default); the report names the callbacks
    /// still running. The report is true when shutdown was clean.
    #[pyo3(signature = (timeout_sec = None))]
    fn shutdown(
        &self,
        py: Python<'_>,
        timeout_sec: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyShutdownReport> {
        let deadline = match timeout_sec {
            Some(t) if !t.is_none() => duration_arg(t)?,
            _ => kairos::time::Duration::from_secs(1),
        };
        let executor = self.executor();
        let report = py.allow_threads(|| executor.shutdown(deadline));
        Ok(PyShutdownReport { report })
    }
}

/// What an executor's shutdown left behind (kairos's `ShutdownReport`); true when clean.
#[pyclass(name = "ShutdownReport", module = "kairos", frozen)]
#[derive(Debug)]
pub struct PyShutdownReport {
    report: ShutdownReport,
}

#[pymethods]
impl PyShutdownReport {
    #[getter]
    fn is_clean(&self) -> bool {
        self.report.is_clean()
    }

    fn __bool__(&self) -> bool {
        self.report.is_clean()
    }

    fn __str__(&self) -> String {
        self.report.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<kairos.ShutdownReport {}>", self.report)
    }
}

/// One ready callback handed out by `ExecutorCore.wait_for_ready`, not run yet.
#[pyclass(name = "ReadyCallback", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyReadyCallback {
    work: Mutex<Option<ReadyCallback>>,
    group_id: u64,
    name: String,
}

#[pymethods]
impl PyReadyCallback {
    /// The id of its callback group (`CallbackGroupHandle.id`).
    #[getter]
    fn group_id(&self) -> u64 {
        self.group_id
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Runs the callback on this thread (the GIL released but for the callback itself);
    /// true if it ran. A second call does nothing.
    fn run(&self, py: Python<'_>) -> bool {
        let work = self.work.lock().take();
        work.is_some_and(|work| py.allow_threads(|| work.run()))
    }
}
