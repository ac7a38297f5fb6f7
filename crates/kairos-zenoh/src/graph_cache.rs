//! What this process sees of the ROS graph: every liveliness token alive in its domain.
//!
//! It also checks that a peer's entity on a topic or service this process uses has the
//! same type hash: samples of another hash travel on another key expression and would
//! never arrive, so a mismatch (the other side built from another version of the
//! message) is reported once per peer hash, naming both hashes, and counted in
//! [`GraphCache::type_mismatches`].
//!
//! Tokens arrive in any order: over a router and a direct link at once, zenoh may hand
//! this process a node's publisher before the node itself. A node is in the graph while
//! its own token or any of its entities' is, as in rmw_zenoh's graph cache, so the graph
//! never shows an entity of a node it does not list.
//!
//! It keeps, by gid, the lifespan each remote publisher announces, so that a subscription
//! can expire that publisher's messages as a local publisher's (see [`GraphCache::lifespan_of`]).
//!
//! Ground rules: zenoh's liveliness callback adds and removes tokens under `tokens`' lock
//! and then notifies `changed`; readers take snapshots under the lock and never call out
//! while holding it. `checks` is taken after `tokens` when both are needed, never before.

use crate::attachment::Gid;
use crate::graph_key::{EndpointKey, EntityKind, NodeKey, Token, gid_of};
use kairos::graph::GraphEntity;
use kairos::time::Duration;
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// What this process sees of the ROS graph; see the module docs.
#[derive(Debug, Default)]
pub struct GraphCache {
    tokens: Mutex<HashSet<Token>>,
    changed: Condvar,
    checks: Mutex<TypeChecks>,
    mismatches: AtomicU64,
    watchers: Mutex<Watchers>,
    /// The lifespan of each publisher alive that announces one, by gid.
    lifespans: RwLock<HashMap<Gid, Duration>>,
    /// Whether `lifespans` has any, readable without its lock: every sample asks, and
    /// most graphs have no publisher with a lifespan.
    any_lifespan: AtomicBool,
    /// Manual-liveliness publishers whose process says their lease lapsed, by gid (see
    /// `crate::liveliness`).
    lapsed: RwLock<HashSet<Gid>>,
}

/// Called after each change (see [`GraphCache::watch`]).
#[derive(Default)]
struct Watchers(Vec<Box<dyn Fn() + Send + Sync>>);

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} watchers", self.0.len())
    }
}

#[derive(Debug, Default)]
struct TypeChecks {
    /// The hash this process declared for each (name, type) it uses.
    local: HashMap<(String, String), String>,
    /// Mismatches already reported: (name, type, the peer's hash).
    reported: HashSet<(String, String, String)>,
}

impl GraphCache {
    /// A token appeared (`alive`) or went away.
    pub(crate) fn update(&self, key: &str, alive: bool) {
        // Tokens of another shape (other tools, newer formats) are not ours to show.
        let Ok(token) = Token::parse(key) else { return };
        if token.kind == EntityKind::Publisher
            && let Some(lifespan) = token.endpoint.as_ref().and_then(|e| e.qos.lifespan)
        {
            let mut lifespans = self.lifespans.write();
            if alive {
                lifespans.insert(gid_of(key), lifespan);
            } else {
                lifespans.remove(&gid_of(key));
            }
            self.any_lifespan
                .store(!lifespans.is_empty(), Ordering::Release);
        }
        let mut tokens = self.tokens.lock();
        if alive {
            if let Some(endpoint) = &token.endpoint {
                self.check(&token, endpoint);
            }
            tokens.insert(token);
        } else {
            tokens.remove(&token);
        }
        drop(tokens);
        self.changed.notify_all();
        for watcher in &self.watchers.lock().0 {
            watcher();
        }
    }

