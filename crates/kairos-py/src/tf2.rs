//! tf2 for Python: the Rust transform buffer (`kairos_tf2_ros::Buffer`) behind
//! `tf2_py.BufferCore` and `tf2_ros.Buffer`, so Python and Rust look up the same way.
//!
//! What this module promises:
//! - **One implementation.** Every store and lookup is `kairos_tf2::BufferCore`'s: tf2's
//!   answers and tf2's errors, raised as tf2_py's exception classes (`LookupException`,
//!   `ConnectivityException`, `ExtrapolationException`, `InvalidArgumentException`,
//!   `TimeoutException`, all `TransformException`s) with the Rust error's message.
//! - **Waits are kairos's waits.** A lookup with a timeout releases the GIL and waits on
//!   the buffer's clock (a node's: simulation time when it uses it) until an insertion
//!   answers it, its timeout, or `kairos.shutdown()`; never polling. One that could never
//!   complete (the listener's subscriptions cannot run while the caller blocks) raises
//!   `kairos.WouldDeadlock` at once, naming the group and the fix in Python's words.
//! - **Messages stay Python's.** A transform comes in as any object with
//!   `geometry_msgs/TransformStamped`'s fields and goes out as a tuple the Python side
//!   builds the message from; times are rclpy `Time`s (`nanoseconds`) or
//!   `builtin_interfaces/Time` messages (`sec`, `nanosec`).

use crate::errors::WouldDeadlock;
use crate::node::PySubscription;
use crate::time::{PyClock, duration_arg};
use kairos::exec::WaitAdvice;
use kairos::time::Clock;
use kairos_tf2::{Quaternion, Stamp, Tf2Error, Transform, TransformStamped, Vector3};
use kairos_tf2_ros::{Buffer, TransformError};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;

create_exception!(
    tf2_py,
    TransformException,
    PyException,
    "Any tf2 error: the base of the others."
);
create_exception!(
    tf2_py,
    LookupException,
    TransformException,
    "A frame the buffer does not know (the message lists the frames it knows)."
);
create_exception!(
    tf2_py,
    ConnectivityException,
    TransformException,
    "Two frames in trees that do not connect (the message names both roots)."
);
create_exception!(
    tf2_py,
    ExtrapolationException,
    TransformException,
    "A time outside the range of stamps held (the message gives both)."
);
create_exception!(
    tf2_py,
    InvalidArgumentException,
    TransformException,
    "An empty or '/'-led frame id, a NaN, a quaternion that is not normalised."
);
create_exception!(
    tf2_py,
    TimeoutException,
    TransformException,
    "No transform within the timeout, and no lookup error to say why."
);

/// What a `WouldDeadlock` of a Python lookup offers besides a multi-threaded executor.
const PYTHON_ADVICE: WaitAdvice<'static> = WaitAdvice {
    non_blocking: "look up without a timeout (buffer.lookup_transform(..) with no timeout, after buffer.can_transform(..))",
    await_instead: "`await buffer.lookup_transform_async(..)` in an `async def` callback",
    relocate: Some("the TransformListener's node (spin it on an executor of its own)"),
};

/// tf2_py's exception class for `error`, with its message. A timeout raises the class of
/// the error that kept the transform away (as tf2's lookups do once their wait is over);
/// its message says it timed out.
pub(crate) fn tf2_error(error: &Tf2Error) -> PyErr {
    fn code(error: &Tf2Error) -> u8 {
        match error {
            Tf2Error::Timeout {
                last_error: Some(last),
                ..
            } => code(last),
            other => other.tf2_code(),
        }
    }
    let text = error.to_string();
    match code(error) {
        1 => LookupException::new_err(text),
        2 => ConnectivityException::new_err(text),
        3 => ExtrapolationException::new_err(text),
        4 => InvalidArgumentException::new_err(text),
        5 => TimeoutException::new_err(text),
        _ => TransformException::new_err(text),
    }
}

/// A waiting lookup's error: tf2's classes, `WouldDeadlock`, or kairos's wait errors.
fn transform_error(error: TransformError) -> PyErr {
    match error {
        TransformError::Tf2(e) => tf2_error(&e),
        TransformError::WouldDeadlock(w) => WouldDeadlock::new_err(w.to_string()),
        TransformError::Cancelled { .. } | TransformError::ShutDown { .. } => {
            crate::errors::WaitCancelled::new_err(error.to_string())
        }
        TransformError::Clock { reason, .. } => crate::errors::wait_error(reason),
        other => TransformException::new_err(other.to_string()),
    }
}

