//! A denied declaration is an error, never a silent nothing.
//!
//! Zenoh enforces its configuration's `access_control` by dropping what the rules refuse,
//! and says so only in its trace log: a publisher the policy forbids would publish into
//! the void. Before the transport declares an entity it asks the same rules whether this
//! process may do what the entity needs (a publisher `put`, a subscription
//! `declare_subscriber`, a server `declare_queryable`, a client `query`) on the entity's
//! key expression, and refuses with [`Denied`], which names the entity, the process's
//! identity and what to change in the policy.
//!
//! Which rules are this process's:
//! - the subject whose `cert_common_names` holds the common name of the certificate this
//!   process presents (configurations `kairos security generate-configs` writes: peers of
//!   an enclave may send what the enclave may, so the rules for its own name, read the
//!   other way round, are what it may send);
//! - else the subjects with no attribute, which match every link (configurations
//!   rmw_zenoh's generator writes: its rules are the process's own, egress is sending).
//!
//! The runtime's own entities (`/rosout`, `/parameter_events`, `/clock`, parameter and
//! type-description services) are not refused: a denied one is counted in
//! [`AccessRules::denied`] and logged once, and zenoh drops its traffic. Every denial,
//! refused or not, is kept in [`AccessRules::denials`], which the process's
//! [`crate::access_report`] answers with.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use serde_json::Value;
use zenoh::key_expr::KeyExpr;

use crate::access_report::Denial;
use crate::graph_key::EntityKind;

/// An entity the access rules forbid.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the security configuration does not let {identity} {what} {name} (zenoh would drop its \
     traffic): no allow rule of its access_control covers `{message}` on {key}{denied_by}; \
     allow it in the enclave's profile of the SROS2 policy (e.g. <{group} {attribute}=\"ALLOW\">\
     <{item}>{name}</{item}></{group}>) and run `kairos security generate-configs` again"
)]
pub struct Denied {
    /// Who: "enclave /robot/driver" or "this process".
    pub identity: String,
    /// What it asked: "publish on", "subscribe to", "serve", "call".
    pub what: &'static str,
    /// The topic or service.
    pub name: String,
    /// Its key expression.
    pub key: String,
    /// The zenoh message the rules refuse.
    pub message: &'static str,
    /// ", and rule X denies it", when a deny rule matched.
    pub denied_by: String,
    group: &'static str,
    attribute: &'static str,
    item: &'static str,
}

#[derive(Debug)]
struct Rule {
    id: String,
    allow: bool,
    messages: Vec<String>,
    keys: Vec<KeyExpr<'static>>,
}

/// The access rules that concern this process's own declarations.
#[derive(Debug, Default)]
pub struct AccessRules {
    enabled: bool,
    default_allow: bool,
    identity: String,
    rules: Vec<Rule>,
    denied: AtomicU64,
    logged: Mutex<std::collections::HashSet<String>>,
    /// Every denial so far, by kind and name (bounded: see [`MAX_DENIALS`]).
    denials: Mutex<Vec<Denial>>,
}

/// Distinct denied declarations kept apart; later ones are counted under `(others)`.
pub const MAX_DENIALS: usize = 256;

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn common_name(config: &zenoh::Config) -> Option<String> {
    let path: String = serde_json::from_str(
        &config
            .get_json("transport/link/tls/connect_certificate")
            .ok()?,
    )
    .ok()?;
    kairos_security::keystore::CertificateFacts::read(Path::new(&path))
        .ok()
        .map(|facts| facts.common_name)
}

