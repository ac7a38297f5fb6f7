//! SROS2 access-control policies: which enclave's nodes may publish and subscribe which
//! topics, serve and call which services, drive and run which actions.
//!
//! The format is SROS2's (`policy version="0.2.0"`):
//!
//! ```xml
//! <policy version="0.2.0" xmlns:xi="http://www.w3.org/2001/XInclude">
//!   <enclaves>
//!     <enclave path="/talker_listener/talker">
//!       <profiles>
//!         <profile ns="/" node="talker">
//!           <topics publish="ALLOW"><topic>chatter</topic></topics>
//!           <services reply="ALLOW"><service>~/get_parameters</service></services>
//!           <actions call="ALLOW"><action>fibonacci</action></actions>
//!         </profile>
//!       </profiles>
//!     </enclave>
//!   </enclaves>
//! </policy>
//! ```
//!
//! What it promises:
//! - names are resolved as ROS resolves them in the profile's node: `chatter` in namespace
//!   `/robot` is `/robot/chatter`, `~/x` is `/robot/<node>/x`, `/x` stays;
//! - `DENY` wins over `ALLOW` for the same name and access, as in SROS2;
//! - `xi:include` inside a profile is followed (relative to the including file), as SROS2's
//!   shipped `common/node.xml` fragments are used;
//! - a policy that is not SROS2's is refused with the file, line and what to write
//!   ([`PolicyError`]); an unknown element is an error, never silently ignored.

use std::path::{Path, PathBuf};

/// SROS2's policy format version that kairos reads and writes.
pub const POLICY_VERSION: &str = "0.2.0";

/// A policy that cannot be read, with where and why.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file cannot be read.
    #[error("cannot read policy {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The file is not XML.
    #[error("{path} is not XML: {reason}")]
    Xml {
        /// The file.
        path: PathBuf,
        /// The parser's reason, with its line.
        reason: String,
    },
    /// The XML is not an SROS2 policy.
    #[error("{path}:{line}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line of the offending element.
        line: u32,
        /// What is wrong and what to write.
        reason: String,
    },
}

/// Allowed or denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permission {
    /// `ALLOW`.
    Allow,
    /// `DENY`.
    Deny,
}

/// What a grant lets a node do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Publish on a topic (`<topics publish=...>`).
    Publish,
    /// Subscribe to a topic (`<topics subscribe=...>`).
    Subscribe,
    /// Serve a service (`<services reply=...>`).
    Reply,
    /// Call a service (`<services request=...>`).
    Request,
    /// Send goals to an action (`<actions call=...>`).
    Call,
    /// Serve an action (`<actions execute=...>`).
    Execute,
}

impl Access {
    /// The element holding names of this access, and the attribute naming it.
    pub fn xml(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Access::Publish => ("topics", "topic", "publish"),
            Access::Subscribe => ("topics", "topic", "subscribe"),
            Access::Reply => ("services", "service", "reply"),
            Access::Request => ("services", "service", "request"),
            Access::Call => ("actions", "action", "call"),
            Access::Execute => ("actions", "action", "execute"),
        }
    }

    const ALL: [Access; 6] = [
        Access::Publish,
        Access::Subscribe,
        Access::Reply,
        Access::Request,
        Access::Call,
        Access::Execute,
    ];
}

/// One permission for one name: "`/robot/talker` may publish `/chatter`".
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Grant {
    /// What it lets (or forbids) doing.
    pub access: Access,
    /// Allowed or denied.
    pub permission: Permission,
    /// The fully qualified name (`/chatter`).
    pub name: String,
}

/// A node's permissions within an enclave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Its namespace (`/` for the root).
    pub ns: String,
    /// Its name.
    pub node: String,
    /// What it may and may not do, names resolved.
    pub grants: Vec<Grant>,
}

/// An enclave's nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnclavePolicy {
    /// The enclave's path, e.g. `/talker_listener/talker`.
    pub path: String,
    /// Its nodes' profiles.
    pub profiles: Vec<Profile>,
}

