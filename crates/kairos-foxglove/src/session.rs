//! One client's connection, from handshake to goodbye.
//!
//! The walk-through:
//! 1. **Handshake** (tokio-tungstenite), accepted only with the `foxglove.websocket.v1`
//!    subprotocol, within [`HANDSHAKE_TIMEOUT`].
//! 2. **Register**: the hub queues `serverInfo` and the advertisement of every channel in
//!    the client's outbox, or refuses the client when `max_clients` are connected (it is
//!    told why in a status, then closed).
//! 3. **Serve**, two halves in one task: the *writer* takes from the outbox and writes
//!    frames (a stalled client stalls only this writer: the outbox keeps accepting and
//!    dropping, see [`crate::outbox`]); the *reader* handles the client's messages:
//!    `subscribe`/`unsubscribe` through the hub (the follower then subscribes or not),
//!    `advertise`/`unadvertise` as kairos publishers ([`crate::publish`], declared off the
//!    async threads), `messageData` published as sent, `serviceCallRequest` called off
//!    the async threads and answered when done ([`crate::service`]), `getParameters` and
//!    `setParameters` likewise ([`crate::parameters`]), parameter subscriptions kept for
//!    the updates the bridge hears, and the connection graph's ([`crate::graph`]).
//! 4. **Goodbye**: when either half ends (the client closed, the socket failed, the outbox
//!    was closed because the client stopped reading control messages or the bridge
//!    stops), the hub forgets the client and its subscriptions; its publishers leave the
//!    graph.

use crate::hub::Client;
use crate::outbox::{Outbox, Outgoing};
use crate::server::Shared;
use crate::service::Calls;
use foxglove::ws_protocol::client::ClientMessage;
use foxglove::ws_protocol::server::server_info::Capability;
use foxglove::ws_protocol::server::{MessageData, ServerInfo, Status};
use futures_util::{SinkExt, StreamExt};
use kairos_zenoh::raw::RawPublisher;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};

/// The subprotocol the bridge speaks.
pub const SUBPROTOCOL: &str = "foxglove.websocket.v1";

/// How long a client may take to finish the WebSocket handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts the handshake only when the client offers [`SUBPROTOCOL`].
#[allow(clippy::result_large_err)] // tungstenite's callback signature
fn choose_subprotocol(
    request: &Request,
    mut response: Response,
) -> Result<Response, ErrorResponse> {
    let offered = request
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == SUBPROTOCOL);
    if offered {
        response.headers_mut().insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        return Ok(response);
    }
    let mut refusal = ErrorResponse::new(Some(format!(
        "this is a Foxglove WebSocket server: connect with the {SUBPROTOCOL} subprotocol\n"
    )));
    *refusal.status_mut() = StatusCode::BAD_REQUEST;
    Err(refusal)
}

/// The `serverInfo` every client gets first.
fn server_info(shared: &Shared) -> ServerInfo {
    let mut capabilities = vec![
        Capability::ClientPublish,
        Capability::Services,
        Capability::Parameters,
        Capability::ParametersSubscribe,
        Capability::ConnectionGraph,
    ];
    if shared.sim_time {
        capabilities.push(Capability::Time);
    }
    ServerInfo::new(shared.hub.options.name.clone())
        .with_capabilities(capabilities)
        .with_supported_encodings(["cdr".to_owned()])
        .with_metadata(HashMap::from([
            ("kairos".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
            ("ROS_DISTRO".to_owned(), "kairos".to_owned()),
        ]))
        .with_session_id(shared.session_id.clone())
}

/// Serves one connection (see the module docs).
pub(crate) async fn serve(shared: Arc<Shared>, stream: TcpStream, addr: SocketAddr) {
    let handshake = tokio_tungstenite::accept_hdr_async(stream, choose_subprotocol);
    let ws = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            log::info!("kairos bridge foxglove: {addr}: handshake refused: {e}");
            return;
        }
        Err(_) => {
            log::info!("kairos bridge foxglove: {addr}: no handshake within {HANDSHAKE_TIMEOUT:?}");
            return;
        }
    };
    let hub = &shared.hub;
    let options = &hub.options;
    let client = Arc::new(Client {
        id: hub.next_id(),
        addr,
        outbox: Arc::new(Outbox::new(options.queue_messages, options.queue_bytes)),
        subscriptions: Mutex::new(HashMap::new()),
        parameter_updates: Mutex::default(),
        graph_subscribed: AtomicBool::new(false),
    });
    let (mut tx, mut rx) = ws.split();
    if let Err(connected) = hub.add_client(client.clone(), Message::from(&server_info(&shared))) {
        let refusal = Status::error(format!(
            "the kairos bridge serves at most {connected} clients at once (--max-clients); disconnect another first"
        ));
        log::warn!("kairos bridge foxglove: {addr}: refused, {connected} clients connected");
        let _ = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
            let _ = tx.send(Message::from(&refusal)).await;
            let _ = tx.send(Message::Close(None)).await;
        })
        .await;
        return;
    }
    log::info!("kairos bridge foxglove: client {addr} connected");
    let outbox = client.outbox.clone();
    let writer = async {
        while !outbox.is_closed() {
            let frame = match outbox.pop() {
                Some(Outgoing::Frame(message)) => message,
                Some(Outgoing::Data {
                    subscription,
                    sample,
                }) => Message::from(&MessageData::new(
                    subscription,
                    sample.log_time,
                    &sample.payload[..],
                )),
                None => {
                    outbox.ready().await;
                    continue;
                }
            };
            if tx.send(frame).await.is_err() {
                return;
            }
        }
        let _ = tx.send(Message::Close(None)).await;
    };
    let reader = async {
        let mut publishers: HashMap<u32, Arc<RawPublisher>> = HashMap::new();
        let calls = Arc::new(Calls::default());
        while let Some(message) = rx.next().await {
            match message {
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(message) => {
                    handle(&shared, &client, (&mut publishers, &calls), &message).await;
                }
            }
        }
        publishers
    };
    let publishers = tokio::select! {
        () = writer => None,
        publishers = reader => Some(publishers),
    };
    hub.remove_client(client.id);
    if let Some(publishers) = publishers {
        // Undeclaring talks to Zenoh: off the async threads.
        let _ = tokio::task::spawn_blocking(move || drop(publishers)).await;
    }
    log::info!(
        "kairos bridge foxglove: client {addr} left ({} message(s) dropped for it)",
        client.outbox.dropped()
    );
}

