//! Manual liveliness across processes: a kairos publisher with manual-by-topic liveliness
//! whose lease lapses is counted as not alive by subscriptions in other kairos processes,
//! until it asserts itself again (by a publish or `assert_liveliness`).
//!
//! rmw_zenoh's wire format has no message for a lapsed lease (its liveliness token says
//! only that the entity exists), so kairos says it on its private key space, as the
//! shared waits do (see [`crate::shared_waits`]):
//! - while a publisher's lease has lapsed, its process holds a liveliness token on
//!   `@kairos/<domain>/liveliness_lost/<gid>`, the gid (32 hex digits) being the one its
//!   samples' attachments carry; asserting itself again drops the token;
//! - every transport watches that key space (with history, so a process that comes later
//!   learns of leases that lapsed before), and its graph shows those publishers with
//!   [`liveliness_lost`](kairos::graph::GraphEntity::liveliness_lost) set;
//! - a token goes with its process (exit, kill -9, lost link), as the publisher's own
//!   does. A publisher whose process says nothing (any non-kairos peer) counts as alive
//!   while its rmw_zenoh token exists, as rmw_zenoh counts it.

use crate::attachment::Gid;
use crate::graph_cache::GraphCache;
use crate::shared_waits::PRIVATE_SPACE;
use kairos::graph::transport::LivelinessSink;
use parking_lot::Mutex;
use std::sync::Arc;
use zenoh::liveliness::LivelinessToken;
use zenoh::sample::SampleKind;
use zenoh::{Session, Wait};

fn space(domain: u32) -> String {
    format!("{PRIVATE_SPACE}/{domain}/liveliness_lost")
}

fn hex(gid: &Gid) -> String {
    gid.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_hex(text: &str) -> Option<Gid> {
    if text.len() != 32 || !text.is_ascii() {
        return None;
    }
    let mut gid = [0; 16];
    for (i, byte) in gid.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(gid)
}

/// Where the publisher `gid` of a session tells other processes that its lease lapsed
/// (`false`) or that it is alive again (`true`).
pub(crate) fn sink(session: &Session, domain: u32, gid: &Gid) -> LivelinessSink {
    let session = session.clone();
    let key = format!("{}/{}", space(domain), hex(gid));
    let token: Mutex<Option<LivelinessToken>> = Mutex::new(None);
    Box::new(move |alive| {
        let mut token = token.lock();
        if alive {
            token.take();
        } else if token.is_none() {
            // On failure (the session closing) other processes keep counting it alive,
            // as they would a peer that says nothing.
            *token = session.liveliness().declare_token(&key).wait().ok();
        }
    })
}

/// Keeps `graph` told which publishers of other processes have lapsed leases, for as
/// long as the returned subscriber lives.
pub(crate) fn watch(
    session: &Session,
    domain: u32,
    graph: Arc<GraphCache>,
) -> zenoh::Result<zenoh::pubsub::Subscriber<()>> {
    session
        .liveliness()
        .declare_subscriber(format!("{}/*", space(domain)))
        .history(true)
        .callback(move |sample| {
            let key = sample.key_expr().as_str();
            // A key of another shape is not a kairos process's: ignored.
            if let Some(gid) = key.rsplit('/').next().and_then(parse_hex) {
                graph.liveliness_lost(gid, sample.kind() == SampleKind::Put);
            }
        })
        .wait()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gid_reads_back_from_its_key() {
        let gid: Gid = std::array::from_fn(|i| (i * 17) as u8);
        assert_eq!(parse_hex(&hex(&gid)), Some(gid));
        assert_eq!(parse_hex("zz"), None);
        assert_eq!(parse_hex(&"g".repeat(32)), None);
    }
}