impl EnclavePolicy {
    /// Every name this enclave may use for `access`: allowed by one of its profiles and
    /// denied by none, sorted.
    pub fn allowed(&self, access: Access) -> Vec<String> {
        let grants = || self.profiles.iter().flat_map(|p| &p.grants);
        let denied = |name: &str| {
            grants()
                .any(|g| g.access == access && g.permission == Permission::Deny && g.name == name)
        };
        let mut names: Vec<String> = grants()
            .filter(|g| g.access == access && g.permission == Permission::Allow)
            .filter(|g| !denied(&g.name))
            .map(|g| g.name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Every name explicitly denied for `access`, sorted.
    pub fn denied(&self, access: Access) -> Vec<String> {
        let mut names: Vec<String> = self
            .profiles
            .iter()
            .flat_map(|p| &p.grants)
            .filter(|g| g.access == access && g.permission == Permission::Deny)
            .map(|g| g.name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// An SROS2 policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Its enclaves, in the file's order.
    pub enclaves: Vec<EnclavePolicy>,
}

/// Resolves `name` as ROS resolves it for node `node` in namespace `ns`.
pub fn resolve(ns: &str, node: &str, name: &str) -> String {
    let ns = ns.trim_end_matches('/');
    if let Some(private) = name.strip_prefix('~') {
        let rest = private.trim_start_matches('/');
        let base = format!("{ns}/{node}");
        return if rest.is_empty() {
            base
        } else {
            format!("{base}/{rest}")
        };
    }
    if name.starts_with('/') {
        name.to_owned()
    } else {
        format!("{ns}/{name}")
    }
}

impl Policy {
    /// Reads a policy file.
    pub fn read(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses a policy's text; `path` names it in errors and anchors its includes.
    pub fn parse(text: &str, path: &Path) -> Result<Self, PolicyError> {
        let doc = parse_xml(text, path)?;
        let root = doc.root_element();
        let invalid = |node: roxmltree::Node, reason: String| PolicyError::Invalid {
            path: path.to_owned(),
            line: doc.text_pos_at(node.range().start).row,
            reason,
        };
        if root.tag_name().name() != "policy" {
            return Err(invalid(
                root,
                format!(
                    "the root element is <{}>; an SROS2 policy starts with <policy version=\"{POLICY_VERSION}\">",
                    root.tag_name().name()
                ),
            ));
        }
        match root.attribute("version") {
            Some(POLICY_VERSION) => {}
            other => {
                return Err(invalid(
                    root,
                    format!(
                        "policy version {other:?} is not supported; write version=\"{POLICY_VERSION}\" (SROS2's)"
                    ),
                ));
            }
        }
        let mut policy = Policy::default();
        for enclaves in elements(root) {
            expect(&enclaves, "enclaves", &invalid)?;
            for enclave in elements(enclaves) {
                expect(&enclave, "enclave", &invalid)?;
                let enclave_path = enclave
                    .attribute("path")
                    .ok_or_else(|| invalid(enclave, "<enclave> needs path=\"/name\"".into()))?;
                crate::keystore::check_enclave_name(enclave_path)
                    .map_err(|e| invalid(enclave, e.to_string()))?;
                let mut profiles = Vec::new();
                for group in elements(enclave) {
                    expect(&group, "profiles", &invalid)?;
                    for profile in elements(group) {
                        expect(&profile, "profile", &invalid)?;
                        profiles.push(read_profile(profile, path, &invalid)?);
                    }
                }
                policy.enclaves.push(EnclavePolicy {
                    path: enclave_path.to_owned(),
                    profiles,
                });
            }
        }
        Ok(policy)
    }

    /// The enclave `path`, if the policy names it.
    pub fn enclave(&self, path: &str) -> Option<&EnclavePolicy> {
        self.enclaves.iter().find(|e| e.path == path)
    }

    /// The policy as SROS2 XML; names are written fully qualified.
    pub fn to_xml(&self) -> String {
        let mut out = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<policy version=\"{POLICY_VERSION}\">\n  <enclaves>\n"
        );
        for enclave in &self.enclaves {
            out += &format!(
                "    <enclave path=\"{}\">\n      <profiles>\n",
                escape(&enclave.path)
            );
            for profile in &enclave.profiles {
                out += &format!(
                    "        <profile ns=\"{}\" node=\"{}\">\n",
                    escape(&profile.ns),
                    escape(&profile.node)
                );
                for access in Access::ALL {
                    for permission in [Permission::Allow, Permission::Deny] {
                        let mut names: Vec<&str> = profile
                            .grants
                            .iter()
                            .filter(|g| g.access == access && g.permission == permission)
                            .map(|g| g.name.as_str())
                            .collect();
                        if names.is_empty() {
                            continue;
                        }
                        names.sort();
                        names.dedup();
                        let (group, item, attribute) = access.xml();
                        let value = match permission {
                            Permission::Allow => "ALLOW",
                            Permission::Deny => "DENY",
                        };
                        out += &format!("          <{group} {attribute}=\"{value}\">\n");
                        for name in names {
                            out += &format!("            <{item}>{}</{item}>\n", escape(name));
                        }
                        out += &format!("          </{group}>\n");
                    }
                }
                out += "        </profile>\n";
            }
            out += "      </profiles>\n    </enclave>\n";
        }
        out += "  </enclaves>\n</policy>\n";
        out
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn parse_xml<'a>(text: &'a str, path: &Path) -> Result<roxmltree::Document<'a>, PolicyError> {
    roxmltree::Document::parse(text).map_err(|e| PolicyError::Xml {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

fn elements<'a, 'i>(
    node: roxmltree::Node<'a, 'i>,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    node.children().filter(roxmltree::Node::is_element)
}

fn expect<'a, 'i>(
    node: &roxmltree::Node<'a, 'i>,
    tag: &str,
    invalid: &impl Fn(roxmltree::Node<'a, 'i>, String) -> PolicyError,
) -> Result<(), PolicyError> {
    if node.tag_name().name() == tag {
        Ok(())
    } else {
        Err(invalid(
            *node,
            format!("<{}> where <{tag}> belongs", node.tag_name().name()),
        ))
    }
}

const XINCLUDE: &str = "http://www.w3.org/2001/XInclude";

fn read_profile<'a, 'i>(
    profile: roxmltree::Node<'a, 'i>,
    path: &Path,
    invalid: &impl Fn(roxmltree::Node<'a, 'i>, String) -> PolicyError,
) -> Result<Profile, PolicyError> {
    let node = profile.attribute("node").ok_or_else(|| {
        invalid(
            profile,
            "<profile> needs node=\"name\" (and ns=\"/\")".into(),
        )
    })?;
    let ns = profile.attribute("ns").unwrap_or("/");
    if !ns.starts_with('/') {
        return Err(invalid(
            profile,
            format!("namespace '{ns}' is not absolute; write ns=\"/{ns}\""),
        ));
    }
    let mut grants = Vec::new();
    read_grants(profile, path, ns, node, &mut grants, 0)?;
    Ok(Profile {
        ns: ns.to_owned(),
        node: node.to_owned(),
        grants,
    })
}

/// Reads the grant groups under `parent` (a profile, or an included fragment's root).
fn read_grants(
    parent: roxmltree::Node,
    path: &Path,
    ns: &str,
    node: &str,
    grants: &mut Vec<Grant>,
    depth: usize,
) -> Result<(), PolicyError> {
    let doc = parent.document();
    let invalid = |at: roxmltree::Node, reason: String| PolicyError::Invalid {
        path: path.to_owned(),
        line: doc.text_pos_at(at.range().start).row,
        reason,
    };
    for group in elements(parent) {
        let tag = group.tag_name();
        if tag.name() == "include" && tag.namespace() == Some(XINCLUDE) {
            let href = group
                .attribute("href")
                .ok_or_else(|| invalid(group, "<xi:include> needs href=\"file.xml\"".into()))?;
            if depth >= 8 {
                return Err(invalid(
                    group,
                    format!("includes nest deeper than 8 at {href}"),
                ));
            }
            let included = path.parent().unwrap_or(Path::new(".")).join(href);
            let text = std::fs::read_to_string(&included).map_err(|source| PolicyError::Io {
                path: included.clone(),
                source,
            })?;
            let fragment = parse_xml(&text, &included)?;
            read_grants(
                fragment.root_element(),
                &included,
                ns,
                node,
                grants,
                depth + 1,
            )?;
            continue;
        }
        let accesses: Vec<Access> = Access::ALL
            .into_iter()
            .filter(|a| a.xml().0 == tag.name())
            .collect();
        if accesses.is_empty() {
            return Err(invalid(
                group,
                format!(
                    "<{}> is not a permission group; a profile holds <topics>, <services>, <actions> or <xi:include>",
                    tag.name()
                ),
            ));
        }
        let mut set = Vec::new();
        for access in &accesses {
            let (_, _, attribute) = access.xml();
            let Some(value) = group.attribute(attribute) else {
                continue;
            };
            let permission = match value {
                "ALLOW" => Permission::Allow,
                "DENY" => Permission::Deny,
                other => {
                    return Err(invalid(
                        group,
                        format!("{attribute}=\"{other}\": write ALLOW or DENY"),
                    ));
                }
            };
            set.push((*access, permission));
        }
        if set.is_empty() {
            let names: Vec<&str> = accesses.iter().map(|a| a.xml().2).collect();
            return Err(invalid(
                group,
                format!(
                    "<{}> grants nothing: give it {}=\"ALLOW\" or \"DENY\"",
                    tag.name(),
                    names.join("=... or ")
                ),
            ));
        }
        let item = accesses[0].xml().1;
        for entry in elements(group) {
            if entry.tag_name().name() != item {
                return Err(invalid(
                    entry,
                    format!(
                        "<{}> inside <{}>: write <{item}>name</{item}>",
                        entry.tag_name().name(),
                        tag.name()
                    ),
                ));
            }
            let name = entry.text().unwrap_or_default().trim();
            if name.is_empty() {
                return Err(invalid(entry, format!("<{item}> without a name")));
            }
            for (access, permission) in &set {
                grants.push(Grant {
                    access: *access,
                    permission: *permission,
                    name: resolve(ns, node, name),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TALKER_LISTENER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0" xmlns:xi="http://www.w3.org/2001/XInclude">
  <enclaves>
    <enclave path="/talker_listener/talker">
      <profiles>
        <profile ns="/robot" node="talker">
          <topics publish="ALLOW" subscribe="DENY">
            <topic>chatter</topic>
          </topics>
          <topics publish="ALLOW"><topic>/rosout</topic></topics>
          <topics publish="DENY"><topic>/rosout</topic></topics>
          <services reply="ALLOW"><service>~/get_parameters</service></services>
          <actions call="ALLOW"><action>fibonacci</action></actions>
        </profile>
      </profiles>
    </enclave>
    <enclave path="/talker_listener/listener">
      <profiles><profile ns="/" node="listener">
        <topics subscribe="ALLOW"><topic>/robot/chatter</topic></topics>
      </profile></profiles>
    </enclave>
  </enclaves>
</policy>"#;

    #[test]
    fn names_resolve_as_ros_resolves_them_and_deny_wins() {
        let policy = Policy::parse(TALKER_LISTENER, Path::new("policy.xml")).unwrap();
        let talker = policy.enclave("/talker_listener/talker").unwrap();
        assert_eq!(talker.allowed(Access::Publish), ["/robot/chatter"]);
        assert_eq!(talker.denied(Access::Publish), ["/rosout"]);
        assert_eq!(talker.denied(Access::Subscribe), ["/robot/chatter"]);
        assert_eq!(
            talker.allowed(Access::Reply),
            ["/robot/talker/get_parameters"]
        );
        assert_eq!(talker.allowed(Access::Call), ["/robot/fibonacci"]);
        let listener = policy.enclave("/talker_listener/listener").unwrap();
        assert_eq!(listener.allowed(Access::Subscribe), ["/robot/chatter"]);
        assert!(listener.allowed(Access::Publish).is_empty());
    }

    #[test]
    fn written_policies_read_back_the_same() {
        let policy = Policy::parse(TALKER_LISTENER, Path::new("policy.xml")).unwrap();
        let again = Policy::parse(&policy.to_xml(), Path::new("again.xml")).unwrap();
        for (a, b) in policy.enclaves.iter().zip(&again.enclaves) {
            for access in Access::ALL {
                assert_eq!(a.allowed(access), b.allowed(access));
                assert_eq!(a.denied(access), b.denied(access));
            }
        }
    }

    #[test]
    fn includes_are_followed_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("common")).unwrap();
        std::fs::write(
            dir.path().join("common/node.xml"),
            r#"<profile><topics publish="ALLOW"><topic>/rosout</topic></topics>
               <services reply="ALLOW"><service>~/list_parameters</service></services></profile>"#,
        )
        .unwrap();
        let file = dir.path().join("policy.xml");
        std::fs::write(
            &file,
            r#"<policy version="0.2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><enclaves>
                 <enclave path="/a"><profiles><profile ns="/" node="n">
                   <xi:include href="common/node.xml" xpointer="xpointer(/profile/*)"/>
                 </profile></profiles></enclave></enclaves></policy>"#,
        )
        .unwrap();
        let policy = Policy::read(&file).unwrap();
        let a = policy.enclave("/a").unwrap();
        assert_eq!(a.allowed(Access::Publish), ["/rosout"]);
        assert_eq!(a.allowed(Access::Reply), ["/n/list_parameters"]);
    }

    #[test]
    fn what_is_not_a_policy_is_refused_with_its_line() {
        let cases = [
            ("<policy version=\"0.1.0\"/>", "version"),
            ("<permissions/>", "<policy version="),
            (
                "<policy version=\"0.2.0\"><enclaves><enclave path=\"/a\"><profiles>\n<profile node=\"n\"><topics><topic>x</topic></topics></profile></profiles></enclave></enclaves></policy>",
                "grants nothing",
            ),
            (
                "<policy version=\"0.2.0\"><enclaves><enclave path=\"/a\"><profiles>\n<profile node=\"n\"><topics publish=\"YES\"/></profile></profiles></enclave></enclaves></policy>",
                "ALLOW or DENY",
            ),
            (
                "<policy version=\"0.2.0\"><enclaves><enclave path=\"a\"/></enclaves></policy>",
                "not an enclave path",
            ),
            (
                "<policy version=\"0.2.0\"><enclaves><enclave path=\"/a\"><profiles>\n<profile node=\"n\"><params/></profile></profiles></enclave></enclaves></policy>",
                "not a permission group",
            ),
            ("<policy", "not XML"),
        ];
        for (text, expected) in cases {
            let err = Policy::parse(text, Path::new("p.xml")).unwrap_err();
            assert!(err.to_string().contains(expected), "{text}: {err}");
        }
        let err = Policy::parse(cases[3].0, Path::new("p.xml")).unwrap_err();
        assert!(err.to_string().starts_with("p.xml:2:"), "{err}");
    }
}
