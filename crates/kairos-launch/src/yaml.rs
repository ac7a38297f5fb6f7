//! A YAML document as a tree whose every node knows its line, so that an error in a
//! launch file names the line to fix. Built on yaml-rust2's event parser (its `Yaml`
//! values carry no positions).

use std::fmt;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// One node of the document.
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

/// A document that is not YAML.
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

/// The first document of `text`; `None` when the text has none.
pub fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut builder = Builder::default();
    Parser::new_from_str(text)
        .load(&mut builder, false)
        .map_err(|e| SyntaxError {
            line: e.marker().line(),
            what: e.info().to_owned(),
        })?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    Ok(builder.root)
}

/// Open sequences and mappings, innermost last.
enum Open {
    Seq(Vec<Node>, usize),
    Map(Vec<(Node, Node)>, Option<Node>, usize),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    root: Option<Node>,
    error: Option<SyntaxError>,
}

impl Builder {
    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Open::Seq(items, _)) => items.push(node),
            Some(Open::Map(entries, key, _)) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let line = mark.line();
        match event {
            Event::Scalar(text, style, _, _) => self.push(Node {
                value: Value::Scalar {
                    text,
                    quoted: matches!(
                        style,
                        TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted
                    ),
                },
                line,
            }),
            Event::SequenceStart(..) => self.stack.push(Open::Seq(Vec::new(), line)),
            Event::MappingStart(..) => self.stack.push(Open::Map(Vec::new(), None, line)),
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match self.stack.pop() {
                    Some(Open::Seq(items, line)) => Node {
                        value: Value::Seq(items),
                        line,
                    },
                    Some(Open::Map(entries, _, line)) => Node {
                        value: Value::Map(entries),
                        line,
                    },
                    None => return,
                };
                self.push(node);
            }
            Event::Alias(_) => {
                self.error.get_or_insert(SyntaxError {
                    line,
                    what: "aliases (*name) are not supported in launch files".into(),
                });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_know_their_lines_and_quoting() {
        let doc = parse("launch:\n- arg:\n    name: x\n    default: '1'\n")
            .unwrap()
            .unwrap();
        let Value::Map(entries) = &doc.value else {
            panic!("{doc:?}")
        };
        let Value::Seq(items) = &entries[0].1.value else {
            panic!()
        };
        assert_eq!(items[0].line, 2);
        assert_eq!(items[0].to_flow(), "{arg: {name: x, default: '1'}}");
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let err = parse("launch:\n- node: {exec: a\n- x").unwrap_err();
        assert!(err.line >= 2, "{err}");
    }
}
