//! From an SROS2 policy and a keystore to Zenoh configurations: one per enclave for its
//! processes' sessions, one for the router.
//!
//! Every configuration does two things:
//! - **authenticates** with mutual TLS: the endpoints are `tls/`, each side presents its
//!   enclave's certificate and accepts only certificates signed by the keystore's CA
//!   (`enable_mtls`); host names are not checked (`verify_name_on_connect: false`): the
//!   identity is the enclave's certificate, as in SROS2, not the machine's name;
//! - **authorises** with Zenoh's access control, default deny: one subject per enclave,
//!   matched by its certificate's common name (the enclave's path), allowed what the
//!   policy grants it, on the key expressions rmw_zenoh uses for it.
//!
//! The rules are rmw_zenoh's generator's (`outgoing_publications`,
//! `incoming_subscriptions`, ... with the same messages and key expressions), bound to
//! certificates instead of applying to every link:
//! - each configuration has one subject per enclave of the policy, and for it the
//!   enclave's rules turned round: what a peer of that enclave may send is what this side
//!   may accept from it (its `outgoing_publications` are this side's ingress). So the
//!   router checks everything routed through it, two peers connected directly check each
//!   other, and a process whose own configuration was tampered with still cannot get past
//!   an honest one (rmw_zenoh#477: rules in the router alone are bypassed by direct peer
//!   links; rules in each session alone trust every session to keep them);
//! - a session's configuration also has the router's subject, with its own enclave's
//!   rules in its own words: it sends the router only what it may send, and accepts from
//!   it only what it may receive, whatever the router's configuration;
//! - the router's configuration has the router's subject too, for other routers of the
//!   router's enclave (rmw_zenoh#468): between routers, whatever some enclave of the
//!   policy may send or receive crosses both ways (each router checks its own sessions).
//!
//! Key expressions, for a name `/robot/chatter` in domain 0 (rmw_zenoh's layout,
//! [`topic_keys`]): the data `0/robot/chatter/*/*` (type and type hash follow the name)
//! and zenoh-ext's `0/robot/chatter/*/*/@adv/**` (the history of transient-local
//! publishers: a publisher's queryable and token `.../@adv/pub/*/*/_`, a late joiner's
//! query `.../@adv/**`). A service uses the data form; an action its three services and
//! two topics under `<name>/_action/` (rmw_zenoh's generator skips actions). Every enclave
//! may use the graph's liveliness tokens (`@ros2_lv/<domain>/**`, queries and replies
//! included) and kairos's shared waits (`@kairos/<domain>/**`).
//!
//! Unlike rmw_zenoh's generator, every enclave of the policy is read (it reads the first),
//! a profile with `publish` and `subscribe` keeps both, `DENY` removes a name from what
//! other profiles of the enclave allow, and the router gets access rules too.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::keystore::{Enclave, Keystore, KeystoreError};
use crate::policy::{Access, EnclavePolicy, Policy};

/// Zenoh's access-control message kinds, by their configuration names.
mod msg {
    pub const PUT: &str = "put";
    pub const DELETE: &str = "delete";
    pub const DECLARE_SUBSCRIBER: &str = "declare_subscriber";
    pub const QUERY: &str = "query";
    pub const DECLARE_QUERYABLE: &str = "declare_queryable";
    pub const REPLY: &str = "reply";
    pub const LIVELINESS_TOKEN: &str = "liveliness_token";
    pub const DECLARE_LIVELINESS_SUBSCRIBER: &str = "declare_liveliness_subscriber";
    pub const LIVELINESS_QUERY: &str = "liveliness_query";
    pub const ALL: [&str; 9] = [
        PUT,
        DELETE,
        DECLARE_SUBSCRIBER,
        QUERY,
        DECLARE_QUERYABLE,
        REPLY,
        LIVELINESS_TOKEN,
        DECLARE_LIVELINESS_SUBSCRIBER,
        LIVELINESS_QUERY,
    ];
}

const INGRESS: &str = "ingress";
const EGRESS: &str = "egress";