    /// The publisher `gid`'s process says its lease lapsed (`lost`) or that it is alive
    /// again.
    pub(crate) fn liveliness_lost(&self, gid: Gid, lost: bool) {
        let changed = {
            let mut lapsed = self.lapsed.write();
            if lost {
                lapsed.insert(gid)
            } else {
                lapsed.remove(&gid)
            }
        };
        if changed {
            self.changed.notify_all();
            for watcher in &self.watchers.lock().0 {
                watcher();
            }
        }
    }

    /// Calls `changed` after each token that appears or goes, from zenoh's thread; it must
    /// not block.
    pub fn watch(&self, changed: Box<dyn Fn() + Send + Sync>) {
        self.watchers.lock().0.push(changed);
    }

    /// The entities of every session but `own_zid` (whose entities its process lists
    /// itself), as the graph shows them: an entity whose node's own token is not here
    /// (tokens arrive in any order) brings its node with it.
    pub fn entities_except(&self, own_zid: &str) -> Vec<GraphEntity> {
        let lapsed = self.lapsed.read();
        let tokens = self.tokens.lock();
        let announced: HashSet<&NodeKey> = tokens
            .iter()
            .filter(|t| t.kind == EntityKind::Node)
            .map(|t| &t.node)
            .collect();
        let mut implied = HashSet::new();
        let mut entities = Vec::with_capacity(tokens.len());
        for token in tokens.iter().filter(|t| t.node.zid != own_zid) {
            if !announced.contains(&token.node) && implied.insert(&token.node) {
                entities.push(Token::of_node(token.node.clone()).entity());
            }
            entities.push(GraphEntity {
                liveliness_lost: token.kind == EntityKind::Publisher
                    && !lapsed.is_empty()
                    && lapsed.contains(&token.gid()),
                ..token.entity()
            });
        }
        entities
    }

    /// This process declared an entity of `name` with type `dds_type` and hash `hash`:
    /// peers already in the graph, and those that come later, are checked against it.
    pub(crate) fn declared(&self, name: &str, dds_type: &str, hash: &str) {
        let tokens = self.tokens.lock();
        self.checks
            .lock()
            .local
            .insert((name.to_owned(), dds_type.to_owned()), hash.to_owned());
        for token in tokens.iter() {
            if let Some(endpoint) = &token.endpoint {
                self.check(token, endpoint);
            }
        }
    }

    fn check(&self, token: &Token, endpoint: &EndpointKey) {
        let mut checks = self.checks.lock();
        let key = (endpoint.name.clone(), endpoint.dds_type.clone());
        let Some(ours) = checks.local.get(&key) else {
            return;
        };
        if *ours == endpoint.hash {
            return;
        }
        let ours = ours.clone();
        let (name, dds_type) = key;
        if !checks
            .reported
            .insert((name.clone(), dds_type.clone(), endpoint.hash.clone()))
        {
            return;
        }
        drop(checks);
        self.mismatches.fetch_add(1, Ordering::Relaxed);
        let node = &token.node;
        let namespace = node.namespace.trim_end_matches('/');
        crate::report::warn(format_args!(
            "'{name}' has type {dds_type} with hash {ours} in this process but \
             {theirs} in node {namespace}/{node_name} (zenoh id {zid}): the two sides were \
             built from different definitions of the type, and no message passes between \
             them. Build both from the same .msg/.srv files. (reported once per hash; \
             counted in type_mismatches)",
            theirs = endpoint.hash,
            node_name = node.name,
            zid = node.zid,
        ));
    }

    /// The lifespan the publisher with `gid` announces, if it is alive and has one.
    pub fn lifespan_of(&self, gid: &Gid) -> Option<Duration> {
        if !self.any_lifespan.load(Ordering::Acquire) {
            return None;
        }
        self.lifespans.read().get(gid).copied()
    }

    /// Peers seen using a name of this process with another type hash (each distinct
    /// hash once).
    pub fn type_mismatches(&self) -> u64 {
        self.mismatches.load(Ordering::Relaxed)
    }

    /// Every token now.
    pub fn tokens(&self) -> Vec<Token> {
        self.tokens.lock().iter().cloned().collect()
    }

