//! Services: the graph's services as the bridge advertises them, and a client's calls.
//!
//! What it promises:
//! - **Advertised with both schemas.** A service of the graph whose type kairos ships is
//!   advertised with its ROS type, and its request and response each as a `ros2msg`
//!   schema (`pkg/srv/T_Request` with the `.srv` text before `---`, dependencies appended
//!   as `kairos bag record` appends them) in the `cdr` encoding, so a client encodes a
//!   request and decodes the response with the advertisement alone. A service kairos does
//!   not ship is not advertised (said once in the log): the bridge could not check a
//!   request against it.
//! - **A call never blocks the bridge.** A `serviceCallRequest` is decoded, sent and
//!   waited for on a blocking thread, not on the async threads that serve clients; the
//!   client's other messages keep flowing meanwhile. At most [`CALLS_IN_FLIGHT`] requests
//!   of one client (calls and parameter requests) wait at once; one more is refused at
//!   once.
//! - **Every call is answered, within [`CALL_TIMEOUT`].** The answer is a
//!   `serviceCallResponse` with the response as CDR, or a `serviceCallFailure` saying why
//!   (no such service, an encoding other than `cdr`, a request that is not of the type,
//!   no server or no answer in time).

use crate::server::Shared;
use foxglove::ws_protocol::schema::Schema;
use foxglove::ws_protocol::server::advertise_services::Service as Advertised;
use foxglove::ws_protocol::server::{ServiceCallFailure, ServiceCallResponse};
use kairos_zenoh::interfaces::ServiceTool;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// How long a call may wait for a server and for its answer.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The most calls of one client waiting at once.
pub const CALLS_IN_FLIGHT: usize = 16;

/// A service as advertised (see the module docs).
pub(crate) struct Service {
    pub id: u32,
    pub name: String,
    tool: Arc<ServiceTool>,
    request_schema: String,
    response_schema: String,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("ros_type", &self.tool.ros_type())
            .finish_non_exhaustive()
    }
}

impl Service {
    /// Service `name` of the type `tool` serves; `None` (with a warning) when a schema
    /// cannot be written because a type it refers to is not shipped.
    pub(crate) fn new(id: u32, name: &str, tool: Arc<ServiceTool>) -> Option<Self> {
        let ros_type = tool.ros_type().to_owned();
        let (request, response) = tool.definitions();
        let schema = |part: &str, text: &'static str| {
            let root = format!("{ros_type}_{part}");
            kairos_bag::ros2msg_definition(&root, |wanted| {
                if wanted == root {
                    return Some(text.to_owned());
                }
                crate::follow::shipped_definition(wanted)
            })
            .map_err(|e| {
                log::warn!(
                    "kairos bridge foxglove: service {name} ({ros_type}) is not advertised: its {part} has no definition ({e})"
                );
            })
            .ok()
        };
        Some(Self {
            id,
            name: name.to_owned(),
            request_schema: schema("Request", request)?,
            response_schema: schema("Response", response)?,
            tool,
        })
    }

    /// The service as the protocol advertises it.
    pub(crate) fn advertisement(&self) -> Advertised<'_> {
        let ros_type = self.tool.ros_type();
        let part = |suffix: &str, text: &'_ str| {
            Schema::new(
                format!("{ros_type}_{suffix}"),
                "ros2msg",
                text.as_bytes().to_vec(),
            )
        };
        Advertised::new(self.id, self.name.as_str(), ros_type)
            .with_request("cdr", part("Request", &self.request_schema))
            .and_then(|s| s.with_response("cdr", part("Response", &self.response_schema)))
            .expect("a ros2msg schema is UTF-8 text, which always encodes")
    }
}

/// Requests in flight (service calls, parameter requests), per client.
#[derive(Debug, Default)]
pub(crate) struct Calls(AtomicUsize);

impl Calls {
    /// A place among the [`CALLS_IN_FLIGHT`], held until the guard is dropped; `None`
    /// when all are taken.
    pub(crate) fn enter(self: &Arc<Self>) -> Option<Entered> {
        if self.0.fetch_add(1, Ordering::AcqRel) >= CALLS_IN_FLIGHT {
            self.0.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Entered(self.clone()))
    }
}

/// One request in flight (see [`Calls::enter`]).
pub(crate) struct Entered(Arc<Calls>);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers one `serviceCallRequest` (see the module docs): `answer` gets the frame to
/// send, at once for a refusal, later (from a blocking thread) for a call.
pub(crate) fn call(
    shared: &Arc<Shared>,
    calls: &Arc<Calls>,
    (service_id, call_id): (u32, u32),
    encoding: &str,
    payload: &[u8],
    answer: impl FnOnce(Message) + Send + 'static,
) {
    let fail =
        move |text: String| Message::from(&ServiceCallFailure::new(service_id, call_id, text));
    let Some(service) = shared.hub.service(service_id) else {
        return answer(fail(format!(
            "no service {service_id} (it may have gone with its last server)"
        )));
    };
    if encoding != "cdr" {
        return answer(fail(format!(
            "{} takes requests encoded as cdr, not {encoding}",
            service.name
        )));
    }
    let Some(entered) = calls.enter() else {
        return answer(fail(format!(
            "{CALLS_IN_FLIGHT} requests of this client are already waiting; call again when one is answered"
        )));
    };
    let (shared, payload) = (shared.clone(), payload.to_vec());
    tokio::task::spawn_blocking(move || {
        let timeout = kairos::time::Duration::from(CALL_TIMEOUT);
        let result = service.tool.call_cdr(
            &shared.transport,
            &shared.node,
            &service.name,
            &payload,
            timeout,
        );
        drop(entered);
        answer(match result {
            Ok(response) => Message::from(&ServiceCallResponse {
                service_id,
                call_id,
                encoding: "cdr".into(),
                payload: response.into(),
            }),
            Err(e) => fail(format!("{}: {e}", service.name)),
        });
    });
}