/// Where the router listens and sessions connect, and who the router is.
#[derive(Debug, Clone)]
pub struct Options {
    /// The ROS domain.
    pub domain: u32,
    /// The router's enclave (its certificate's common name); `/zenohd` by default, the
    /// name rmw_zenoh's generator gives the router's folder.
    pub router_enclave: String,
    /// Where the router listens, e.g. `tls/[::]:7447`.
    pub router_listen: String,
    /// Where sessions connect, e.g. `tls/localhost:7447`.
    pub router_connect: String,
    /// Where sessions listen for peers, e.g. `tls/localhost:0`.
    pub session_listen: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            domain: 0,
            router_enclave: "/zenohd".into(),
            router_listen: "tls/[::]:7447".into(),
            router_connect: "tls/localhost:7447".into(),
            session_listen: "tls/localhost:0".into(),
        }
    }
}

/// A generated configuration.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The enclave it is for.
    pub enclave: String,
    /// Whether it is the router's.
    pub router: bool,
    /// The files it is written to, relative to the output folder: kairos's
    /// (`enclaves/<enclave>.json5`, found from `ROS_SECURITY_*`), and rmw_zenoh's
    /// generator's (`<node>.json5` for each node of the enclave, `zenohd.json5` for the
    /// router), where no other enclave has a node of that name.
    pub files: Vec<String>,
    /// The configuration.
    pub config: Value,
}

/// A policy that cannot be turned into configurations.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The keystore lacks an enclave the policy or the router needs.
    #[error(transparent)]
    Keystore(#[from] KeystoreError),
    /// The policy names no enclave.
    #[error(
        "the policy names no enclave; add <enclave path=\"/...\"> elements, or generate one with `kairos security generate-policy`"
    )]
    Empty,
}

/// The key expressions of the topic or service `name` in `domain`: its data and its
/// zenoh-ext history.
pub fn topic_keys(domain: u32, name: &str) -> [String; 2] {
    let name = name.trim_matches('/');
    [
        format!("{domain}/{name}/*/*"),
        format!("{domain}/{name}/*/*/@adv/**"),
    ]
}

const ACTION_SERVICES: [&str; 3] = ["send_goal", "cancel_goal", "get_result"];
const ACTION_TOPICS: [&str; 2] = ["feedback", "status"];

fn action_part(action: &str, part: &str) -> String {
    format!("{}/_action/{part}", action.trim_end_matches('/'))
}

/// The names an enclave may use, actions expanded into their services and topics.
#[derive(Default)]
struct Uses {
    publish: Vec<String>,
    subscribe: Vec<String>,
    reply: Vec<String>,
    request: Vec<String>,
}

impl Uses {
    fn of(enclave: &EnclavePolicy) -> Self {
        let mut uses = Uses {
            publish: enclave.allowed(Access::Publish),
            subscribe: enclave.allowed(Access::Subscribe),
            reply: enclave.allowed(Access::Reply),
            request: enclave.allowed(Access::Request),
        };
        for action in enclave.allowed(Access::Call) {
            uses.request
                .extend(ACTION_SERVICES.map(|s| action_part(&action, s)));
            uses.subscribe
                .extend(ACTION_TOPICS.map(|t| action_part(&action, t)));
        }
        for action in enclave.allowed(Access::Execute) {
            uses.reply
                .extend(ACTION_SERVICES.map(|s| action_part(&action, s)));
            uses.publish
                .extend(ACTION_TOPICS.map(|t| action_part(&action, t)));
        }
        for list in [
            &mut uses.publish,
            &mut uses.subscribe,
            &mut uses.reply,
            &mut uses.request,
        ] {
            list.sort();
            list.dedup();
        }
        uses
    }
}

/// One allow rule, before it gets its subject's id: what, which way, on which keys.
struct Rule {
    what: &'static str,
    flow: &'static str,
    messages: &'static [&'static str],
    keys: Vec<String>,
}

fn keys(names: &[String], key: impl Fn(&str) -> String) -> Vec<String> {
    names.iter().map(|n| key(n)).collect()
}