    fn has_server(tokens: &HashSet<Token>, name: &str, hash: &str) -> bool {
        tokens.iter().any(|t| {
            t.kind == EntityKind::Service
                && t.endpoint
                    .as_ref()
                    .is_some_and(|e| e.name == name && e.hash == hash)
        })
    }

    /// Whether a server of service `name` with type hash `hash` is alive.
    pub fn server_alive(&self, name: &str, hash: &str) -> bool {
        Self::has_server(&self.tokens.lock(), name, hash)
    }

    /// Waits for such a server until `deadline` (none: no deadline).
    pub fn wait_server(&self, name: &str, hash: &str, deadline: Option<Instant>) -> bool {
        let mut tokens = self.tokens.lock();
        loop {
            if Self::has_server(&tokens, name, hash) {
                return true;
            }
            match deadline {
                Some(deadline) => {
                    if self.changed.wait_until(&mut tokens, deadline).timed_out() {
                        return Self::has_server(&tokens, name, hash);
                    }
                }
                None => self.changed.wait(&mut tokens),
            }
        }
    }

    /// Waits until no token has come or gone for `quiet`, or until `deadline`.
    pub fn wait_quiet(&self, quiet: std::time::Duration, deadline: Instant) {
        let mut tokens = self.tokens.lock();
        loop {
            let now = Instant::now();
            if now >= deadline
                || self
                    .changed
                    .wait_until(&mut tokens, (now + quiet).min(deadline))
                    .timed_out()
            {
                return;
            }
        }
    }