/// A time from Python: `None` (the latest common time), an rclpy `Time`
/// (`nanoseconds`), or a `builtin_interfaces/Time` message (`sec`, `nanosec`).
fn stamp_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Stamp> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Stamp::LATEST);
    };
    if let Ok(ns) = value.getattr("nanoseconds") {
        return Ok(Stamp::from_nanos(ns.extract()?));
    }
    match (value.getattr("sec"), value.getattr("nanosec")) {
        (Ok(sec), Ok(nanosec)) => {
            let (sec, nanosec): (i64, i64) = (sec.extract()?, nanosec.extract()?);
            Ok(Stamp::from_nanos(
                sec.saturating_mul(1_000_000_000).saturating_add(nanosec),
            ))
        }
        _ => Err(PyTypeError::new_err(format!(
            "a time is an rclpy Time (with nanoseconds) or a builtin_interfaces/Time message (with sec and nanosec), not {}",
            value.get_type().name()?
        ))),
    }
}

fn field(value: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    value
        .getattr(name)?
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("a transform's {name} must be a number")))
}

/// A `geometry_msgs/TransformStamped` (any object with its fields) as the Rust one.
fn transform_arg(value: &Bound<'_, PyAny>) -> PyResult<TransformStamped> {
    let header = value.getattr("header")?;
    let stamp = stamp_arg(Some(&header.getattr("stamp")?))?;
    let parent: String = header.getattr("frame_id")?.extract()?;
    let child: String = value.getattr("child_frame_id")?.extract()?;
    let transform = value.getattr("transform")?;
    let (t, r) = (
        transform.getattr("translation")?,
        transform.getattr("rotation")?,
    );
    let translation = Vector3::new(field(&t, "x")?, field(&t, "y")?, field(&t, "z")?);
    let rotation = Quaternion::new(
        field(&r, "x")?,
        field(&r, "y")?,
        field(&r, "z")?,
        field(&r, "w")?,
    );
    Ok(TransformStamped::new(
        &parent,
        &child,
        stamp,
        Transform::new(translation, rotation),
    ))
}

/// The fields of a found transform, for the Python side to build its message from:
/// `(frame_id, child_frame_id, nanoseconds, (x, y, z), (x, y, z, w))`.
type Fields = (String, String, i64, (f64, f64, f64), (f64, f64, f64, f64));

fn fields(found: TransformStamped) -> Fields {
    let (t, r) = (found.transform.translation, found.transform.rotation);
    (
        found.header.frame_id,
        found.child_frame_id,
        found.header.stamp.nanos(),
        (t.x, t.y, t.z),
        (r.x, r.y, r.z, r.w),
    )
}

/// `(ok, error message)`, as tf2_py's `can_transform_core` returns.
fn checked(result: Result<(), Tf2Error>) -> (bool, String) {
    match result {
        Ok(()) => (true, String::new()),
        Err(e) => (false, e.to_string()),
    }
}

/// The Rust buffer behind `tf2_py.BufferCore` and `tf2_ros.Buffer` (see the module).
#[pyclass(name = "Tf2Buffer", module = "kairos._kairos", frozen)]
pub struct PyTf2Buffer {
    buffer: Buffer,
}

impl std::fmt::Debug for PyTf2Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tf2Buffer")
    }
}

#[pymethods]
impl PyTf2Buffer {
    /// A buffer keeping `cache_time` of each frame (10 s if `None`), whose waits time
    /// out on `clock` (the system clock if `None`).
    #[new]
    #[pyo3(signature = (cache_time = None, clock = None))]
    fn new(
        cache_time: Option<&Bound<'_, PyAny>>,
        clock: Option<PyRef<'_, PyClock>>,
    ) -> PyResult<Self> {
        let clock = clock.map_or_else(Clock::system, |c| c.clock.clone());
        let buffer = match cache_time.filter(|c| !c.is_none()) {
            Some(length) => {
                let length = duration_arg(length)?;
                Buffer::with_cache_length(
                    clock,
                    std::time::Duration::from_nanos(length.as_nanos().max(0) as u64),
                )
            }
            None => Buffer::new(clock),
        };
        buffer.set_wait_advice(PYTHON_ADVICE);
        Ok(Self { buffer })
    }

    /// Stores `transform` (a `geometry_msgs/TransformStamped`) from `authority`.
    #[pyo3(signature = (transform, authority, is_static = false))]
    fn set_transform(
        &self,
        transform: &Bound<'_, PyAny>,
        authority: &str,
        is_static: bool,
    ) -> PyResult<()> {
        let transform = transform_arg(transform)?;
        self.buffer
            .set_transform(&transform, authority, is_static)
            .map_err(|e| tf2_error(&e))
    }

