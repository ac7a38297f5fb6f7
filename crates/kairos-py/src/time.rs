//! Clocks, times and sleeps for Python, on kairos's clocks.
//!
//! What this module promises: a sleep is the kairos sleep, so it never returns before its
//! deadline; it releases the GIL while it waits; inside a callback it ends when that
//! callback's executor shuts down, and anywhere it ends when `kairos.shutdown()` runs
//! (then it returns `False`, as rclpy's `Clock.sleep_for` does when the context shuts down).

use crate::errors::wait_error;
use crate::future::{PyFuture, SleepSource};
use kairos::time::{Clock, Duration, Time, WaitError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A duration from Python: seconds as a number, or an object with `nanoseconds`
/// (`kairos.duration.Duration`, rclpy's `Duration`).
pub(crate) fn duration_arg(value: &Bound<'_, PyAny>) -> PyResult<Duration> {
    if let Ok(ns) = value.getattr("nanoseconds") {
        return Ok(Duration::from_nanos(ns.extract()?));
    }
    let secs: f64 = value.extract().map_err(|_| {
        PyValueError::new_err("a duration is a number of seconds or a kairos.duration.Duration")
    })?;
    if !secs.is_finite() || secs < 0.0 {
        return Err(PyValueError::new_err(format!(
            "a duration must be a finite number of seconds >= 0, got {secs}"
        )));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A point in time of one clock, as rclpy's `Time`.
#[pyclass(name = "Time", module = "kairos", frozen)]
#[derive(Debug, Clone, Copy)]
pub struct PyTime {
    pub(crate) time: Time,
}

#[pymethods]
impl PyTime {
    #[getter]
    fn nanoseconds(&self) -> i64 {
        self.time.nanos()
    }

    /// `(seconds, nanoseconds)`, as rclpy.
    fn seconds_nanoseconds(&self) -> (i64, i64) {
        let ns = self.time.nanos();
        (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000))
    }

    /// `"system"`, `"steady"` or `"sim"`.
    #[getter]
    fn clock_type(&self) -> &'static str {
        self.time.kind().name()
    }

    fn __repr__(&self) -> String {
        format!(
            "Time(nanoseconds={}, clock_type={})",
            self.time.nanos(),
            self.time.kind().name()
        )
    }
}

/// A node's clock (rclpy's `Clock`), or the steady or system clock.
#[pyclass(name = "Clock", module = "kairos", frozen)]
#[derive(Debug)]
pub struct PyClock {
    pub(crate) clock: Clock,
}

#[pymethods]
impl PyClock {
    /// `Clock()` is the system clock, `Clock("steady")` the steady (monotonic) clock.
    #[new]
    #[pyo3(signature = (clock_type = "system"))]
    fn new(clock_type: &str) -> PyResult<Self> {
        let clock = match clock_type {
            "system" | "ros" => Clock::system(),
            "steady" => Clock::steady(),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown clock type '{other}': 'system' or 'steady' (a node's clock comes from node.get_clock())"
                )));
            }
        };
        Ok(Self { clock })
    }

    fn now(&self) -> PyTime {
        PyTime {
            time: self.clock.now(),
        }
    }

    #[getter]
    fn clock_type(&self) -> &'static str {
        self.clock.kind().name()
    }

    /// Sleeps at least `duration` of this clock; `False` if shutdown (or `cancel`, a
    /// [`PyCancel`] of the session) woke it first.
    #[pyo3(signature = (duration, cancel = None))]
    fn sleep_for(
        &self,
        py: Python<'_>,
        duration: &Bound<'_, PyAny>,
        cancel: Option<PyRef<'_, PyCancel>>,
    ) -> PyResult<bool> {
        let duration = duration_arg(duration)?;
        let cancel = match cancel {
            Some(cancel) => cancel.token.clone(),
            None => crate::session::shutdown_token(),
        };
        let clock = self.clock.clone();
        ended(py.allow_threads(move || clock.sleep_for(duration, &cancel)))
    }

    /// Sleeps until this clock reads at least `until`; `False` if shutdown woke it first.
    fn sleep_until(&self, py: Python<'_>, until: PyRef<'_, PyTime>) -> PyResult<bool> {
        let cancel = crate::session::shutdown_token();
        let clock = self.clock.clone();
        let deadline = until.time;
        ended(py.allow_threads(move || clock.sleep_until(deadline, &cancel)))
    }

    /// A future done once this clock has advanced by `duration`: `await` it in an
    /// `async def` callback (the executor's other callbacks run meanwhile).
    fn sleep_async(&self, duration: &Bound<'_, PyAny>) -> PyResult<PyFuture> {
        let duration = duration_arg(duration)?;
        let cancel = crate::session::shutdown_token();
        let deadline = self.clock.now() + duration;
        Ok(PyFuture::from_source(Box::new(SleepSource(
            self.clock.sleep_until_async(deadline, &cancel),
        ))))
    }
}

/// A way to end one object's sleeps early (`Rate.destroy()`), which the session's
/// shutdown also ends.
#[pyclass(name = "Cancel", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct PyCancel {
    token: kairos::time::CancelToken,
}

#[pymethods]
impl PyCancel {
    #[new]
    fn new() -> Self {
        Self {
            token: crate::session::shutdown_token().child(),
        }
    }

    /// Wakes every sleep given this token, now and later.
    fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether it was cancelled, or the session shut down.
    fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

fn ended(result: Result<(), WaitError>) -> PyResult<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(WaitError::Cancelled) => Ok(false),
        Err(err) => Err(wait_error(err)),
    }
}

/// The steady clock, for code that measures.
pub(crate) fn steady_now_ns() -> i64 {
    Clock::steady().now().nanos()
}