impl AccessRules {
    /// The rules of `config` that concern this process.
    pub fn of(config: &zenoh::Config) -> Self {
        let acl: Value = config
            .get_json("access_control")
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        let cn = common_name(config);
        let identity = cn
            .as_ref()
            .map_or_else(|| "this process".to_owned(), |cn| format!("enclave {cn}"));
        if acl["enabled"] != Value::Bool(true) {
            return Self {
                identity,
                ..Self::default()
            };
        }
        let subjects = acl["subjects"].as_array().cloned().unwrap_or_default();
        let mine = |attribute_free: bool| -> Vec<String> {
            subjects
                .iter()
                .filter(|s| {
                    let object = s.as_object();
                    // Zenoh writes an absent attribute as null.
                    let attributes = object.map_or(0, |o| {
                        o.iter().filter(|(k, v)| *k != "id" && !v.is_null()).count()
                    });
                    if attribute_free {
                        attributes == 0
                    } else {
                        cn.as_ref()
                            .is_some_and(|cn| strings(&s["cert_common_names"]).contains(cn))
                    }
                })
                .filter_map(|s| s["id"].as_str().map(str::to_owned))
                .collect()
        };
        // Rules for our own name describe what peers accept from us: their ingress.
        let (subject_ids, sending) = match mine(false) {
            ids if !ids.is_empty() => (ids, "ingress"),
            _ => (mine(true), "egress"),
        };
        let rule_ids: Vec<String> = acl["policies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| {
                strings(&p["subjects"])
                    .iter()
                    .any(|s| subject_ids.contains(s))
            })
            .flat_map(|p| strings(&p["rules"]))
            .collect();
        let rules = acl["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| {
                r["id"]
                    .as_str()
                    .is_some_and(|id| rule_ids.iter().any(|i| i == id))
            })
            .filter(|r| {
                let flows = strings(&r["flows"]);
                flows.is_empty() || flows.iter().any(|f| f == sending)
            })
            .map(|r| Rule {
                id: r["id"].as_str().unwrap_or_default().to_owned(),
                allow: r["permission"] == "allow",
                messages: strings(&r["messages"]),
                keys: strings(&r["key_exprs"])
                    .into_iter()
                    .filter_map(|k| KeyExpr::try_from(k).ok())
                    .collect(),
            })
            .collect();
        Self {
            enabled: true,
            default_allow: acl["default_permission"] == "allow",
            identity,
            rules,
            denied: AtomicU64::new(0),
            logged: Mutex::default(),
            denials: Mutex::default(),
        }
    }

    /// Whose rules these are: `enclave /robot/driver`, or `this process`.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Every declaration denied so far, in the order first asked, with how often.
    pub fn denials(&self) -> Vec<Denial> {
        self.denials.lock().clone()
    }

    fn record(&self, kind: EntityKind, name: &str, key: &str, rule: &str, refused: bool) {
        let kind = kind_name(kind);
        let mut denials = self.denials.lock();
        let full = denials.len() >= MAX_DENIALS;
        let name = if full { "(others)" } else { name };
        if let Some(denial) = denials
            .iter_mut()
            .find(|d| d.kind == kind && d.name == name)
        {
            denial.count += 1;
            return;
        }
        denials.push(Denial {
            kind: kind.to_owned(),
            name: name.to_owned(),
            key: if full { String::new() } else { key.to_owned() },
            rule: rule.to_owned(),
            refused,
            count: 1,
        });
    }

    /// What the rules are, in a line: how many concern this process and what happens
    /// to the rest.
    pub fn describe(&self) -> String {
        if !self.enabled {
            return "none: zenoh lets every operation through".to_owned();
        }
        format!(
            "{} rule(s) for {}; anything else {}",
            self.rules.len(),
            self.identity,
            if self.default_allow {
                "allowed"
            } else {
                "denied"
            }
        )
    }

    /// Whether the configuration has access rules at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// How many of the runtime's own entities the rules denied (each still declared;
    /// zenoh drops its traffic).
    pub fn denied(&self) -> u64 {
        self.denied.load(Ordering::Relaxed)
    }

    /// Whether this process may declare an entity of `kind` named `name` on `key`.
    pub fn check(&self, kind: EntityKind, name: &str, key: &str) -> Result<(), Box<Denied>> {
        if !self.enabled {
            return Ok(());
        }
        let (what, message, group, attribute, item) = match kind {
            EntityKind::Publisher => ("publish on", "put", "topics", "publish", "topic"),
            EntityKind::Subscription => (
                "subscribe to",
                "declare_subscriber",
                "topics",
                "subscribe",
                "topic",
            ),
            EntityKind::Service => ("serve", "declare_queryable", "services", "reply", "service"),
            EntityKind::Client => ("call", "query", "services", "request", "service"),
            EntityKind::Node => return Ok(()),
        };
        let Ok(declared) = KeyExpr::try_from(key.to_owned()) else {
            return Ok(());
        };
        let covering = |allow: bool| {
            self.rules.iter().find(|r| {
                r.allow == allow
                    && r.messages.iter().any(|m| m == message)
                    && r.keys.iter().any(|k| k.includes(&declared))
            })
        };
        let deny = covering(false);
        if deny.is_none() && (covering(true).is_some() || self.default_allow) {
            return Ok(());
        }
        let rule = deny.map_or("", |r| &r.id);
        let refused = !runtime_own(kind, name);
        kairos::trace::tp::access_denied(
            kind_name(kind),
            name,
            key,
            self.identity.strip_prefix("enclave ").unwrap_or_default(),
            rule,
            i32::from(refused),
        );
        self.record(kind, name, key, rule, refused);
        let denied = Denied {
            identity: self.identity.clone(),
            what,
            name: name.to_owned(),
            key: key.to_owned(),
            message,
            denied_by: deny
                .map_or_else(String::new, |r| format!(", and rule '{}' denies it", r.id)),
            group,
            attribute,
            item,
        };
        if runtime_own(kind, name) {
            self.denied.fetch_add(1, Ordering::Relaxed);
            if self.logged.lock().insert(name.to_owned()) {
                crate::report::warn(&denied);
            }
            return Ok(());
        }
        Err(Box::new(denied))
    }
}

