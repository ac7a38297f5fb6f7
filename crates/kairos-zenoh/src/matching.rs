//! Waiting for zenoh's own matching of a publisher with a subscriber in another session.
//!
//! A liveliness token announces a subscription before zenoh's routing has matched it, so
//! a message put right after the token is seen may still reach nobody. Tools that publish
//! once (`kairos topic pub`), benchmarks and tests wait here first, bounded by a timeout.

use crate::transport::TransportError;
use std::sync::mpsc;
use std::time::Duration;
use zenoh::Wait;
use zenoh::pubsub::Publisher;

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
