//! The YAML frontend: a YAML launch file read into the entity tree (`tree`), every node
//! with its line, so that an error names the line to fix. Built on yaml-rust2's event parser (its `Yaml`
//! values carry no positions).

pub use crate::tree::{Node, SyntaxError, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

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
