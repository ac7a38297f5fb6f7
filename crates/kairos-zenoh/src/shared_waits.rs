//! Blocked waits shared between kairos processes, so a blocking call that closes a cycle
//! through other processes fails with `WouldDeadlock` (see `kairos::exec::shared_waits`).
//!
//! What crosses the network, and why ROS 2 peers are unaffected:
//! - each transport puts a JSON snapshot of its process's blocked waits (callback name,
//!   mutually exclusive groups held, groups or service names waited for) and of the groups
//!   its carried services run in, on `@kairos/<domain>/waits/<zid>`, each time one of them
//!   changes, and declares a liveliness token on the same key;
//! - `@kairos` is a verbatim chunk: zenoh matches it only by a key expression that names it,
//!   never by `*` or `**`, so no subscriber, queryable or liveliness query of rmw_zenoh (all
//!   under `<domain>/...` and `@ros2_lv/...`) ever sees it; the rmw_zenoh wire format of
//!   topics, services and tokens is untouched;
//! - a snapshot is sent before the request of the wait it records (same session, same
//!   priority, reliable, blocking congestion control: zenoh delivers them in order), so the
//!   server's process knows the wait before the callback that request starts can block;
//! - a process's snapshot is dropped when its token goes (exit, kill -9, lost link); a new
//!   token makes every process share again, so a late joiner hears waits already blocked.
//!
//! A snapshot that does not parse is counted with the transport's malformed samples and
//! reported once; it changes nothing.

use kairos::exec::shared_waits::{self, RemoteWaits, ServedBy, SharedWait, WaitSharing};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use zenoh::liveliness::LivelinessToken;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::sample::{Locality, SampleKind};
use zenoh::{Session, Wait};

/// The key space of kairos processes' own coordination (a verbatim chunk).
pub const PRIVATE_SPACE: &str = "@kairos";

/// What one process shares.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Snapshot {
    process: String,
    label: String,
    waits: Vec<SharedWait>,
    servers: Vec<ServedBy>,
}

/// One transport's side of the shared wait-for graph.
pub struct ZenohWaits {
    session: Session,
    key: String,
    /// The last snapshot of each other transport, by its zid.
    heard: Mutex<HashMap<String, Snapshot>>,
    /// The services this transport carries: (id, who serves them).
    servers: Mutex<Vec<(u64, ServedBy)>>,
    next: AtomicU64,
    /// Serializes shares, so snapshots leave in the order they were taken.
    sending: Mutex<()>,
    /// The transport's count of samples that do not decode (`malformed_samples`).
    malformed: Arc<AtomicU64>,
    reported: AtomicBool,
    declarations: Mutex<Vec<Box<dyn std::any::Any + Send + Sync>>>,
}

impl std::fmt::Debug for ZenohWaits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohWaits")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

fn space(domain: u32) -> String {
    format!("{PRIVATE_SPACE}/{domain}/waits")
}

impl ZenohWaits {
    /// Joins the shared graph of ROS domain `domain` on `session`; snapshots that do not
    /// parse are counted in `malformed`.
    pub fn open(
        session: &Session,
        domain: u32,
        malformed: Arc<AtomicU64>,
    ) -> Result<Arc<Self>, zenoh::Error> {
        let key = format!("{}/{}", space(domain), session.zid());
        let waits = Arc::new(Self {
            session: session.clone(),
            key: key.clone(),
            heard: Mutex::new(HashMap::new()),
            servers: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
            sending: Mutex::new(()),
            malformed,
            reported: AtomicBool::new(false),
            declarations: Mutex::new(Vec::new()),
        });
        let weak = Arc::downgrade(&waits);
        let subscriber = session
            .declare_subscriber(format!("{}/*", space(domain)))
            .allowed_origin(Locality::Remote)
            .callback(move |sample| {
                if let Some(waits) = weak.upgrade() {
                    waits.heard(sample.key_expr().as_str(), &sample.payload().to_bytes());
                }
            })
            .wait()?;
        let weak = Arc::downgrade(&waits);
        let own = key.clone();
        let peers = session
            .liveliness()
            .declare_subscriber(format!("{}/*", space(domain)))
            .callback(move |sample| {
                let Some(waits) = weak.upgrade() else {
                    return;
                };
                if sample.key_expr().as_str() == own {
                    return;
                }
                match sample.kind() {
                    SampleKind::Delete => {
                        waits
                            .heard
                            .lock()
                            .remove(zid_of(sample.key_expr().as_str()));
                    }
                    // A newcomer hears what this process shared before it came.
                    SampleKind::Put => waits.share(),
                }
            })
            .wait()?;
        let token: LivelinessToken = session.liveliness().declare_token(&key).wait()?;
        waits.declarations.lock().extend([
            Box::new(subscriber) as _,
            Box::new(peers) as _,
            Box::new(token) as _,
        ]);
        Ok(waits)
    }

    /// Records that `served` serves a service carried by this transport, until the
    /// returned guard drops.
    pub fn serve(self: &Arc<Self>, served: ServedBy) -> ServedGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.servers.lock().push((id, served));
        self.share();
        ServedGuard {
            waits: self.clone(),
            id,
        }
    }

    fn heard(&self, key: &str, payload: &[u8]) {
        let snapshot: Snapshot = match serde_json::from_slice(payload) {
            Ok(snapshot) => snapshot,
            Err(e) => {
                self.malformed.fetch_add(1, Ordering::Relaxed);
                if !self.reported.swap(true, Ordering::Relaxed) {
                    crate::report::warn(format!(
                        "ignoring shared waits on {key} that do not parse ({e}); counted in malformed_samples"
                    ));
                }
                return;
            }
        };
        self.heard.lock().insert(zid_of(key).to_owned(), snapshot);
        shared_waits::recheck(self.remote());
    }
}

fn zid_of(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

impl WaitSharing for ZenohWaits {
    fn remote(&self) -> RemoteWaits {
        let mut remote = RemoteWaits::default();
        for snapshot in self.heard.lock().values() {
            remote.waits.extend(snapshot.waits.iter().cloned());
            remote.servers.extend(snapshot.servers.iter().cloned());
            remote
                .labels
                .insert(snapshot.process.clone(), snapshot.label.clone());
        }
        remote
            .servers
            .extend(self.servers.lock().iter().map(|(_, s)| s.clone()));
        remote
    }

    fn share(&self) {
        let _in_order = self.sending.lock();
        let snapshot = Snapshot {
            process: shared_waits::process_id().to_owned(),
            label: shared_waits::process_label(),
            waits: shared_waits::local_waits(),
            servers: self.servers.lock().iter().map(|(_, s)| s.clone()).collect(),
        };
        let Ok(payload) = serde_json::to_vec(&snapshot) else {
            return;
        };
        // A put fails only once the session is closed; nobody is left to hear it then.
        let _ = self
            .session
            .put(&self.key, payload)
            .reliability(Reliability::Reliable)
            .congestion_control(CongestionControl::Block)
            .allowed_destination(Locality::Remote)
            .wait();
    }
}

/// Keeps a service in the shared graph; see [`ZenohWaits::serve`].
pub struct ServedGuard {
    waits: Arc<ZenohWaits>,
    id: u64,
}

impl Drop for ServedGuard {
    fn drop(&mut self) {
        self.waits.servers.lock().retain(|(id, _)| *id != self.id);
        self.waits.share();
    }
}

impl std::fmt::Debug for ServedGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedGuard").field("id", &self.id).finish()
    }
}