/// What a process of `enclave` may send and receive, in its own words (rmw_zenoh's
/// generator's rules: `outgoing_publications`, `incoming_subscriptions`...).
fn own_rules(domain: u32, enclave: &EnclavePolicy) -> Vec<Rule> {
    use msg::*;
    let uses = Uses::of(enclave);
    let data = |names: &[String]| keys(names, |n| topic_keys(domain, n)[0].clone());
    let offer = |names: &[String]| {
        keys(names, |n| {
            format!("{}/@adv/pub/*/*/_", topic_keys(domain, n)[0])
        })
    };
    let ask = |names: &[String]| keys(names, |n| topic_keys(domain, n)[1].clone());
    let (publish, subscribe) = (&uses.publish, &uses.subscribe);
    let rule = |what, flow, messages, keys| Rule {
        what,
        flow,
        messages,
        keys,
    };
    let mut rules = vec![
        rule(
            "outgoing_publications",
            EGRESS,
            &[PUT, REPLY][..],
            data(publish),
        ),
        rule(
            "incoming_subscriptions",
            INGRESS,
            &[DECLARE_SUBSCRIBER],
            data(publish),
        ),
        rule(
            "outgoing_publications_transient_local_queryable",
            EGRESS,
            &[DECLARE_QUERYABLE, LIVELINESS_TOKEN],
            offer(publish),
        ),
        rule(
            "incoming_subscriptions_transient_local_query",
            INGRESS,
            &[QUERY],
            ask(publish),
        ),
        rule(
            "outgoing_subscriptions",
            EGRESS,
            &[DECLARE_SUBSCRIBER],
            data(subscribe),
        ),
        rule(
            "incoming_publications",
            INGRESS,
            &[PUT, REPLY],
            data(subscribe),
        ),
        rule(
            "outgoing_subscriptions_transient_local_query",
            EGRESS,
            &[QUERY, DECLARE_LIVELINESS_SUBSCRIBER],
            ask(subscribe),
        ),
        rule(
            "incoming_subscriptions_transient_local_queryable",
            INGRESS,
            &[DECLARE_QUERYABLE, LIVELINESS_TOKEN],
            offer(subscribe),
        ),
        rule("incoming_queries", INGRESS, &[QUERY], data(&uses.reply)),
        rule(
            "outgoing_queryables_replies",
            EGRESS,
            &[DECLARE_QUERYABLE, REPLY],
            data(&uses.reply),
        ),
        rule("outgoing_queries", EGRESS, &[QUERY], data(&uses.request)),
        rule(
            "incoming_queryables_replies",
            INGRESS,
            &[DECLARE_QUERYABLE, REPLY],
            data(&uses.request),
        ),
    ];
    rules.retain(|r| !r.keys.is_empty());
    rules
}

/// The graph's liveliness tokens (and the replies to liveliness queries) and kairos's
/// shared waits: every enclave's, both ways.
fn graph_rule(domain: u32) -> Rule {
    Rule {
        what: "graph",
        flow: "both",
        messages: &msg::ALL,
        keys: vec![
            format!("@ros2_lv/{domain}/**"),
            format!("@kairos/{domain}/**"),
        ],
    }
}

