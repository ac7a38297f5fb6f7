//! A Rust node inside the Python process, written against the plain Rust API: it shows
//! (and the tests prove) that Python and Rust nodes of one process share topics and
//! services: one `Context`, the same Rust message types, no bridge in between.

use crate::errors::{exec_error, graph_error};
use crate::typed::Relayed;
use kairos::exec::{Executor, SpinThread};
use kairos::graph::{Node, Qos, Service, Subscription};
use kairos_zenoh::msg::{AddTwoIntsRequest, AddTwoIntsResponse, StringMsg};
use parking_lot::Mutex;
use pyo3::prelude::*;
use std::sync::Arc;

/// `RustEchoNode(name, input, output, service)`: republishes each `std_msgs/String` of
/// `input` on `output` as `"rust heard: <data>"`, and serves `example_interfaces/AddTwoInts`
/// on `service`; spun by its own Rust executor on its own thread until `stop()`.
#[pyclass(name = "RustEchoNode", module = "kairos._kairos", frozen)]
#[derive(Debug)]
pub struct RustEchoNode {
    executor: Executor,
    spin: Mutex<Option<SpinThread>>,
    _subscription: Subscription<StringMsg>,
    _service: Service<AddTwoIntsRequest, AddTwoIntsResponse>,
}

#[pymethods]
impl RustEchoNode {
    #[new]
    fn new(py: Python<'_>, name: &str, input: &str, output: &str, service: &str) -> PyResult<Self> {
        crate::session::init_transport()?;
        let node = Node::new(name).map_err(graph_error)?;
        let publisher = Arc::new(
            node.create_publisher::<StringMsg>(output, Qos::keep_last(100))
                .map_err(graph_error)?,
        );
        let subscription = node
            .create_subscription(input, Qos::keep_last(100), move |m: &StringMsg| {
                publisher.publish(StringMsg {
                    data: format!("rust heard: {}", m.data),
                });
            })
            .map_err(graph_error)?;
        let service = node
            .create_service(service, |r: AddTwoIntsRequest| AddTwoIntsResponse {
                sum: r.a + r.b,
            })
            .map_err(graph_error)?;
        let executor = Executor::single_threaded();
        executor.add_node(&node).map_err(exec_error)?;
        let spin = py
            .allow_threads(|| executor.spin_thread())
            .map_err(exec_error)?;
        Ok(Self {
            executor,
            spin: Mutex::new(Some(spin)),
            _subscription: subscription,
            _service: service,
        })
    }

    /// Shuts the node's executor down (1 s deadline) and joins its thread.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        stop_spinning(py, &self.executor, &self.spin)
    }
}

/// `RustRelay(type_name, name, input, output)`: a Rust node (plain Rust API, generic over
/// the message type) that republishes every message of `input` on `output`; spun by its
/// own Rust executor on its own thread until `stop()`. `last_json()` is the last message
/// it received, as serde_json writes the Rust value.
#[pyclass(name = "RustRelay", module = "kairos._kairos", frozen)]
pub struct RustRelay {
    executor: Executor,
    spin: Mutex<Option<SpinThread>>,
    relayed: Relayed,
}

impl std::fmt::Debug for RustRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RustRelay").finish_non_exhaustive()
    }
}

#[pymethods]
impl RustRelay {
    #[new]
    fn new(
        py: Python<'_>,
        msg_type: &Bound<'_, PyAny>,
        name: &str,
        input: &str,
        output: &str,
    ) -> PyResult<Self> {
        crate::session::init_transport()?;
        let kind = crate::msg::message_kind_of(msg_type)?;
        let node = Node::new(name).map_err(graph_error)?;
        let relayed = (kind.relay)(&node, input, output)?;
        let executor = Executor::single_threaded();
        executor.add_node(&node).map_err(exec_error)?;
        let spin = py
            .allow_threads(|| executor.spin_thread())
            .map_err(exec_error)?;
        Ok(Self {
            executor,
            spin: Mutex::new(Some(spin)),
            relayed,
        })
    }

    fn last_json(&self) -> Option<String> {
        self.relayed.last.lock().clone()
    }

    /// Shuts the node's executor down (1 s deadline) and joins its thread.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        stop_spinning(py, &self.executor, &self.spin)
    }
}

/// Shuts `executor` down (1 s deadline) and joins the thread that spun it, without the GIL.
fn stop_spinning(
    py: Python<'_>,
    executor: &Executor,
    spin: &Mutex<Option<SpinThread>>,
) -> PyResult<()> {
    let spin = spin.lock().take();
    let executor = executor.clone();
    py.allow_threads(move || {
        executor.shutdown(kairos::time::Duration::from_secs(1));
        spin.map(SpinThread::stop).transpose()
    })
    .map_err(exec_error)?;
    Ok(())
}
