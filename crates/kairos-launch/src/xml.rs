//! The XML frontend: an XML launch file (ROS 2's `launch_xml` format) read into the same
//! entity tree as YAML, so that one reader resolves both.
//!
//! `<launch>` holds the entities; an element is an entity, its attributes are its keys
//! (as unquoted text, so `value="1"` is a number as ROS 2's XML frontend guesses it), and
//! its child elements are its list-valued keys: `<param>`, `<remap>`, `<env>` of a node,
//! `<arg>` of an include, `<choice value=...>` of an arg. A `<group>`'s children are
//! entities. Text between elements is an error (an XML launch file has none).

use crate::tree::{Node, SyntaxError, Value};

/// The launch file `text` as `{launch: [entities...]}`.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let doc = roxmltree::Document::parse(text).map_err(|e| SyntaxError {
        line: e.pos().row as usize,
        what: e.to_string(),
    })?;
    let root = doc.root_element();
    let line = line_of(&doc, root);
    if root.tag_name().name() != "launch" {
        return Err(SyntaxError {
            line,
            what: format!(
                "the root element is <{}>; an XML launch file's is <launch>",
                root.tag_name().name()
            ),
        });
    }
    Ok(Node {
        value: Value::Map(vec![(scalar("launch", line), entities(&doc, root)?)]),
        line,
    })
}

fn line_of(doc: &roxmltree::Document, node: roxmltree::Node) -> usize {
    doc.text_pos_at(node.range().start).row as usize
}

fn scalar(text: &str, line: usize) -> Node {
    Node {
        value: Value::Scalar {
            text: text.to_owned(),
            quoted: false,
        },
        line,
    }
}

/// The child elements of `parent`, each as a one-key mapping `{tag: body}`.
fn entities(doc: &roxmltree::Document, parent: roxmltree::Node) -> Result<Node, SyntaxError> {
    let mut items = Vec::new();
    for child in elements(doc, parent)? {
        let line = line_of(doc, child);
        items.push(Node {
            value: Value::Map(vec![(
                scalar(child.tag_name().name(), line),
                body(doc, child)?,
            )]),
            line,
        });
    }
    Ok(Node {
        value: Value::Seq(items),
        line: line_of(doc, parent),
    })
}

/// An element's keys: its attributes, then its child elements grouped by tag into lists
/// (or, for a group, its entities under `children`).
fn body(doc: &roxmltree::Document, element: roxmltree::Node) -> Result<Node, SyntaxError> {
    let line = line_of(doc, element);
    let mut entries: Vec<(Node, Node)> = element
        .attributes()
        .map(|a| (scalar(a.name(), line), scalar(a.value(), line)))
        .collect();
    if element.tag_name().name() == "group" {
        entries.push((scalar("children", line), entities(doc, element)?));
    } else {
        for child in elements(doc, element)? {
            let child_line = line_of(doc, child);
            let (key, item) = match child.tag_name().name() {
                "choice" => (
                    "choices",
                    scalar(child.attribute("value").unwrap_or_default(), child_line),
                ),
                tag => (tag, body(doc, child)?),
            };
            match entries.iter_mut().find(|(k, _)| k.as_scalar() == Some(key)) {
                Some((
                    _,
                    Node {
                        value: Value::Seq(list),
                        ..
                    },
                )) => list.push(item),
                Some((k, _)) => {
                    return Err(SyntaxError {
                        line: k.line,
                        what: format!(
                            "<{}> has '{key}' both as an attribute and as child elements",
                            element.tag_name().name()
                        ),
                    });
                }
                None => entries.push((
                    scalar(key, child_line),
                    Node {
                        value: Value::Seq(vec![item]),
                        line: child_line,
                    },
                )),
            }
        }
    }
    Ok(Node {
        value: Value::Map(entries),
        line,
    })
}

/// The child elements of `parent`; text other than white space is an error.
fn elements<'a, 'input>(
    doc: &roxmltree::Document,
    parent: roxmltree::Node<'a, 'input>,
) -> Result<Vec<roxmltree::Node<'a, 'input>>, SyntaxError> {
    let mut found = Vec::new();
    for child in parent.children() {
        if child.is_element() {
            found.push(child);
        } else if child.is_text() && !child.text().unwrap_or("").trim().is_empty() {
            return Err(SyntaxError {
                line: line_of(doc, child),
                what: format!(
                    "text '{}' inside <{}>: launch entities take attributes and elements",
                    child.text().unwrap_or("").trim(),
                    parent.tag_name().name()
                ),
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_become_the_entities_yaml_has() {
        let doc = parse(
            r#"<launch>
  <arg name="ns" default="robot"><choice value="robot"/><choice value="sim"/></arg>
  <group scoped="true">
    <push_ros_namespace namespace="$(var ns)"/>
    <node exec="talker" name="t">
      <param name="rate" value="5"/>
      <remap from="a" to="b"/>
    </node>
  </group>
</launch>"#,
        )
        .unwrap();
        assert_eq!(
            doc.to_flow(),
            "{launch: [{arg: {name: ns, default: robot, choices: [robot, sim]}}, \
             {group: {scoped: true, children: [{push_ros_namespace: {namespace: $(var ns)}}, \
             {node: {exec: talker, name: t, param: [{name: rate, value: 5}], \
             remap: [{from: a, to: b}]}}]}}]}"
        );
        let Value::Map(top) = &doc.value else {
            panic!()
        };
        let Value::Seq(items) = &top[0].1.value else {
            panic!()
        };
        assert_eq!((items[0].line, items[1].line), (2, 3));
    }

    #[test]
    fn what_is_not_a_launch_file_names_its_line() {
        assert_eq!(
            parse("<launch>\n<node exec='a'>\n</launch>")
                .unwrap_err()
                .line,
            3
        );
        let err = parse("<robot/>").unwrap_err();
        assert!(err.what.contains("<launch>"), "{err}");
        let err = parse("<launch>\n  hello\n</launch>").unwrap_err();
        assert!(err.what.contains("text 'hello'"), "{err}");
    }
}
