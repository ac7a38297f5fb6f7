//! A launch file as a tree of entities whose every node knows its line, whatever the
//! file's format: the YAML and XML frontends both read into it, and one reader
//! (`description`) turns it into processes, so the formats cannot drift apart.

use std::fmt;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar's text, and whether it was quoted (a quoted `'1'` stays a string).
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// A value and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub line: usize,
}

impl Node {
    /// What kind of node this is, as an error message names it.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    pub fn as_scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The node as YAML flow text, as `-p name:=value` takes it (a quoted scalar keeps
    /// its quotes, so it stays a string).
    pub fn to_flow(&self) -> String {
        match &self.value {
            Value::Scalar { text, quoted } => {
                if *quoted {
                    format!("'{}'", text.replace('\'', "''"))
                } else {
                    text.clone()
                }
            }
            Value::Seq(items) => {
                let items: Vec<String> = items.iter().map(Node::to_flow).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.to_flow(), v.to_flow()))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
        }
    }
}

/// A document that is not in the format it claims.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub line: usize,
    pub what: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}