/// Where the answers to a client's request go: its outbox, as control messages.
fn to_client(client: &Client) -> crate::parameters::Answer {
    let outbox = client.outbox.clone();
    Box::new(move |answer| {
        outbox.push_control(answer);
    })
}

/// Handles one message from the client.
async fn handle(
    shared: &Arc<Shared>,
    client: &Client,
    (publishers, calls): (&mut HashMap<u32, Arc<RawPublisher>>, &Arc<Calls>),
    message: &Message,
) {
    let refuse = |text: String| {
        log::warn!("kairos bridge foxglove: client {}: {text}", client.addr);
        client
            .outbox
            .push_control(Message::from(&Status::error(text)));
    };
    let parsed = match ClientMessage::try_from(message) {
        Ok(parsed) => parsed,
        Err(e) => {
            refuse(format!("the kairos bridge cannot read a message: {e}"));
            return;
        }
    };
    match parsed {
        ClientMessage::Subscribe(subscribe) => {
            for s in subscribe.subscriptions {
                if let Err(e) = shared.hub.subscribe(client, s.id, s.channel_id) {
                    refuse(format!("cannot subscribe: {e}"));
                }
            }
        }
        ClientMessage::Unsubscribe(unsubscribe) => {
            for id in unsubscribe.subscription_ids {
                shared.hub.unsubscribe(client, id);
            }
        }
        ClientMessage::Advertise(advertise) => {
            for channel in advertise.channels {
                let (id, topic) = (channel.id, channel.topic.to_string());
                let (encoding, schema) = (
                    channel.encoding.to_string(),
                    channel.schema_name.to_string(),
                );
                let declared = {
                    let shared = shared.clone();
                    tokio::task::spawn_blocking(move || {
                        crate::publish::declare(
                            &shared.transport,
                            &shared.node,
                            &topic,
                            &encoding,
                            &schema,
                        )
                    })
                    .await
                };
                match declared {
                    Ok(Ok(publisher)) => {
                        log::info!(
                            "kairos bridge foxglove: client {} publishes on {}",
                            client.addr,
                            publisher.topic()
                        );
                        publishers.insert(id, Arc::new(publisher));
                    }
                    Ok(Err(e)) => refuse(e.to_string()),
                    Err(e) => refuse(format!("cannot declare a publisher: {e}")),
                }
            }
        }
        ClientMessage::Unadvertise(unadvertise) => {
            let gone: Vec<_> = unadvertise
                .channel_ids
                .iter()
                .filter_map(|id| publishers.remove(id))
                .collect();
            let _ = tokio::task::spawn_blocking(move || drop(gone)).await;
        }
        ClientMessage::MessageData(data) => match publishers.get(&data.channel_id) {
            Some(publisher) => {
                publisher.publish(&data.data);
            }
            None => refuse(format!(
                "no advertised client channel {}: advertise it before sending",
                data.channel_id
            )),
        },
        ClientMessage::ServiceCallRequest(request) => crate::service::call(
            shared,
            calls,
            (request.service_id, request.call_id),
            &request.encoding,
            &request.payload,
            to_client(client),
        ),
        ClientMessage::GetParameters(request) => crate::parameters::get(
            shared,
            calls,
            request.parameter_names,
            request.id,
            to_client(client),
        ),
        ClientMessage::SetParameters(request) => crate::parameters::set(
            shared,
            calls,
            request.parameters,
            request.id,
            to_client(client),
        ),
        ClientMessage::SubscribeParameterUpdates(request) => {
            let mut wanted = client
                .parameter_updates
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            wanted.extend(request.parameter_names);
        }
        ClientMessage::UnsubscribeParameterUpdates(request) => {
            let mut wanted = client
                .parameter_updates
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for name in &request.parameter_names {
                wanted.remove(name);
            }
        }
        ClientMessage::SubscribeConnectionGraph => shared.hub.subscribe_graph(client, true),
        ClientMessage::UnsubscribeConnectionGraph => shared.hub.subscribe_graph(client, false),
        _ => refuse(
            "the kairos bridge does not serve this request yet (assets are not advertised)"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(protocols: Option<&str>) -> Request {
        let mut builder = Request::builder().uri("ws://127.0.0.1:8765/");
        if let Some(p) = protocols {
            builder = builder.header("sec-websocket-protocol", p);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn the_handshake_takes_the_foxglove_subprotocol_among_others() {
        let response = choose_subprotocol(
            &request(Some("x.v2, foxglove.websocket.v1")),
            Response::new(()),
        )
        .expect("accepted");
        assert_eq!(
            response.headers()["sec-websocket-protocol"],
            "foxglove.websocket.v1"
        );
    }

    #[test]
    fn a_client_without_the_subprotocol_is_told_how_to_connect() {
        for offered in [None, Some("foxglove.sdk.v2")] {
            let refusal = choose_subprotocol(&request(offered), Response::new(())).unwrap_err();
            assert_eq!(refusal.status(), StatusCode::BAD_REQUEST);
            assert!(refusal.body().as_deref().unwrap().contains(SUBPROTOCOL));
        }
    }
}
