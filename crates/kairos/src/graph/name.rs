//! Node, namespace, topic and service names: validated and resolved the ROS 2 way.
//!
//! A name is a `/`-separated list of tokens made of letters, digits and `_`, no token
//! starting with a digit. Topic and service names resolve against the node: `/a` is
//! absolute, `a` is relative to the node's namespace, `~` and `~/a` are private to the node.

use std::fmt;

/// What kind of name was invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A node's name.
    Node,
    /// A node's namespace.
    Namespace,
    /// A topic's name.
    Topic,
    /// A service's name.
    Service,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::Node => "node",
            NameKind::Namespace => "namespace",
            NameKind::Topic => "topic",
            NameKind::Service => "service",
        })
    }
}

/// A name that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} name '{name}': {reason}")]
pub struct NameError {
    /// What the name was for.
    pub kind: NameKind,
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: String,
}

fn invalid(kind: NameKind, name: &str, reason: impl Into<String>) -> NameError {
    NameError {
        kind,
        name: name.to_owned(),
        reason: reason.into(),
    }
}

fn check_token(kind: NameKind, name: &str, token: &str) -> Result<(), NameError> {
    let Some(first) = token.chars().next() else {
        return Err(invalid(
            kind,
            name,
            "it has an empty token (`//`, or a trailing `/`)",
        ));
    };
    if first.is_ascii_digit() {
        return Err(invalid(
            kind,
            name,
            format!("token '{token}' starts with a digit"),
        ));
    }
    if let Some(bad) = token
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(invalid(
            kind,
            name,
            format!("'{bad}' is not allowed; use letters, digits, '_' and '/'"),
        ));
    }
    Ok(())
}

/// Validates a node's base name (one token, no `/`).
pub fn validate_node_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(invalid(NameKind::Node, name, "it is empty"));
    }
    if name.contains('/') {
        return Err(invalid(
            NameKind::Node,
            name,
            "a node name has no '/'; put the prefix in the namespace",
        ));
    }
    check_token(NameKind::Node, name, name)
}

/// Validates a namespace and returns it absolute (`""` and `"/"` are the root, `a/b`
/// becomes `/a/b`).
pub fn normalize_namespace(namespace: &str) -> Result<String, NameError> {
    let trimmed = namespace.strip_prefix('/').unwrap_or(namespace);
    if trimmed.is_empty() {
        return Ok("/".to_owned());
    }
    for token in trimmed.split('/') {
        check_token(NameKind::Namespace, namespace, token)?;
    }
    Ok(format!("/{trimmed}"))
}

/// Splits a node's fully qualified name (`/ns/name`; without the leading `/`, taken from
/// the root) into its namespace (`/` for the root) and name, checking both.
pub fn split_node_name(fully_qualified: &str) -> Result<(String, String), NameError> {
    let rest = fully_qualified.strip_prefix('/').unwrap_or(fully_qualified);
    let (namespace, name) = rest.rsplit_once('/').unwrap_or(("", rest));
    validate_node_name(name)?;
    if rest.contains('/') {
        for token in namespace.split('/') {
            check_token(NameKind::Namespace, fully_qualified, token)?;
        }
    }
    Ok((format!("/{namespace}"), name.to_owned()))
}

/// Replaces rcl's substitutions in `name`: `{node}` by the node's name, `{ns}` and
/// `{namespace}` by its namespace. Another `{...}` is an error that names it; a brace with
/// no partner is left for the token check to refuse.
fn substitute(
    kind: NameKind,
    name: &str,
    namespace: &str,
    node: &str,
) -> Result<String, NameError> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        match &rest[open + 1..close] {
            "node" => out.push_str(node),
            "ns" | "namespace" => out.push_str(namespace),
            other => {
                return Err(invalid(
                    kind,
                    name,
                    format!(
                        "unknown substitution '{{{other}}}'; use {{node}}, {{ns}} or {{namespace}}"
                    ),
                ));
            }
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    // `{ns}/x` in the root namespace.
    if out.starts_with("//") {
        out.remove(0);
    }
    Ok(out)
}

/// Resolves a topic or service name for the node `namespace` + `node` to its absolute form,
/// after rcl's substitutions (`{node}`, `{ns}`, `{namespace}`).
pub fn resolve(
    kind: NameKind,
    name: &str,
    namespace: &str,
    node: &str,
) -> Result<String, NameError> {
    if name.is_empty() {
        return Err(invalid(kind, name, "it is empty"));
    }
    let substituted = substitute(kind, name, namespace, node)?;
    let name = substituted.as_str();
    let join = |prefix: &str, rest: &str| {
        if prefix == "/" {
            format!("/{rest}")
        } else {
            format!("{prefix}/{rest}")
        }
    };
    let node_fq = join(namespace, node);
    let absolute = if name == "~" {
        node_fq
    } else if let Some(rest) = name.strip_prefix("~/") {
        join(&node_fq, rest)
    } else if name.starts_with('~') {
        return Err(invalid(
            kind,
            name,
            "'~' must be followed by '/' (private names are `~/name`)",
        ));
    } else if let Some(rest) = name.strip_prefix('/') {
        join("/", rest)
    } else {
        join(namespace, name)
    };
    for token in absolute[1..].split('/') {
        check_token(kind, name, token)?;
    }
    Ok(absolute)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_absolute_relative_and_private_names() {
        assert_eq!(
            resolve(NameKind::Topic, "/chatter", "/robot", "talker").unwrap(),
            "/chatter"
        );
        assert_eq!(
            resolve(NameKind::Topic, "chatter", "/robot", "talker").unwrap(),
            "/robot/chatter"
        );
        assert_eq!(
            resolve(NameKind::Topic, "chatter", "/", "talker").unwrap(),
            "/chatter"
        );
        assert_eq!(
            resolve(NameKind::Topic, "~/state", "/robot", "talker").unwrap(),
            "/robot/talker/state"
        );
        assert_eq!(resolve(NameKind::Service, "~", "/", "srv").unwrap(), "/srv");
    }

    #[test]
    fn substitutes_node_and_namespace_and_names_an_unknown_substitution() {
        let r = |name: &str, ns: &str| resolve(NameKind::Topic, name, ns, "talker");
        assert_eq!(r("{node}/state", "/robot").unwrap(), "/robot/talker/state");
        assert_eq!(r("{ns}/state", "/robot").unwrap(), "/robot/state");
        assert_eq!(
            r("{namespace}/x/{node}", "/robot").unwrap(),
            "/robot/x/talker"
        );
        assert_eq!(r("{ns}/state", "/").unwrap(), "/state");
        let err = r("chatter/{bad_sub}", "/").unwrap_err().to_string();
        assert!(err.contains("unknown substitution '{bad_sub}'"), "{err}");
        assert!(r("chatter/{node", "/").is_err());
    }

    #[test]
    fn rejects_bad_names_with_a_reason() {
        for bad in ["", "a//b", "a/", "1abc", "a b", "a-b", "~x", "/"] {
            let err = resolve(NameKind::Topic, bad, "/", "n").unwrap_err();
            assert_eq!(err.kind, NameKind::Topic, "{bad}");
            assert!(err.to_string().contains("invalid topic name"), "{err}");
        }
        assert!(validate_node_name("a/b").is_err());
        assert!(validate_node_name("9lives").is_err());
        assert!(normalize_namespace("/a//b").is_err());
        assert_eq!(normalize_namespace("a/b").unwrap(), "/a/b");
        assert_eq!(normalize_namespace("").unwrap(), "/");
    }
}
