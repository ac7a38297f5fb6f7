//! The state the bridge's threads share: the advertised channels, the connected clients,
//! and the follower's wake-up.
//!
//! Lock order: `channels` before a client's outbox (advertising to every client holds
//! the channel table so that a client connecting meanwhile gets each channel exactly
//! once: in its first advertisement or in a later one, never both, never neither).

use crate::channel::{Channel, Subscriber};
use crate::graph::Graph;
use crate::options::BridgeOptions;
use crate::outbox::Outbox;
use crate::service::Service;
use foxglove::ws_protocol::parameter::Parameter;
use foxglove::ws_protocol::server::{
    Advertise, AdvertiseServices, ParameterValues, Unadvertise, UnadvertiseServices,
};
use kairos::time::Clock;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use tokio_tungstenite::tungstenite::Message;

/// A connected client as the hub knows it.
#[derive(Debug)]
pub(crate) struct Client {
    pub id: u64,
    pub addr: SocketAddr,
    pub outbox: Arc<Outbox>,
    /// Its subscriptions: subscription id -> channel id.
    pub subscriptions: Mutex<HashMap<u32, u64>>,
    /// The parameters (`<node>.<name>`) it wants updates of.
    pub parameter_updates: Mutex<BTreeSet<String>>,
    /// Whether it subscribed to the connection graph.
    pub graph_subscribed: AtomicBool,
}

#[derive(Debug, Default)]
pub(crate) struct Tables {
    pub channels: BTreeMap<u64, Arc<Channel>>,
    pub services: BTreeMap<u32, Arc<Service>>,
    pub clients: BTreeMap<u64, Arc<Client>>,
}

/// Shared state (see the module docs).
#[derive(Debug)]
pub(crate) struct Hub {
    pub options: BridgeOptions,
    pub clock: Clock,
    tables: Mutex<Tables>,
    next_id: AtomicU64,
    /// Set when the follower should look again (graph change, subscription change, stop).
    wake: (Mutex<bool>, Condvar),
    stopping: AtomicBool,
    /// Messages dropped for clients that have left (so the totals never go down).
    dropped_by_gone: AtomicU64,
    /// The connection graph as last seen by the follower.
    graph: Mutex<Graph>,
}

impl Hub {
    pub(crate) fn new(options: BridgeOptions, clock: Clock) -> Self {
        Self {
            options,
            clock,
            tables: Mutex::new(Tables::default()),
            next_id: AtomicU64::new(1),
            wake: (Mutex::new(false), Condvar::new()),
            stopping: AtomicBool::new(false),
            dropped_by_gone: AtomicU64::new(0),
            graph: Mutex::default(),
        }
    }

    pub(crate) fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh id for a channel or a client.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Adds `channel` and advertises it to every client.
    pub(crate) fn add_channel(&self, channel: Arc<Channel>) {
        let mut tables = self.tables();
        let message = Message::from(&Advertise::new([channel.advertisement()]));
        for client in tables.clients.values() {
            client.outbox.push_control(message.clone());
        }
        tables.channels.insert(channel.id, channel);
    }

    /// Removes the channel `id`: unadvertised to every client after what is queued for
    /// it, their subscriptions to it closed.
    pub(crate) fn remove_channel(&self, id: u64) -> Option<Arc<Channel>> {
        let mut tables = self.tables();
        let channel = tables.channels.remove(&id)?;
        let message = Message::from(&Unadvertise::new([id]));
        for client in tables.clients.values() {
            let mut subscriptions = client
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            // What is queued for it was sent while it existed: it goes out first, then
            // the unadvertisement.
            let mut last = Some(message.clone());
            subscriptions.retain(|subscription, channel_id| {
                let keep = *channel_id != id;
                if !keep {
                    client.outbox.retire(*subscription, last.take());
                }
                keep
            });
            if let Some(message) = last {
                client.outbox.push_control(message);
            }
        }
        Some(channel)
    }

    /// Adds `service` and advertises it to every client.
    pub(crate) fn add_service(&self, service: Arc<Service>) {
        let mut tables = self.tables();
        let message = Message::from(&AdvertiseServices::new([service.advertisement()]));
        for client in tables.clients.values() {
            client.outbox.push_control(message.clone());
        }
        tables.services.insert(service.id, service);
    }

    /// Removes the service `id`, unadvertised to every client (a call already made is
    /// still answered).
    pub(crate) fn remove_service(&self, id: u32) {
        let mut tables = self.tables();
        if tables.services.remove(&id).is_some() {
            let message = Message::from(&UnadvertiseServices::new([id]));
            for client in tables.clients.values() {
                client.outbox.push_control(message.clone());
            }
        }
    }

    /// The service advertised as `id`.
    pub(crate) fn service(&self, id: u32) -> Option<Arc<Service>> {
        self.tables().services.get(&id).cloned()
    }

