//! Reading ROS 2 parameter files (`--params-file`) as rcl reads them.
//!
//! What holds:
//! - A node's section is found by its name, written whole (`/robot/planner:`), nested
//!   key by key (`robot:` then `planner:`), or with wildcards (`/**`, `/*/planner`,
//!   `"*"`), down to a `ros__parameters:` map; nested parameter keys join with `.`.
//! - The file is read as a stream of YAML events, as rcl's parser reads it, so a node key
//!   may appear more than once (two `/**:` sections): every section counts, in the order
//!   written. A YAML loader that refuses duplicate keys would refuse files ROS 2 accepts.
//! - Errors name the file and the line, or the node and parameter they concern.

use super::ros_args::{ParameterOverride, RosArgsError, parameter_value};
use std::path::Path;
use yaml_rust2::Yaml;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A YAML document with its maps' entries in order, repeated keys kept.
#[derive(Debug)]
enum Tree {
    /// A scalar, or a sequence of scalars (a parameter value).
    Leaf(Yaml),
    Map(Vec<(String, Tree)>),
}

enum Frame {
    Map {
        entries: Vec<(String, Tree)>,
        key: Option<String>,
    },
    Seq(Vec<Yaml>),
}

#[derive(Default)]
struct Loader {
    stack: Vec<Frame>,
    docs: Vec<Tree>,
    error: Option<(Marker, String)>,
}

impl Loader {
    fn insert(&mut self, node: Tree, mark: Marker) {
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Frame::Seq(items)) => match node {
                Tree::Leaf(value) => items.push(value),
                Tree::Map(_) => {
                    self.error
                        .get_or_insert((mark, "a list of maps is not a parameter value".into()));
                }
            },
            Some(Frame::Map { entries, key }) => match key.take() {
                Some(key) => entries.push((key, node)),
                None => {
                    *key = Some(match node {
                        Tree::Leaf(Yaml::String(s)) => s,
                        Tree::Leaf(Yaml::Integer(i)) => i.to_string(),
                        Tree::Leaf(Yaml::Real(r)) => r,
                        Tree::Leaf(Yaml::Boolean(b)) => b.to_string(),
                        other => {
                            self.error.get_or_insert((
                                mark,
                                format!("a key must be a name, not {other:?}"),
                            ));
                            String::new()
                        }
                    })
                }
            },
        }
    }
}

impl MarkedEventReceiver for Loader {
    fn on_event(&mut self, event: Event, mark: Marker) {
        match event {
            Event::MappingStart(..) => self.stack.push(Frame::Map {
                entries: Vec::new(),
                key: None,
            }),
            Event::SequenceStart(..) => self.stack.push(Frame::Seq(Vec::new())),
            Event::MappingEnd => {
                if let Some(Frame::Map { entries, .. }) = self.stack.pop() {
                    self.insert(Tree::Map(entries), mark);
                }
            }
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items)) = self.stack.pop() {
                    self.insert(Tree::Leaf(Yaml::Array(items)), mark);
                }
            }
            Event::Scalar(text, style, _, _) => {
                // Quoted scalars are strings; plain ones take their YAML type (3, 2.5, true).
                let value = if style == TScalarStyle::Plain {
                    Yaml::from_str(&text)
                } else {
                    Yaml::String(text)
                };
                self.insert(Tree::Leaf(value), mark);
            }
            Event::Alias(_) => {
                self.error
                    .get_or_insert((mark, "YAML aliases are not supported here".into()));
            }
            _ => {}
        }
    }
}

/// The parameter overrides a ROS 2 parameter file gives, in file order:
/// ```yaml
/// /robot/planner:          # or robot: planner:, or /**, /*/planner, "*"
///   ros__parameters:
///     rate: 10.0
///     limits:
///       speed: 1.5         # the parameter limits.speed
/// ```
pub(crate) fn read(path: &Path) -> Result<Vec<ParameterOverride>, RosArgsError> {
    let fail = |why: String| RosArgsError::ParamsFile {
        path: path.to_owned(),
        why,
    };
    let at = |mark: Marker, why: &str| {
        fail(format!(
            "line {}, column {}: {why}",
            mark.line(),
            mark.col() + 1
        ))
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let mut loader = Loader::default();
    Parser::new_from_str(&text)
        .load(&mut loader, true)
        .map_err(|e| at(*e.marker(), e.info()))?;
    if let Some((mark, why)) = loader.error {
        return Err(at(mark, &why));
    }
    let mut overrides = Vec::new();
    for doc in &loader.docs {
        let Tree::Map(nodes) = doc else {
            return Err(fail(
                "the top level maps node names to their ros__parameters".into(),
            ));
        };
        for (node, section) in nodes {
            node_section(node, section, &mut overrides).map_err(fail)?;
        }
    }
    Ok(overrides)
}

/// Reads the section of `path` (a node name or the part of one written so far): its
/// `ros__parameters`, and the sections of the names nested in it.
fn node_section(
    path: &str,
    section: &Tree,
    overrides: &mut Vec<ParameterOverride>,
) -> Result<(), String> {
    let entries = match section {
        Tree::Map(entries) if !entries.is_empty() => entries,
        _ => return Err(format!("node '{path}' has no 'ros__parameters:' map")),
    };
    for (key, value) in entries {
        if key == "ros__parameters" {
            let pattern = format!("/{}", path.trim_matches('/'));
            flatten(value, "", &mut |name, yaml| {
                let value = parameter_value(yaml)
                    .map_err(|why| format!("parameter '{name}' of node '{path}': {why}"))?;
                overrides.push(ParameterOverride {
                    nodes: pattern.clone(),
                    name,
                    value,
                });
                Ok(())
            })?;
        } else {
            let nested = format!("{}/{}", path.trim_end_matches('/'), key.trim_matches('/'));
            node_section(&nested, value, overrides)?;
        }
    }
    Ok(())
}

/// Calls `leaf` with each parameter under `tree`, nested keys joined with `.`.
fn flatten(
    tree: &Tree,
    prefix: &str,
    leaf: &mut dyn FnMut(String, &Yaml) -> Result<(), String>,
) -> Result<(), String> {
    match tree {
        Tree::Map(entries) => {
            for (key, value) in entries {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(value, &name, leaf)?;
            }
            Ok(())
        }
        Tree::Leaf(yaml) => leaf(prefix.to_owned(), yaml),
    }
}
