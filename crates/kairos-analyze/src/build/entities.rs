//! The entity registry: processes, threads, nodes, publishers, subscriptions, timers,
//! callbacks and action endpoints, each declared by its init event and found again by
//! its handle; an object an event names before (or without) its init is kept pending
//! or counted as undeclared, never dropped.

use super::*;

impl Builder {
    pub(super) fn source(&mut self, s: Source) {
        if !self.m.sources.contains(&s) {
            self.m.sources.push(s);
        }
    }

    pub(super) fn process(&mut self, pid: i64, name: &str, host: Option<&str>) {
        // The first name seen is the executable's: ROS 1 later renames its threads
        // after the node.
        if !self.processes.contains_key(&pid) {
            self.processes.insert(pid, self.m.processes.len());
            self.m.processes.push(Process {
                pid,
                name: name.to_string(),
                host: host.map(str::to_string),
            });
            if let Some(h) = host {
                self.hosts.insert(pid, Arc::from(h));
            }
        }
    }

    /// Records a thread's name (`procname`: the name it had when it first traced).
    pub(super) fn thread_name(&mut self, at: At, name: &str) {
        if let std::collections::hash_map::Entry::Vacant(e) =
            self.named_threads.entry((at.pid, at.tid))
        {
            e.insert(self.m.threads.len());
            self.m.threads.push(crate::model::Thread {
                pid: at.pid,
                tid: at.tid,
                name: name.to_string(),
            });
        }
    }

    pub(super) fn node(&mut self, pid: i64, handle: u64, name: String) -> NodeId {
        let i = NodeId(self.m.nodes.len());
        self.m.nodes.push(Node { pid, name });
        self.nodes.insert(Handle::new(pid, handle), i);
        i
    }

    /// Declares an action server or client; a later declaration of the same handle (a
    /// step traced before its init) gets the init's name and node.
    pub(super) fn action_endpoint(
        &mut self,
        pid: i64,
        handle: u64,
        declared: Option<(Option<NodeId>, Arc<str>)>,
        role: ActionRole,
    ) -> usize {
        let key = Handle::new(pid, handle);
        if let Some(&i) = self.action_endpoints.get(&key) {
            if let Some((node, action)) = declared {
                let e = &mut self.m.action_endpoints[i];
                (e.node, e.action, e.role) = (node, action, role);
            }
            return i;
        }
        let (node, action) = declared.unwrap_or((None, Arc::from("?")));
        let i = self.m.action_endpoints.len();
        self.m.action_endpoints.push(ActionEndpoint {
            pid,
            node,
            action,
            role,
        });
        self.action_endpoints.insert(key, i);
        i
    }

    /// Records a step of goal `id` at the action endpoint `handle`.
    pub(super) fn goal_step(&mut self, pid: i64, handle: u64, id: &str, step: (i64, String, i32)) {
        let role = if matches!(
            step.1.as_str(),
            "sent" | "result" | "cancel_sent" | "cancel_refused"
        ) {
            ActionRole::Client
        } else {
            ActionRole::Server
        };
        let endpoint = self.action_endpoint(pid, handle, None, role);
        let next = self.m.goals.len();
        let g = *self.goals.entry(id.to_owned()).or_insert(next);
        if g == next {
            self.m.goals.push(Goal {
                id: id.to_owned(),
                steps: Vec::new(),
            });
        }
        let (at, event, status) = step;
        self.m.goals[g].steps.push(GoalStep {
            at,
            endpoint,
            event,
            status,
        });
    }

    pub(super) fn publisher(
        &mut self,
        pid: i64,
        handle: u64,
        node: Option<NodeId>,
        topic: Topic,
        depth: Option<u64>,
    ) -> PublisherId {
        let i = PublisherId(self.m.publishers.len());
        self.m
            .publishers
            .push(Endpoint::new(pid, node, topic, depth));
        self.publishers.insert(Handle::new(pid, handle), i);
        i
    }

    pub(super) fn subscription(
        &mut self,
        pid: i64,
        handle: u64,
        node: Option<NodeId>,
        topic: Topic,
        depth: Option<u64>,
    ) -> SubscriptionId {
        let i = SubscriptionId(self.m.subscriptions.len());
        self.m
            .subscriptions
            .push(Endpoint::new(pid, node, topic, depth));
        self.subscriptions.insert(Handle::new(pid, handle), i);
        i
    }

    /// Waits for node `node_handle` to be declared: its endpoint (a publisher when
    /// `publisher`) is attached to it then. rcl declares a node's `/rosout` publisher
    /// before the node.
    pub(super) fn await_node(
        &mut self,
        pid: i64,
        node_handle: u64,
        publisher: bool,
        endpoint: usize,
    ) {
        self.pending_nodes
            .entry(Handle::new(pid, node_handle))
            .or_default()
            .push((publisher, endpoint));
    }

    /// Node `node` was declared with `handle`: endpoints waiting for it join it.
    pub(super) fn node_declared(&mut self, pid: i64, handle: u64, node: NodeId) {
        for (publisher, i) in self
            .pending_nodes
            .remove(&Handle::new(pid, handle))
            .unwrap_or_default()
        {
            let list = if publisher {
                &mut self.m.publishers
            } else {
                &mut self.m.subscriptions
            };
            if list[i].node.is_none() {
                list[i].node = Some(node);
            }
        }
    }

