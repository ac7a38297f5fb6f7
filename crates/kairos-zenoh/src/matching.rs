//! Waiting for zenoh's own matching of a publisher with a subscriber in another session.
//!
//! A liveliness token announces a subscription before zenoh's routing has matched it, so
//! a message put right after the token is seen may still reach nobody. Tools that publish
//! once (`kairos topic pub`), benchmarks and tests wait here first, bounded by a timeout.

use crate::ZenohTransport;
use crate::graph_key::{EntityKind, data_key};
use crate::transport::TransportError;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use zenoh::Session;
use zenoh::Wait;
use zenoh::pubsub::Publisher;
use zenoh::sample::Locality;

/// Waits up to `timeout` until `publisher` matches at least one subscriber; `Ok(false)`
/// when none did in time. Returns at once when it matches already.
pub fn wait_matched(publisher: &Publisher<'_>, timeout: Duration) -> Result<bool, TransportError> {
    let failed = |source| TransportError::Zenoh {
        action: format!(
            "watch the matching of the publisher on {}",
            publisher.key_expr()
        ),
        source,
    };
    let (matched_tx, matched_rx) = mpsc::channel();
    let _listener = publisher
        .matching_listener()
        .callback(move |status| {
            if status.matching() {
                let _ = matched_tx.send(());
            }
        })
        .wait()
        .map_err(failed)?;
    if publisher
        .matching_status()
        .wait()
        .map_err(failed)?
        .matching()
    {
        return Ok(true);
    }
    Ok(matched_rx.recv_timeout(timeout).is_ok())
}

/// Waits up to `timeout` until a subscriber in another session matches the data key `key`
/// (e.g. `MessageInterface::data_key`), through a publisher of its own that sends nothing;
/// `Ok(false)` when none did in time. What to wait for before the first message of a
/// volatile publisher that must not go to no one.
pub fn wait_remote_subscriber(
    session: &Session,
    key: &str,
    timeout: Duration,
) -> Result<bool, TransportError> {
    let probe = session
        .declare_publisher(key.to_owned())
        .allowed_destination(Locality::Remote)
        .wait()
        .map_err(|source| TransportError::Zenoh {
            action: format!("declare a publisher on {key} to watch its matching"),
            source,
        })?;
    wait_matched(&probe, timeout)
}

impl ZenohTransport {
    /// Waits up to `timeout` until a subscription of `topic` in another session is in the
    /// graph and zenoh routes this session's data to it (its token can come first);
    /// `Ok(false)` when none did in time. After it, a volatile message published on `topic`
    /// reaches that subscription.
    pub fn wait_remote_subscription(
        &self,
        topic: &str,
        timeout: Duration,
    ) -> Result<bool, TransportError> {
        let deadline = Instant::now() + timeout;
        let zid = self.session().zid().to_string();
        let found = parking_lot::Mutex::new(None);
        self.graph().wait_until(deadline, |tokens| {
            let key = tokens.iter().find_map(|t| {
                let e = t.endpoint.as_ref()?;
                (t.kind == EntityKind::Subscription && t.node.zid != zid && e.name == topic)
                    .then(|| data_key(self.domain(), &e.name, &e.dds_type, &e.hash))
            });
            let seen = key.is_some();
            *found.lock() = key;
            seen
        });
        let Some(key) = found.into_inner() else {
            return Ok(false);
        };
        wait_remote_subscriber(
            self.session(),
            &key,
            deadline.saturating_duration_since(Instant::now()),
        )
    }
}