    /// Registers a client, queueing `first` (its serverInfo) and then the advertisement of
    /// every channel and service, under the table lock (see the module docs).
    pub(crate) fn add_client(&self, client: Arc<Client>, first: Message) -> Result<(), usize> {
        let mut tables = self.tables();
        if tables.clients.len() >= self.options.max_clients {
            return Err(tables.clients.len());
        }
        client.outbox.push_control(first);
        if !tables.channels.is_empty() {
            let advertise = Advertise::new(tables.channels.values().map(|c| c.advertisement()));
            client.outbox.push_control(Message::from(&advertise));
        }
        if !tables.services.is_empty() {
            let advertise =
                AdvertiseServices::new(tables.services.values().map(|s| s.advertisement()));
            client.outbox.push_control(Message::from(&advertise));
        }
        tables.clients.insert(client.id, client);
        Ok(())
    }

    /// Removes a client and its subscriptions.
    pub(crate) fn remove_client(&self, id: u64) {
        let mut tables = self.tables();
        if let Some(client) = tables.clients.remove(&id) {
            client.outbox.close();
            self.dropped_by_gone
                .fetch_add(client.outbox.dropped(), Ordering::Relaxed);
            for channel in tables.channels.values() {
                channel.remove(id, |_| true);
            }
        }
        drop(tables);
        self.wake_follower();
    }

    /// Subscribes `client` to `channel_id` as subscription `subscription`. `Err` names why
    /// not (sent to the client as a status).
    pub(crate) fn subscribe(
        &self,
        client: &Client,
        subscription: u32,
        channel_id: u64,
    ) -> Result<(), String> {
        let tables = self.tables();
        let Some(channel) = tables.channels.get(&channel_id) else {
            return Err(format!(
                "no channel {channel_id} (it may have gone with its last publisher)"
            ));
        };
        let mut subscriptions = client
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if subscriptions.contains_key(&subscription) {
            return Err(format!("subscription id {subscription} is in use"));
        }
        subscriptions.insert(subscription, channel_id);
        client.outbox.subscribe(subscription, channel.topic.clone());
        channel.add(Subscriber {
            client: client.id,
            subscription,
            outbox: client.outbox.clone(),
        });
        drop(subscriptions);
        drop(tables);
        self.wake_follower();
        Ok(())
    }

    /// Ends a client's subscription.
    pub(crate) fn unsubscribe(&self, client: &Client, subscription: u32) {
        let tables = self.tables();
        let channel_id = client
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&subscription);
        client.outbox.unsubscribe(subscription);
        if let Some(channel) = channel_id.and_then(|id| tables.channels.get(&id)) {
            channel.remove(client.id, |s| s == subscription);
        }
        drop(tables);
        self.wake_follower();
    }

    /// Takes `graph` as the connection graph; the clients that subscribed to it get what
    /// changed.
    pub(crate) fn set_graph(&self, graph: Graph) {
        let mut current = self.graph.lock().unwrap_or_else(|e| e.into_inner());
        let Some(update) = graph.update_from(&current) else {
            return;
        };
        *current = graph;
        let message = Message::from(&update);
        for client in self.tables().clients.values() {
            if client.graph_subscribed.load(Ordering::Acquire) {
                client.outbox.push_control(message.clone());
            }
        }
    }

    /// Subscribes `client` to the connection graph (or not): when subscribing it gets the
    /// whole graph at once, under the same lock as later updates, so none is missed.
    pub(crate) fn subscribe_graph(&self, client: &Client, subscribe: bool) {
        let current = self.graph.lock().unwrap_or_else(|e| e.into_inner());
        let was = client.graph_subscribed.swap(subscribe, Ordering::AcqRel);
        if subscribe && !was {
            let whole = current.update_from(&Graph::default()).unwrap_or_default();
            client.outbox.push_control(Message::from(&whole));
        }
    }

    /// Queues, for each client that subscribed to some of `announced`, those.
    pub(crate) fn parameter_updates(&self, announced: &[Parameter]) {
        for client in self.tables().clients.values() {
            let wanted = client
                .parameter_updates
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let theirs: Vec<Parameter> = announced
                .iter()
                .filter(|p| wanted.contains(&p.name))
                .cloned()
                .collect();
            if !theirs.is_empty() {
                client
                    .outbox
                    .push_control(Message::from(&ParameterValues::new(theirs)));
            }
        }
    }

    /// Every message dropped for any client so far (those still here and those gone).
    pub(crate) fn dropped(&self) -> u64 {
        let here: u64 = self
            .tables()
            .clients
            .values()
            .map(|c| c.outbox.dropped())
            .sum();
        here + self.dropped_by_gone.load(Ordering::Relaxed)
    }

    pub(crate) fn wake_follower(&self) {
        let (lock, condvar) = &self.wake;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        condvar.notify_all();
    }

    /// Waits until woken or `timeout`; returns `false` once the bridge stops.
    pub(crate) fn wait_follower(&self, timeout: std::time::Duration) -> bool {
        let (lock, condvar) = &self.wake;
        let mut woken = lock.lock().unwrap_or_else(|e| e.into_inner());
        if !*woken && !self.is_stopping() {
            woken = condvar
                .wait_timeout(woken, timeout)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *woken = false;
        !self.is_stopping()
    }

    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.wake_follower();
        for client in self.tables().clients.values() {
            client.outbox.close();
        }
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }
}