    /// Stores every transform of `transforms` (one `TFMessage`'s), waking the waiting
    /// lookups once; returns the messages of those refused.
    fn set_transforms(
        &self,
        transforms: &Bound<'_, PyAny>,
        authority: &str,
        is_static: bool,
    ) -> PyResult<Vec<String>> {
        let transforms = transforms
            .try_iter()?
            .map(|t| transform_arg(&t?))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(self
            .buffer
            .set_transforms(&transforms, authority, is_static)
            .iter()
            .map(Tf2Error::to_string)
            .collect())
    }

    /// The transform from `source` to `target` at `time`, as held now.
    #[pyo3(signature = (target, source, time = None))]
    fn lookup(
        &self,
        target: &str,
        source: &str,
        time: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Fields> {
        let time = stamp_arg(time)?;
        self.buffer
            .lookup_transform(target, source, time)
            .map(fields)
            .map_err(|e| tf2_error(&e))
    }

    /// The transform from `source` at `source_time` to `target` at `target_time` through
    /// `fixed`, as held now.
    fn lookup_full(
        &self,
        target: &str,
        target_time: Option<&Bound<'_, PyAny>>,
        source: &str,
        source_time: Option<&Bound<'_, PyAny>>,
        fixed: &str,
    ) -> PyResult<Fields> {
        let (tt, st) = (stamp_arg(target_time)?, stamp_arg(source_time)?);
        self.buffer
            .with_core(|core| core.lookup_transform_full(target, tt, source, st, fixed))
            .map(fields)
            .map_err(|e| tf2_error(&e))
    }

    /// `(True, "")` if the transform is held now, else `(False, why)`.
    #[pyo3(signature = (target, source, time = None))]
    fn check(
        &self,
        target: &str,
        source: &str,
        time: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(bool, String)> {
        let time = stamp_arg(time)?;
        Ok(checked(self.buffer.with_core(|core| {
            core.check_transform(target, source, time)
        })))
    }

    /// [`PyTf2Buffer::check`] with a fixed frame and two times.
    fn check_full(
        &self,
        target: &str,
        target_time: Option<&Bound<'_, PyAny>>,
        source: &str,
        source_time: Option<&Bound<'_, PyAny>>,
        fixed: &str,
    ) -> PyResult<(bool, String)> {
        let (tt, st) = (stamp_arg(target_time)?, stamp_arg(source_time)?);
        Ok(checked(self.buffer.with_core(|core| {
            core.check_transform_full(target, tt, source, st, fixed)
        })))
    }

    /// [`PyTf2Buffer::lookup`], waiting up to `timeout` of the buffer's clock for the
    /// transform (the GIL released).
    fn lookup_wait(
        &self,
        py: Python<'_>,
        target: &str,
        source: &str,
        time: Option<&Bound<'_, PyAny>>,
        timeout: &Bound<'_, PyAny>,
    ) -> PyResult<Fields> {
        let (time, timeout) = (stamp_arg(time)?, duration_arg(timeout)?);
        let (buffer, cancel) = (self.buffer.clone(), crate::session::shutdown_token());
        py.allow_threads(|| {
            buffer.lookup_transform_with_cancel(target, source, time, timeout, &cancel)
        })
        .map(fields)
        .map_err(transform_error)
    }

    /// [`PyTf2Buffer::lookup_full`], waiting as [`PyTf2Buffer::lookup_wait`] does.
    #[allow(clippy::too_many_arguments)]
    fn lookup_full_wait(
        &self,
        py: Python<'_>,
        target: &str,
        target_time: Option<&Bound<'_, PyAny>>,
        source: &str,
        source_time: Option<&Bound<'_, PyAny>>,
        fixed: &str,
        timeout: &Bound<'_, PyAny>,
    ) -> PyResult<Fields> {
        let (tt, st) = (stamp_arg(target_time)?, stamp_arg(source_time)?);
        let timeout = duration_arg(timeout)?;
        let (buffer, cancel) = (self.buffer.clone(), crate::session::shutdown_token());
        py.allow_threads(|| {
            buffer
                .lookup_transform_full_with_cancel(target, tt, source, st, fixed, timeout, &cancel)
        })
        .map(fields)
        .map_err(transform_error)
    }

    /// `(True, "")` once the transform is held, waiting up to `timeout`; `(False, why)`
    /// when the wait ran out. `WouldDeadlock` and shutdown raise.
    fn check_wait(
        &self,
        py: Python<'_>,
        target: &str,
        source: &str,
        time: Option<&Bound<'_, PyAny>>,
        timeout: &Bound<'_, PyAny>,
    ) -> PyResult<(bool, String)> {
        let (time, timeout) = (stamp_arg(time)?, duration_arg(timeout)?);
        let (buffer, cancel) = (self.buffer.clone(), crate::session::shutdown_token());
        waited(py.allow_threads(|| {
            buffer.check_transform_timeout(target, source, time, timeout, &cancel)
        }))
    }

    /// [`PyTf2Buffer::check_wait`] with a fixed frame and two times.
    #[allow(clippy::too_many_arguments)]
    fn check_full_wait(
        &self,
        py: Python<'_>,
        target: &str,
        target_time: Option<&Bound<'_, PyAny>>,
        source: &str,
        source_time: Option<&Bound<'_, PyAny>>,
        fixed: &str,
        timeout: &Bound<'_, PyAny>,
    ) -> PyResult<(bool, String)> {
        let (tt, st) = (stamp_arg(target_time)?, stamp_arg(source_time)?);
        let timeout = duration_arg(timeout)?;
        let (buffer, cancel) = (self.buffer.clone(), crate::session::shutdown_token());
        waited(py.allow_threads(|| {
            buffer.check_transform_full_timeout(target, tt, source, st, fixed, timeout, &cancel)
        }))
    }

    /// The latest time both frames have data for, in nanoseconds (0 if either is static
    /// all the way).
    fn latest_common_time(&self, target: &str, source: &str) -> PyResult<i64> {
        self.buffer
            .with_core(|core| core.latest_common_time(target, source))
            .map(Stamp::nanos)
            .map_err(|e| tf2_error(&e))
    }

    /// Drops every time-stamped transform (static ones stay, as in tf2).
    fn clear(&self) {
        self.buffer.clear();
    }

    fn frame_exists(&self, frame: &str) -> bool {
        self.buffer.with_core(|core| core.frame_exists(frame))
    }

    /// The frames with a parent, by name.
    fn frame_names(&self) -> Vec<String> {
        self.buffer.with_core(|core| {
            core.frames()
                .into_iter()
                .filter(|f| f.parent.is_some())
                .map(|f| f.name)
                .collect()
        })
    }

    /// `(name, parent, authority, is_static, oldest ns, newest ns, stored)` of every frame
    /// with a parent, for the YAML and dot forms.
    #[allow(clippy::type_complexity)]
    fn frames(&self) -> Vec<(String, String, String, bool, i64, i64, usize)> {
        self.buffer.with_core(|core| {
            core.frames()
                .into_iter()
                .filter_map(|f| {
                    let parent = f.parent?;
                    Some((
                        f.name,
                        parent,
                        f.authority,
                        f.is_static,
                        f.oldest.map_or(0, Stamp::nanos),
                        f.newest.map_or(0, Stamp::nanos),
                        f.stored,
                    ))
                })
                .collect()
        })
    }

    fn all_frames_as_string(&self) -> String {
        self.buffer.with_core(|core| core.all_frames_as_string())
    }

    /// Makes `subscriptions` (a `TransformListener`'s) what a blocking wait of this buffer
    /// needs to run; returns the key `remove_listener` takes.
    fn add_listener(&self, subscriptions: Vec<PyRef<'_, PySubscription>>) -> u64 {
        self.buffer
            .add_listener(subscriptions.iter().map(|s| s.completer.clone()).collect())
    }

    fn remove_listener(&self, key: u64) {
        self.buffer.remove_listener(key);
    }

    /// How many lookups wait on this buffer now (blocked threads): for tests and
    /// diagnostics.
    fn waiters(&self) -> usize {
        self.buffer.waiters()
    }
}

/// A check's `(ok, why)` after a wait: a timeout is `(False, why)`, the rest raise.
fn waited(result: Result<(), TransformError>) -> PyResult<(bool, String)> {
    match result {
        Ok(()) => Ok((true, String::new())),
        Err(TransformError::Tf2(e)) => Ok((false, e.to_string())),
        Err(other) => Err(transform_error(other)),
    }
}

/// Registers the classes and exceptions of this module in `kairos._kairos`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyTf2Buffer>()?;
    for (name, class) in [
        ("TransformException", py.get_type::<TransformException>()),
        ("LookupException", py.get_type::<LookupException>()),
        (
            "ConnectivityException",
            py.get_type::<ConnectivityException>(),
        ),
        (
            "ExtrapolationException",
            py.get_type::<ExtrapolationException>(),
        ),
        (
            "InvalidArgumentException",
            py.get_type::<InvalidArgumentException>(),
        ),
        ("TimeoutException", py.get_type::<TimeoutException>()),
    ] {
        m.add(name, class)?;
    }
    Ok(())
}