/// `kind` as the `access_denied` trace event names it.
fn kind_name(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Publisher => "publisher",
        EntityKind::Subscription => "subscription",
        EntityKind::Service => "service",
        EntityKind::Client => "client",
        EntityKind::Node => "node",
    }
}

/// The runtime's own entities, which a policy may leave out (as `ros2 security
/// generate_policy` lists them, SROS2's hand-written policies often do not): every node's
/// parameter and type-description servers, `/rosout` and `/parameter_events` publishers,
/// the `/clock` and `/parameter_events` subscriptions. A client is always the program's.
fn runtime_own(kind: EntityKind, name: &str) -> bool {
    const SERVICES: [&str; 7] = [
        "/list_parameters",
        "/get_parameters",
        "/set_parameters",
        "/set_parameters_atomically",
        "/describe_parameters",
        "/get_parameter_types",
        "/get_type_description",
    ];
    match kind {
        EntityKind::Service => SERVICES.iter().any(|s| name.ends_with(s)),
        EntityKind::Publisher => matches!(name, "/rosout" | "/parameter_events"),
        EntityKind::Subscription => matches!(name, "/clock" | "/parameter_events"),
        EntityKind::Client | EntityKind::Node => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(acl: Value) -> zenoh::Config {
        let mut config = zenoh::Config::default();
        config
            .insert_json5("access_control", &acl.to_string())
            .unwrap();
        config
    }

    #[test]
    fn rmw_zenoh_style_rules_are_the_processs_own_and_deny_wins() {
        let rules = AccessRules::of(&config(serde_json::json!({
            "enabled": true,
            "default_permission": "deny",
            "rules": [
                {"id": "out", "messages": ["put"], "flows": ["egress"], "permission": "allow", "key_exprs": ["0/chatter/*/*", "0/secret/*/*"]},
                {"id": "in", "messages": ["declare_subscriber"], "flows": ["egress"], "permission": "allow", "key_exprs": ["0/chatter/*/*"]},
                {"id": "no secrets", "messages": ["put"], "flows": ["egress"], "permission": "deny", "key_exprs": ["0/secret/**"]},
            ],
            "subjects": [{"id": "all"}],
            "policies": [{"subjects": ["all"], "rules": ["out", "in", "no secrets"]}],
        })));
        let key = |n: &str| format!("0/{n}/std_msgs::msg::dds_::String_/RIHS01_00");
        rules
            .check(EntityKind::Publisher, "/chatter", &key("chatter"))
            .unwrap();
        rules
            .check(EntityKind::Subscription, "/chatter", &key("chatter"))
            .unwrap();
        let err = rules
            .check(EntityKind::Publisher, "/secret", &key("secret"))
            .unwrap_err();
        assert!(
            err.to_string().contains("rule 'no secrets' denies it"),
            "{err}"
        );
        let err = rules
            .check(EntityKind::Client, "/add", &key("add"))
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("call /add") && text.contains("<services request=\"ALLOW\">"),
            "{text}"
        );
        // The runtime's own entities are counted, not refused.
        rules
            .check(
                EntityKind::Service,
                "/n/get_parameters",
                &key("n/get_parameters"),
            )
            .unwrap();
        assert_eq!(rules.denied(), 1);
        let denials = rules.denials();
        assert_eq!(
            denials
                .iter()
                .map(|d| (
                    d.kind.as_str(),
                    d.name.as_str(),
                    d.rule.as_str(),
                    d.refused,
                    d.count
                ))
                .collect::<Vec<_>>(),
            [
                ("publisher", "/secret", "no secrets", true, 1),
                ("client", "/add", "", true, 1),
                ("service", "/n/get_parameters", "", false, 1),
            ]
        );
        assert_eq!(
            rules.describe(),
            "3 rule(s) for this process; anything else denied"
        );
    }

    #[test]
    fn without_access_control_everything_is_allowed() {
        let rules = AccessRules::of(&zenoh::Config::default());
        assert!(!rules.enabled());
        rules.check(EntityKind::Publisher, "/x", "0/x/T/H").unwrap();
        assert!(rules.describe().starts_with("none"), "{}", rules.describe());
    }
}