    /// Declares that messages of `pubs` carry on from what `subs` took.
    pub(super) fn message_link(
        &mut self,
        kind: crate::model::MessageLink,
        pid: i64,
        subs: &[u64],
        pubs: &[u64],
    ) {
        let subs: Vec<SubscriptionId> = subs
            .iter()
            .filter_map(|&h| self.subscriptions.get(&Handle::new(pid, h)).copied())
            .collect();
        for &h in pubs {
            if let Some(&p) = self.publishers.get(&Handle::new(pid, h)) {
                self.message_links.insert(p, (kind, subs.clone()));
            }
        }
    }

    /// Counts an event naming `handle`, which no init event declared.
    pub(super) fn undeclared_handle(&mut self, handle: Handle, event: &str) {
        let new = self.undeclared.insert(handle);
        let c = self.m.undeclared.entry(event.to_string()).or_default();
        c.0 += 1;
        if new {
            c.1 += 1;
        }
    }

    pub(super) fn timer(&mut self, pid: i64, handle: u64) -> TimerId {
        if let Some(&t) = self.timers.get(&Handle::new(pid, handle)) {
            return t;
        }
        let i = TimerId(self.m.timers.len());
        self.m.timers.push(Timer {
            pid,
            handle,
            node: None,
            period_ns: None,
            callback: None,
            fired: Vec::new(),
            scheduled: Vec::new(),
        });
        self.timers.insert(Handle::new(pid, handle), i);
        i
    }

    pub(super) fn callback(&mut self, pid: i64, handle: u64) -> CallbackId {
        if let Some(&c) = self.callbacks.get(&Handle::new(pid, handle)) {
            return c;
        }
        let i = CallbackId(self.m.callbacks.len());
        self.m.callbacks.push(Callback {
            pid,
            handle,
            symbol: None,
            owner: Owner::Unknown,
            runs: Vec::new(),
            tid: 0,
        });
        self.callbacks.insert(Handle::new(pid, handle), i);
        i
    }

    pub(super) fn set_owner(&mut self, cb: CallbackId, owner: Owner) {
        self.m.callbacks[cb].owner = owner;
        match owner {
            Owner::Subscription(s) => self.m.subscriptions[s].callback = Some(cb),
            Owner::Timer(t) => self.m.timers[t].callback = Some(cb),
            _ => {}
        }
    }

    pub(super) fn thread(&mut self, at: At) -> &mut Thread {
        self.threads.entry((at.pid, at.tid)).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_name_of_a_process_and_of_a_thread_is_kept() {
        let mut b = Builder::new(Options::default());
        b.process(1, "talker", Some("robot"));
        b.process(1, "renamed_after_its_node", None);
        b.thread_name(
            At {
                ts: 0,
                pid: 1,
                tid: 2,
            },
            "worker",
        );
        b.thread_name(
            At {
                ts: 5,
                pid: 1,
                tid: 2,
            },
            "later",
        );
        assert_eq!(b.m.processes.len(), 1);
        assert_eq!(b.m.processes[0].name, "talker");
        assert_eq!(b.m.processes[0].host.as_deref(), Some("robot"));
        assert_eq!(b.m.threads.len(), 1);
        assert_eq!(b.m.threads[0].name, "worker");
    }

    #[test]
    fn a_handle_names_one_object_per_process() {
        let mut b = Builder::new(Options::default());
        let (t, cb) = (b.timer(1, 9), b.callback(1, 9));
        assert_eq!(b.timer(1, 9), t);
        assert_eq!(b.callback(1, 9), cb);
        assert_ne!(
            b.timer(2, 9),
            t,
            "the same handle in another process is another timer"
        );
        assert_ne!(b.callback(2, 9), cb);
        assert_eq!((b.m.timers.len(), b.m.callbacks.len()), (2, 2));
    }

    #[test]
    fn an_endpoint_declared_before_its_node_joins_it_once_the_node_comes() {
        let mut b = Builder::new(Options::default());
        let rosout = b.publisher(1, 100, None, Topic::from("/rosout"), Some(1000));
        b.await_node(1, 50, true, rosout.0);
        let sub = b.subscription(1, 101, None, Topic::from("/chatter"), Some(10));
        b.await_node(1, 50, false, sub.0);
        // Another process's node with the same handle is not this one.
        let elsewhere = b.node(2, 50, "other".into());
        b.node_declared(2, 50, elsewhere);
        assert_eq!(b.m.publishers[rosout.0].node, None);
        let node = b.node(1, 50, "talker".into());
        b.node_declared(1, 50, node);
        assert_eq!(b.m.publishers[rosout.0].node, Some(node));
        assert_eq!(b.m.subscriptions[sub.0].node, Some(node));
        assert_eq!(b.m.subscriptions[sub.0].queue_depth, Some(10));
    }

    #[test]
    fn an_undeclared_handle_is_counted_per_event_and_once_per_handle() {
        let mut b = Builder::new(Options::default());
        b.undeclared_handle(Handle::new(1, 7), "rcl_publish");
        b.undeclared_handle(Handle::new(1, 7), "rcl_publish");
        b.undeclared_handle(Handle::new(1, 8), "rcl_publish");
        assert_eq!(b.m.undeclared["rcl_publish"], (3, 2));
    }

    #[test]
    fn a_callbacks_owner_knows_its_callback() {
        let mut b = Builder::new(Options::default());
        let sub = b.subscription(1, 101, None, Topic::from("/chatter"), None);
        let cb = b.callback(1, 200);
        b.set_owner(cb, Owner::Subscription(sub));
        assert_eq!(b.m.subscriptions[sub.0].callback, Some(cb));
        assert!(matches!(b.m.callbacks[cb].owner, Owner::Subscription(s) if s == sub));
    }
}