    /// Waits until `ready` holds of the tokens or `deadline` passes; true if it holds.
    pub fn wait_until(&self, deadline: Instant, ready: impl Fn(&[Token]) -> bool) -> bool {
        let mut tokens = self.tokens.lock();
        loop {
            let snapshot: Vec<Token> = tokens.iter().cloned().collect();
            if ready(&snapshot) {
                return true;
            }
            if self.changed.wait_until(&mut tokens, deadline).timed_out() {
                let snapshot: Vec<Token> = tokens.iter().cloned().collect();
                return ready(&snapshot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_key::WireQos;
    use kairos::graph::EntityKind as Kind;

    fn node(zid: &str, nid: u64, name: &str) -> NodeKey {
        NodeKey {
            domain: 0,
            zid: zid.into(),
            nid,
            enclave: String::new(),
            namespace: "/robot".into(),
            name: name.into(),
        }
    }

    fn subscription(node: NodeKey, id: u64) -> Token {
        Token {
            node,
            id,
            kind: EntityKind::Subscription,
            endpoint: Some(EndpointKey {
                name: "/clock".into(),
                dds_type: "rosgraph_msgs::msg::dds_::Clock_".into(),
                hash: "RIHS01_00".into(),
                qos: WireQos::default(),
            }),
        }
    }

    /// (kind, node name) of what the graph shows, sorted.
    fn shown(cache: &GraphCache) -> Vec<(Kind, String)> {
        let mut shown: Vec<_> = cache
            .entities_except("own")
            .into_iter()
            .map(|e| (e.kind, e.node_name))
            .collect();
        shown.sort();
        shown
    }

    #[test]
    fn a_publishers_lifespan_is_known_while_its_token_lives() {
        let cache = GraphCache::default();
        let publisher = |id, lifespan| {
            let mut token = subscription(node("peer", 1, "camera"), id);
            token.kind = EntityKind::Publisher;
            token.endpoint.as_mut().unwrap().qos.lifespan = lifespan;
            token.key_expr()
        };
        let (short, plain) = (
            publisher(2, Some(Duration::from_millis(50))),
            publisher(3, None),
        );
        cache.update(&plain, true);
        assert_eq!(cache.lifespan_of(&gid_of(&plain)), None, "no lifespan");
        cache.update(&short, true);
        assert_eq!(
            cache.lifespan_of(&gid_of(&short)),
            Some(Duration::from_millis(50))
        );
        assert_eq!(cache.lifespan_of(&gid_of(&plain)), None);
        cache.update(&short, false);
        assert_eq!(
            cache.lifespan_of(&gid_of(&short)),
            None,
            "gone with its token"
        );
    }

    // Seen over a router and a direct link at once: a node's subscription came before the
    // node's own token, and a graph that listed nodes by their tokens alone missed it.
    #[test]
    fn an_entity_brings_its_node_whatever_order_the_tokens_come_in() {
        let cache = GraphCache::default();
        let planner = node("peer", 1, "planner");
        let clock = subscription(planner.clone(), 2);
        let planner_token = Token::of_node(planner.clone());
        cache.update(&clock.key_expr(), true);
        let both = vec![
            (Kind::Node, "planner".to_owned()),
            (Kind::Subscription, "planner".to_owned()),
        ];
        assert_eq!(shown(&cache), both, "the node before its own token");

        cache.update(&planner_token.key_expr(), true);
        assert_eq!(shown(&cache), both, "the node listed once with its token");

        // The node's token may also go before its entities'.
        cache.update(&planner_token.key_expr(), false);
        assert_eq!(shown(&cache), both, "the node kept while an entity stays");
        cache.update(&clock.key_expr(), false);
        assert_eq!(shown(&cache), [], "nothing left");

        // Two entities of one node bring it once; another node of the same name in
        // another session is another node.
        let twin = node("other", 1, "planner");
        for token in [
            clock.clone(),
            subscription(planner, 3),
            subscription(twin.clone(), 2),
        ] {
            cache.update(&token.key_expr(), true);
        }
        let nodes = shown(&cache)
            .into_iter()
            .filter(|(kind, _)| *kind == Kind::Node)
            .count();
        assert_eq!(nodes, 2);
        cache.update(&Token::of_node(twin).key_expr(), true);
        assert_eq!(shown(&cache).len(), 5);
        assert!(
            shown(&cache).iter().all(|(_, name)| name == "planner"),
            "{:?}",
            shown(&cache)
        );
    }

    // Tokens that come and go in a random order, as zenoh may hand them over: after
    // every step the graph lists each entity alive once, and each node exactly once while
    // its own token or any of its entities' is alive.
    #[test]
    fn random_token_orders_list_each_live_node_once() {
        let mut rng = kairos_testkit::random::seeded();
        let seed = rng.get_seed();
        let mut next = move |below: usize| rng.usize(..below);
        let mut universe = Vec::new();
        for zid in ["own", "peer1", "peer2"] {
            for nid in 0..3 {
                let node = node(zid, nid, &format!("{zid}_n{nid}"));
                universe.push(Token::of_node(node.clone()));
                universe.extend((1..=3).map(|id| subscription(node.clone(), nid * 10 + id)));
            }
        }
        let cache = GraphCache::default();
        let mut alive = HashSet::new();
        for step in 0..3000 {
            let token = &universe[next(universe.len())];
            let now_alive = alive.insert(token.clone()) || !alive.remove(token);
            cache.update(&token.key_expr(), now_alive);

            let mut expected: Vec<(Kind, String)> = Vec::new();
            let mut nodes = HashSet::new();
            for t in alive.iter().filter(|t| t.node.zid != "own") {
                nodes.insert(t.node.name.clone());
                if t.kind != EntityKind::Node {
                    expected.push((Kind::Subscription, t.node.name.clone()));
                }
            }
            expected.extend(nodes.into_iter().map(|name| (Kind::Node, name)));
            expected.sort();
            assert_eq!(shown(&cache), expected, "step {step} (seed {seed})");
        }
    }

    #[test]
    fn a_process_does_not_list_its_own_tokens() {
        let cache = GraphCache::default();
        let mine = node("own", 0, "talker");
        cache.update(&subscription(mine.clone(), 1).key_expr(), true);
        cache.update(&Token::of_node(mine).key_expr(), true);
        assert_eq!(shown(&cache), []);
    }
}
