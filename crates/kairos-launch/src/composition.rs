//! Composable nodes in XML and YAML launch files (`node_container` with its
//! `composable_node`s, `load_composable_node`), as ROS 2's launch_xml and launch_yaml
//! read them: rclcpp_components' containers are kairos's Python container, and each load
//! is a request for `python3 -m kairos.components.load` (a short process of the launch,
//! whose wait for the container is bounded), so these files mean what the same Python
//! launch file means.

use crate::description::{Context, Fields, LaunchError};
use crate::tree::{Node, Value};
use kairos::graph::ParameterValue;

/// The arguments of kairos's container for rclcpp_components' `exec`, or None when the
/// container is another package's program (run as it is).
pub(crate) fn kairos_container(pkg: Option<String>, exec: &str) -> Option<Vec<String>> {
    if pkg.as_deref() != Some("rclcpp_components") {
        return None;
    }
    let extra = match exec {
        "component_container" | "component_container_isolated" | "component_container_event" => {
            None
        }
        "component_container_mt" => Some("--multi-threaded"),
        _ => return None,
    };
    let mut words = vec!["-m".to_owned(), "kairos.components.container".to_owned()];
    words.extend(extra.map(str::to_owned));
    Some(words)
}

/// One `composable_node` as the loader's JSON request: package, plugin, name,
/// namespace (under the groups' namespace), remappings, parameters (typed as `-p` reads
/// them; files by path) and extra arguments.
pub(crate) fn load_request(ctx: &Context, item: &Node) -> Result<String, LaunchError> {
    let f = Fields::of(
        ctx,
        "composable_node",
        item,
        &[
            "pkg",
            "plugin",
            "name",
            "namespace",
            "param",
            "remap",
            "extra_arg",
        ],
    )?;
    let namespace = ctx.namespace_of(&f)?;
    let mut parameters = serde_json::Map::new();
    let mut files = Vec::new();
    for entry in f.list(ctx, "param")? {
        let p = Fields::of(ctx, "param", entry, &["name", "value", "from"])?;
        match (p.get("name"), p.get("value"), p.get("from")) {
            (Some(name), Some(value), None) => {
                let name = ctx.text(name, "name")?;
                parameters.insert(name, typed(ctx, value)?);
            }
            (None, None, Some(from)) => {
                files.push(ctx.path(from, "from")?.display().to_string());
            }
            _ => {
                return Err(ctx.error(
                    entry.line,
                    "a 'param' is either 'name' with 'value', or 'from' a parameter file",
                ));
            }
        }
    }
    let mut remaps = Vec::new();
    for entry in f.list(ctx, "remap")? {
        let r = Fields::of(ctx, "remap", entry, &["from", "to"])?;
        let from = ctx.text(r.required(ctx, "from")?, "from")?;
        let to = ctx.text(r.required(ctx, "to")?, "to")?;
        remaps.push(format!("{from}:={to}"));
    }
    // The reader the node will use, so that a bad rule or file fails before anything starts.
    let mut check = vec!["node".to_owned(), "--ros-args".to_owned()];
    for rule in &remaps {
        check.extend(["-r".to_owned(), rule.clone()]);
    }
    for file in &files {
        check.extend(["--params-file".to_owned(), file.clone()]);
    }
    kairos::graph::RosArgs::parse(&check).map_err(|e| {
        ctx.error(
            item.line,
            format!("the composable node's ROS arguments: {e}"),
        )
    })?;
    let mut extra = serde_json::Map::new();
    for entry in f.list(ctx, "extra_arg")? {
        let e = Fields::of(ctx, "extra_arg", entry, &["name", "value"])?;
        let name = ctx.text(e.required(ctx, "name")?, "name")?;
        extra.insert(name, typed(ctx, e.required(ctx, "value")?)?);
    }
    let request = serde_json::json!({
        "package_name": ctx.text(f.required(ctx, "pkg")?, "pkg")?,
        "plugin_name": ctx.text(f.required(ctx, "plugin")?, "plugin")?,
        "node_name": f.text(ctx, "name")?.unwrap_or_default(),
        "node_namespace": namespace,
        "remap_rules": remaps,
        "parameters": parameters,
        "params_files": files,
        "extra_arguments": extra,
    });
    Ok(request.to_string())
}

/// A parameter's value as `-p NAME:=VALUE` reads it (YAML: `7` a number, `'7'` text),
/// as JSON for the loader.
fn typed(ctx: &Context, value: &Node) -> Result<serde_json::Value, LaunchError> {
    let text = ctx.text(value, "value")?;
    if let Value::Scalar { quoted: true, .. } = value.value {
        return Ok(serde_json::Value::String(text));
    }
    let parsed = ParameterValue::from_yaml(&text)
        .map_err(|why| ctx.error(value.line, format!("value '{text}': {why}")))?;
    Ok(match parsed {
        ParameterValue::NotSet => serde_json::Value::Null,
        ParameterValue::Bool(v) => v.into(),
        ParameterValue::Integer(v) => v.into(),
        ParameterValue::Double(v) => v.into(),
        ParameterValue::String(v) => v.into(),
        ParameterValue::ByteArray(v) => v.into(),
        ParameterValue::BoolArray(v) => v.into(),
        ParameterValue::IntegerArray(v) => v.into(),
        ParameterValue::DoubleArray(v) => v.into(),
        ParameterValue::StringArray(v) => v.into(),
    })
}
