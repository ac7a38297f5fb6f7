//! The client entity: its pending requests by sequence number, the responses whose done
//! callback waits for the executor, and the count of late responses.

use super::CallError;
use super::response::{Answered, CallSite, Slot};
use crate::exec::deadlock::RemoteServer;
use crate::exec::entity::{Entity, EntityCore, Execution};
use crate::graph::context::Context;
use crate::graph::introspection::{Caller, Introspection, local_gid};
use crate::graph::transport::RemoteClient;
use kairos_interface::service_event::EventKind;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
pub(crate) struct ClientInner<Req, Resp> {
    pub(crate) core: EntityCore,
    pub(crate) service: Arc<str>,
    pub(super) context: Context,
    pub(super) next_seq: AtomicU64,
    pub(super) pending: Mutex<HashMap<u64, Arc<Slot<Resp>>>>,
    /// Responses whose done callback waits to run on the client's executor.
    pub(super) done: Mutex<VecDeque<Answered<Resp>>>,
    pub(super) late: AtomicU64,
    /// Calls servers in other processes, when a transport carries this service.
    pub(super) remote: Option<Arc<dyn RemoteClient>>,
    /// The client's id in its introspection events and its servers': the transport's
    /// gid for it when one carries it.
    pub(super) gid: [u8; 16],
    pub(super) introspection: Introspection<Req, Resp>,
}

impl<Req: Send + 'static, Resp: Send + 'static> ClientInner<Req, Resp> {
    pub(crate) fn new(
        core: EntityCore,
        service: Arc<str>,
        context: Context,
        remote: Option<Arc<dyn RemoteClient>>,
    ) -> Self {
        let gid = remote
            .as_ref()
            .and_then(|remote| remote.gid())
            .unwrap_or_else(|| local_gid(core.id()));
        Self {
            core,
            service,
            context,
            next_seq: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            done: Mutex::new(VecDeque::new()),
            late: AtomicU64::new(0),
            remote,
            gid,
            introspection: Introspection::default(),
        }
    }

    /// Request `seq` of this client, as introspection events name it.
    pub(super) fn caller(&self, seq: u64) -> Caller {
        Caller {
            gid: self.gid,
            seq: seq as i64,
        }
    }

    /// The server in another process a blocking call waits for, when the transport shares
    /// waits (so the call is checked for cycles through other processes).
    pub(super) fn remote_server(&self) -> Option<RemoteServer<'_>> {
        self.remote.as_ref()?;
        let sharing = self.context.transport()?.wait_sharing()?;
        Some(RemoteServer {
            service: &self.service,
            sharing,
        })
    }

    /// A response arrived (on the service's thread).
    pub(crate) fn respond(&self, seq: u64, result: Result<Resp, CallError>) {
        if let Ok(response) = &result {
            let caller = self.caller(seq);
            self.introspection
                .response(EventKind::ResponseReceived, caller, response);
        }
        let Some(slot) = self.pending.lock().remove(&seq) else {
            // The client was dropped with the call pending (its caller got `ClientDropped`).
            self.late.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let delivered = if slot.has_done_callback() {
            self.deliver_done(slot, result);
            true
        } else {
            slot.fulfil(result)
        };
        if !delivered {
            // The caller gave up first: counted, never lost silently.
            self.late.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Hands a response whose future has a done callback to the client's executor, where
    /// the callback runs as a callback of the client; with no executor it runs here.
    pub(super) fn deliver_done(&self, slot: Arc<Slot<Resp>>, result: Result<Resp, CallError>) {
        let spun = slot.state.lock().spun;
        if self.core.executor().is_none() && !spun {
            // A done callback's caller never gives up: it always runs.
            slot.fulfil(result);
            return;
        }
        self.done.lock().push_back((slot, result));
        self.core.notify();
        // Detached between the check and the push: the executor's shutdown may have failed
        // its queue before this entry arrived, and no worker will take it now. (A spun
        // callback waits for the next executor, or fails when the client is dropped.)
        if self.core.executor().is_none() && !spun {
            self.fail_done_queue();
        }
    }

    /// The caller of `slot` stopped waiting. The slot stays pending until its response
    /// arrives, which is then counted late (and so is a response it never read).
    pub(super) fn give_up(&self, slot: &Slot<Resp>) {
        if slot.give_up() {
            self.late.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Runs the done callbacks of the responses queued for the executor with
    /// `ExecutorShutDown`: they will not run there now. Returns how many.
    pub(super) fn fail_done_queue(&self) -> usize {
        let queued: Vec<Answered<Resp>> = self.done.lock().drain(..).collect();
        let failed = queued.len();
        for (slot, result) in queued {
            let seq = slot.seq;
            // The response itself is dropped here: counted as late, never silently.
            drop(result);
            self.late.fetch_add(1, Ordering::Relaxed);
            let _ = slot.fulfil(Err(CallError::ExecutorShutDown {
                service: self.service.to_string(),
                seq,
            }));
        }
        failed
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> Entity for ClientInner<Req, Resp> {
    fn core(&self) -> &EntityCore {
        &self.core
    }

    fn execute(&self) -> Execution {
        let Some((slot, result)) = self.done.lock().pop_front() else {
            return Execution::Idle;
        };
        let _ = slot.fulfil(result);
        Execution::Done
    }

    fn has_work(&self) -> bool {
        !self.done.lock().is_empty()
    }

    fn queued_responses(&self) -> usize {
        self.done.lock().len()
    }

    fn fail_queued(&self) -> usize {
        self.fail_done_queue()
    }
}

impl<Req: Send + 'static, Resp: Send + 'static> CallSite<Resp> for ClientInner<Req, Resp> {
    fn service(&self) -> &str {
        &self.service
    }

    fn server(&self) -> Option<Arc<dyn Entity>> {
        let server = self.context.server::<Req, Resp>(&self.service)?;
        Some(server)
    }

    fn remote_server(&self) -> Option<RemoteServer<'_>> {
        ClientInner::remote_server(self)
    }

    fn give_up(&self, slot: &Slot<Resp>) {
        ClientInner::give_up(self, slot);
    }

    fn deliver_done(&self, slot: Arc<Slot<Resp>>, result: Result<Resp, CallError>) {
        ClientInner::deliver_done(self, slot, result);
    }
}