fn flip(flow: &'static str) -> &'static str {
    match flow {
        INGRESS => EGRESS,
        EGRESS => INGRESS,
        both => both,
    }
}

/// Gathers rules, subjects and policies.
#[derive(Default)]
struct Acl {
    rules: Vec<Value>,
    subjects: Vec<Value>,
    policies: Vec<Value>,
}

impl Acl {
    /// Subject `cn` (a certificate's common name) may do what `rules` say.
    fn subject(&mut self, cn: &str, rules: Vec<Rule>) {
        let mut ids = Vec::new();
        for rule in rules {
            let id = format!("{cn} {}", rule.what);
            let flows = match rule.flow {
                INGRESS | EGRESS => vec![rule.flow],
                _ => vec![INGRESS, EGRESS],
            };
            self.rules.push(json!({
                "id": id,
                "messages": rule.messages,
                "flows": flows,
                "permission": "allow",
                "key_exprs": rule.keys,
            }));
            ids.push(id);
        }
        self.subjects
            .push(json!({ "id": cn, "cert_common_names": [cn] }));
        self.policies
            .push(json!({ "id": cn, "subjects": [cn], "rules": ids }));
    }

    fn into_json(self) -> Value {
        json!({
            "enabled": true,
            "default_permission": "deny",
            "rules": self.rules,
            "subjects": self.subjects,
            "policies": self.policies,
        })
    }
}

/// The access-control section of a configuration: peers of each enclave may do what it
/// may do (its own rules, flows turned round: its outgoing publications are this side's
/// incoming ones); the router, for a session of enclave `own`, carries what `own` may
/// send and receive.
fn access_control(policy: &Policy, options: &Options, own: Option<&EnclavePolicy>) -> Value {
    let domain = options.domain;
    let mut acl = Acl::default();
    for enclave in &policy.enclaves {
        let mut rules: Vec<Rule> = own_rules(domain, enclave)
            .into_iter()
            .map(|r| Rule {
                flow: flip(r.flow),
                ..r
            })
            .collect();
        rules.push(graph_rule(domain));
        acl.subject(&enclave.path, rules);
    }
    match own {
        Some(own) => {
            let mut rules = own_rules(domain, own);
            rules.push(graph_rule(domain));
            acl.subject(&options.router_enclave, rules);
        }
        None => acl.subject(&options.router_enclave, router_rules(policy, domain)),
    }
    acl.into_json()
}

/// What one router may exchange with another of the router's enclave (rmw_zenoh#468):
/// whatever some enclave may send or receive, both ways. Each router checks its own
/// sessions; between routers, only what no enclave may do at all is refused.
fn router_rules(policy: &Policy, domain: u32) -> Vec<Rule> {
    let mut merged: Vec<Rule> = Vec::new();
    for rule in policy.enclaves.iter().flat_map(|e| own_rules(domain, e)) {
        match merged
            .iter_mut()
            .find(|m| m.what == rule.what && m.messages == rule.messages)
        {
            Some(m) => {
                for key in rule.keys {
                    if !m.keys.contains(&key) {
                        m.keys.push(key);
                    }
                }
            }
            None => merged.push(Rule {
                flow: "both",
                ..rule
            }),
        }
    }
    merged.push(graph_rule(domain));
    merged
}

/// The `transport/link/tls` settings of a process of `enclave`: mutual TLS with its
/// identity, checked against its CA, host names not checked.
pub fn tls(enclave: &Enclave) -> Value {
    let path = |p: std::path::PathBuf| p.to_string_lossy().into_owned();
    json!({
        "root_ca_certificate": path(enclave.ca()),
        "listen_private_key": path(enclave.key()),
        "listen_certificate": path(enclave.cert()),
        "connect_private_key": path(enclave.key()),
        "connect_certificate": path(enclave.cert()),
        "enable_mtls": true,
        "verify_name_on_connect": false,
        "close_link_on_expiration": true,
    })
}

/// The file kairos reads for `enclave` under the output folder (see
/// [`crate::environment`]).
pub fn enclave_file(enclave: &str) -> String {
    format!("enclaves{enclave}.json5")
}

/// The router's file name in rmw_zenoh's generator's layout.
pub const ROUTER_FILE: &str = "zenohd.json5";

/// The session configuration of each enclave of `policy`, and the router's, from the
/// identities in `keystore` (every enclave and the router's must exist there).
pub fn generate(
    policy: &Policy,
    keystore: &Keystore,
    options: &Options,
) -> Result<Vec<Generated>, GenerateError> {
    if policy.enclaves.is_empty() {
        return Err(GenerateError::Empty);
    }
    let router = keystore.enclave(&options.router_enclave)?;
    let mut claims: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for enclave in &policy.enclaves {
        for profile in &enclave.profiles {
            claims
                .entry(&profile.node)
                .or_default()
                .insert(&enclave.path);
        }
    }
    let mut out = Vec::new();
    for enclave in &policy.enclaves {
        let identity = keystore.enclave(&enclave.path)?;
        let config = json!({
            "mode": "peer",
            "connect": { "endpoints": [options.router_connect] },
            "listen": { "endpoints": [options.session_listen] },
            "scouting": { "multicast": { "enabled": false } },
            "timestamping": { "enabled": { "router": true, "peer": true, "client": true } },
            "transport": { "link": { "tls": tls(&identity) } },
            "access_control": access_control(policy, options, Some(enclave)),
        });
        let mut files = vec![enclave_file(&enclave.path)];
        let mut nodes: Vec<&str> = enclave
            .profiles
            .iter()
            .map(|p| p.node.as_str())
            .filter(|n| claims[n].len() == 1 && format!("{n}.json5") != ROUTER_FILE)
            .collect();
        nodes.sort();
        nodes.dedup();
        files.extend(nodes.into_iter().map(|n| format!("{n}.json5")));
        out.push(Generated {
            enclave: enclave.path.clone(),
            router: false,
            files,
            config,
        });
    }
    let config = json!({
        "mode": "router",
        "listen": { "endpoints": [options.router_listen] },
        "scouting": { "multicast": { "enabled": false } },
        "timestamping": { "enabled": { "router": true, "peer": true, "client": true } },
        "transport": { "link": { "tls": tls(&router) } },
        "access_control": access_control(policy, options, None),
    });
    out.push(Generated {
        enclave: options.router_enclave.clone(),
        router: true,
        files: vec![enclave_file(&options.router_enclave), ROUTER_FILE.into()],
        config,
    });
    Ok(out)
}

/// Writes `generated` under `dir`, each configuration to each of its files, as JSON
/// (which JSON5 readers read); returns the files written.
pub fn write(generated: &[Generated], dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for g in generated {
        let text = serde_json::to_string_pretty(&g.config).expect("a JSON value serializes");
        for file in &g.files {
            let path = dir.join(file);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, format!("{text}\n"))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keystore::Validity;
    use std::path::Path;

    fn setup() -> (tempfile::TempDir, Keystore, Policy) {
        let dir = tempfile::tempdir().unwrap();
        let store = Keystore::create(dir.path(), Validity::default()).unwrap();
        for e in ["/zenohd", "/tl/talker", "/tl/listener"] {
            store.create_enclave(e, Validity::default(), false).unwrap();
        }
        let policy = Policy::parse(
            r#"<policy version="0.2.0"><enclaves>
              <enclave path="/tl/talker"><profiles><profile ns="/" node="talker">
                <topics publish="ALLOW"><topic>chatter</topic></topics>
                <actions execute="ALLOW"><action>fib</action></actions>
              </profile></profiles></enclave>
              <enclave path="/tl/listener"><profiles><profile ns="/" node="listener">
                <topics subscribe="ALLOW"><topic>chatter</topic></topics>
                <services request="ALLOW"><service>/talker/get_parameters</service></services>
              </profile></profiles></enclave>
            </enclaves></policy>"#,
            Path::new("p.xml"),
        )
        .unwrap();
        (dir, store, policy)
    }

    fn rule<'a>(config: &'a Value, id: &str) -> &'a Value {
        config["access_control"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no rule {id} in {config:#}"))
    }

    #[test]
    fn each_enclave_gets_a_session_config_and_the_router_one_with_every_rule() {
        let (_dir, store, policy) = setup();
        let generated = generate(&policy, &store, &Options::default()).unwrap();
        let files: Vec<Vec<String>> = generated.iter().map(|g| g.files.clone()).collect();
        assert_eq!(
            files,
            [
                vec![
                    "enclaves/tl/talker.json5".to_string(),
                    "talker.json5".into()
                ],
                vec!["enclaves/tl/listener.json5".into(), "listener.json5".into()],
                vec!["enclaves/zenohd.json5".into(), "zenohd.json5".into()],
            ]
        );
        for g in &generated {
            let acl = &g.config["access_control"];
            assert_eq!(acl["default_permission"], "deny");
            assert_eq!(g.config["transport"]["link"]["tls"]["enable_mtls"], true);
            // The talker's outgoing publications are every reader's incoming ones.
            let publish = rule(&g.config, "/tl/talker outgoing_publications");
            assert_eq!(
                publish["key_exprs"],
                json!([
                    "0/chatter/*/*",
                    "0/fib/_action/feedback/*/*",
                    "0/fib/_action/status/*/*"
                ])
            );
            assert_eq!(publish["flows"], json!(["ingress"]));
            let receive = rule(&g.config, "/tl/listener incoming_publications");
            assert_eq!(receive["key_exprs"], json!(["0/chatter/*/*"]));
            assert_eq!(receive["flows"], json!(["egress"]));
            let serves = rule(&g.config, "/tl/talker outgoing_queryables_replies");
            assert_eq!(
                serves["key_exprs"],
                json!([
                    "0/fib/_action/cancel_goal/*/*",
                    "0/fib/_action/get_result/*/*",
                    "0/fib/_action/send_goal/*/*"
                ])
            );
            // Sessions know their router; routers know other routers (rmw_zenoh#468).
            let knows_routers = acl["subjects"].to_string().contains("\"/zenohd\"");
            assert!(knows_routers, "{}", g.files[0]);
            if g.router {
                let between = rule(&g.config, "/zenohd outgoing_publications");
                assert_eq!(between["flows"], json!(["ingress", "egress"]));
                assert!(
                    between["key_exprs"]
                        .to_string()
                        .contains("\"0/chatter/*/*\""),
                    "{between}"
                );
            }
        }
        // Toward the router, a session keeps to its own enclave's rules, in its own words.
        let own = rule(&generated[0].config, "/zenohd outgoing_publications");
        assert_eq!(own["flows"], json!(["egress"]));
        assert!(
            rule(&generated[1].config, "/zenohd incoming_publications")["key_exprs"]
                == json!(["0/chatter/*/*"])
        );
        let talker = &generated[0].config["transport"]["link"]["tls"];
        assert!(
            talker["connect_certificate"]
                .as_str()
                .unwrap()
                .ends_with("enclaves/tl/talker/cert.pem")
        );
    }

    #[test]
    fn a_missing_identity_is_named_with_the_command_that_makes_it() {
        let (_dir, store, mut policy) = setup();
        policy.enclaves[0].path = "/tl/ghost".into();
        let err = generate(&policy, &store, &Options::default()).unwrap_err();
        assert!(err.to_string().contains("create-enclave"), "{err}");
        assert!(err.to_string().contains("/tl/ghost"), "{err}");
    }

    #[test]
    fn zenoh_reads_every_generated_config() {
        let (_dir, store, policy) = setup();
        for g in generate(&policy, &store, &Options::default()).unwrap() {
            let text = serde_json::to_string_pretty(&g.config).unwrap();
            let config = zenoh::Config::from_json5(&text)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", g.files[0]));
            assert_eq!(config.get_json("access_control/enabled").unwrap(), "true");
        }
    }

    /// rmw_zenoh's generator (zenoh_security_tools 0.12.0) writes, for
    /// `<profile ns="/" node="talker"><topics publish="ALLOW"><topic>chatter</topic>`,
    /// these rules (its README and config_generator.cpp); kairos writes the same rules, in
    /// the process's own words, for the link to the router. The TLS keys are the same too.
    #[test]
    fn a_sessions_own_rules_are_rmw_zenohs_key_by_key() {
        let (_dir, store, policy) = setup();
        let generated = generate(&policy, &store, &Options::default()).unwrap();
        let talker = &generated[0].config;
        let rmw_zenoh = json!([
            {"id": "outgoing_publications", "messages": ["put", "reply"], "flows": ["egress"], "key_exprs": ["0/chatter/*/*"]},
            {"id": "incoming_subscriptions", "messages": ["declare_subscriber"], "flows": ["ingress"], "key_exprs": ["0/chatter/*/*"]},
            {"id": "outgoing_publications_transient_local_queryable", "messages": ["declare_queryable", "liveliness_token"], "flows": ["egress"], "key_exprs": ["0/chatter/*/*/@adv/pub/*/*/_"]},
            {"id": "incoming_subscriptions_transient_local_query", "messages": ["query"], "flows": ["ingress"], "key_exprs": ["0/chatter/*/*/@adv/**"]},
        ]);
        for expected in rmw_zenoh.as_array().unwrap() {
            let id = format!("/zenohd {}", expected["id"].as_str().unwrap());
            let ours = rule(talker, &id);
            for key in ["messages", "flows"] {
                assert_eq!(ours[key], expected[key], "{id} {key}");
            }
            // The talker also serves the action fib: its topics follow chatter's.
            let keys = ours["key_exprs"].as_array().unwrap();
            assert_eq!(keys[0], expected["key_exprs"][0], "{id}");
        }
        let tls = &talker["transport"]["link"]["tls"];
        for key in [
            "root_ca_certificate",
            "listen_private_key",
            "listen_certificate",
            "connect_private_key",
            "connect_certificate",
        ] {
            assert!(tls[key].is_string(), "{key}");
        }
        assert_eq!(tls["enable_mtls"], true);
        assert_eq!(tls["verify_name_on_connect"], false);
        assert!(
            tls["root_ca_certificate"]
                .as_str()
                .unwrap()
                .ends_with("identity_ca.cert.pem")
        );
        assert_eq!(talker["access_control"]["default_permission"], "deny");
    }
}
