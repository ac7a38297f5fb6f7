//! What a process would be allowed, checked before it runs (`kairos security check`).
//!
//! A secured system fails in ways that are slow to find from inside: a certificate that
//! expired or comes from another CA is refused at the TLS handshake, and no peer says why;
//! a rule that does not cover a topic makes zenoh drop its traffic without a word to the
//! sender (ros2/rmw_zenoh#468, #477). [`check`] answers the questions in advance, for one
//! enclave, from the same environment a process reads (`ROS_SECURITY_*`,
//! `ZENOH_SESSION_CONFIG_URI`, `ZENOH_CONFIG_OVERRIDE`, `ROS_DOMAIN_ID`):
//! - which security applies, and which enclave (as [`kairos_security::environment`]);
//! - whether its identity is one its peers accept: signed by the CA they trust, valid
//!   now, and for how many more days;
//! - which configuration its session would use, and whether it loads ([`crate::config`]);
//! - for each operation asked about (publish, subscribe, serve, call), whether the
//!   configuration's access rules let it, with the rule that refuses it and the policy
//!   change that allows it ([`AccessRules::check`], the check every declaration passes).
//!
//! Each answer is a [`Finding`]; a problem says what to do about it.

use std::path::PathBuf;

use kairos_security::environment::{self, Security};
use kairos_security::keystore::{CertificateFacts, check_identity};

use crate::access::AccessRules;
use crate::graph_key::{EntityKind, data_key};

/// Days left under which a certificate's end is called out.
pub const EXPIRY_WARNING_DAYS: i64 = 30;

/// One answer of a [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What was checked: `security`, `identity`, `configuration`, `access rules`, or the
    /// operation (`publish on /chatter`).
    pub subject: String,
    /// Whether it stands in the way of the process (a refused start, a refused peer, a
    /// denied operation).
    pub problem: bool,
    /// The answer, and for a problem what to do.
    pub text: String,
}

/// An operation to check against the access rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Publisher, subscription, service (serving) or client (calling).
    pub kind: EntityKind,
    /// The topic or service, absolute.
    pub name: String,
    /// Its type (`std_msgs/msg/String`), when rules name types; any type otherwise.
    pub ros_type: Option<String>,
}

impl Operation {
    fn verb(&self) -> &'static str {
        match self.kind {
            EntityKind::Publisher => "publish on",
            EntityKind::Subscription => "subscribe to",
            EntityKind::Service => "serve",
            EntityKind::Client => "call",
            EntityKind::Node => "run",
        }
    }
}

fn finding(subject: &str, problem: bool, text: impl Into<String>) -> Finding {
    Finding {
        subject: subject.to_owned(),
        problem,
        text: text.into(),
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Checks what a process of `enclave` (`None`: the environment's, else `/`) would be
/// allowed, reading the environment as the process would.
pub fn check(enclave: Option<&str>, operations: &[Operation]) -> Vec<Finding> {
    let var = |v: &str| std::env::var(v).ok().filter(|s| !s.is_empty());
    let mut out = Vec::new();
    let security = environment::resolve(var, enclave);
    let strategy = var("ROS_SECURITY_STRATEGY").unwrap_or_else(|| "Permissive".into());
    match &security {
        Ok(Security::Off) => out.push(finding(
            "security",
            false,
            "off (ROS_SECURITY_ENABLE is not `true`): no identity, no encryption; access \
             rules apply only if the zenoh configuration has some",
        )),
        Ok(Security::Skipped { reason }) => out.push(finding(
            "security",
            true,
            format!(
                "ROS_SECURITY_ENABLE=true, but a process would run without security \
                 ({reason}); set ROS_SECURITY_STRATEGY=Enforce to have it refuse instead"
            ),
        )),
        Ok(Security::Enclave { enclave, generated }) => {
            out.push(finding(
                "security",
                false,
                format!(
                    "on, strategy {strategy}, enclave {} in {}",
                    enclave.name,
                    enclave.dir.display()
                ),
            ));
            out.push(identity(&enclave.cert(), &enclave.ca()));
            if var("ZENOH_SESSION_CONFIG_URI").is_none() && generated.is_none() {
                out.push(finding(
                    "configuration",
                    true,
                    format!(
                        "no configuration was generated for enclave {}: it talks over \
                         mutual TLS with no access rules; run `kairos security \
                         generate-configs` with a policy",
                        enclave.name
                    ),
                ));
            }
        }
        Err(e) => {
            // The process would refuse to start, for this reason alone.
            out.push(finding("security", true, e.to_string()));
            return out;
        }
    }
    let source = match (&security, var("ZENOH_SESSION_CONFIG_URI")) {
        (_, Some(path)) => format!("{path} (ZENOH_SESSION_CONFIG_URI)"),
        (
            Ok(Security::Enclave {
                generated: Some(path),
                ..
            }),
            None,
        ) => format!("{} (generated for the enclave)", path.display()),
        _ => "kairos's defaults".to_owned(),
    };
    let config = match crate::config::session_config_for(enclave) {
        Ok(config) => config,
        Err(e) => {
            out.push(finding(
                "configuration",
                true,
                format!("{source}: a process would not start: {e}"),
            ));
            return out;
        }
    };
    out.push(finding("configuration", false, source));
    if !matches!(security, Ok(Security::Enclave { .. }))
        && let Some((cert, ca)) = crate::config::tls_identity(&config)
    {
        // Security off, and a configuration of its own with a TLS identity.
        out.push(identity(cert.as_ref(), ca.as_ref()));
    }
    let domain = match crate::config::domain_id() {
        Ok(domain) => domain,
        Err(e) => {
            out.push(finding("configuration", true, e.to_string()));
            return out;
        }
    };
    let rules = AccessRules::of(&config);
    out.push(finding("access rules", false, rules.describe()));
    for op in operations {
        let dds_type = op
            .ros_type
            .as_deref()
            .and_then(|t| crate::message::dds_type_name(t).ok())
            .unwrap_or_else(|| "*".to_owned());
        let key = data_key(domain, &op.name, &dds_type, "*");
        let subject = format!("{} {}", op.verb(), op.name);
        out.push(match rules.check(op.kind, &op.name, &key) {
            Ok(()) => finding(&subject, false, format!("allowed (on {key})")),
            Err(denied) => finding(&subject, true, denied.to_string()),
        });
    }
    out
}

/// Whether peers that trust `ca` accept the certificate `cert` now, and until when.
fn identity(cert: &std::path::Path, ca: &std::path::Path) -> Finding {
    let now = now();
    if let Err(reason) = check_identity(cert, ca, now) {
        return finding("identity", true, reason);
    }
    match CertificateFacts::read(cert) {
        Ok(facts) => {
            let days = (facts.not_after - now) / 86_400;
            let soon = days < EXPIRY_WARNING_DAYS;
            finding(
                "identity",
                soon,
                format!(
                    "{} (CN {}), signed by {} ({}), valid for {days} more day(s){}",
                    cert.display(),
                    facts.common_name,
                    facts.issuer,
                    PathBuf::from(ca).display(),
                    if soon {
                        ": issue a new one before it expires (`kairos security \
                         create-enclave KEYSTORE ENCLAVE --replace`)"
                    } else {
                        ""
                    }
                ),
            )
        }
        Err(e) => finding("identity", true, e.to_string()),
    }
}
