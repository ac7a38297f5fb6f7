//! The values of `kairos topic pub` and `kairos service call`, read as YAML.

use anyhow::{Context as _, anyhow, bail};

/// The values of `ros2 topic pub`: YAML, such as the flow mapping `{data: hello, n: 3}`.
pub fn parse_values(text: &str) -> anyhow::Result<serde_json::Value> {
    let docs = yaml_rust2::YamlLoader::load_from_str(text)
        .map_err(|e| anyhow!("cannot read values '{text}': {e}"))?;
    let Some(doc) = docs.first() else {
        bail!("cannot read values '{text}': there are none");
    };
    json_value(doc).with_context(|| format!("cannot read values '{text}'"))
}

/// A YAML value as the JSON value the message codec takes.
fn json_value(yaml: &yaml_rust2::Yaml) -> anyhow::Result<serde_json::Value> {
    use yaml_rust2::Yaml;
    Ok(match yaml {
        Yaml::Boolean(b) => (*b).into(),
        Yaml::Integer(i) => (*i).into(),
        Yaml::Real(text) => match yaml.as_f64() {
            Some(f) => f.into(),
            None => bail!("'{text}' is not a number"),
        },
        Yaml::String(s) => s.clone().into(),
        Yaml::Array(items) => items
            .iter()
            .map(json_value)
            .collect::<anyhow::Result<Vec<_>>>()?
            .into(),
        Yaml::Hash(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                let key = match key {
                    Yaml::String(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    other => bail!("a field name must be text, not {other:?}"),
                };
                if matches!(value, Yaml::Null) {
                    bail!("field '{key}' has no value");
                }
                out.insert(key, json_value(value)?);
            }
            out.into()
        }
        Yaml::Null => bail!("a value is missing"),
        other => bail!("{other:?} is not a message value"),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_values;
    use serde_json::json;

    #[test]
    fn values_read_like_ros2_topic_pub() {
        assert_eq!(
            parse_values("{data: hello}").unwrap(),
            json!({"data": "hello"})
        );
        assert_eq!(
            parse_values("{a: 2, b: -3, c: {sec: 1, nanosec: 5}, s: 'x, y', f: 1.5, t: true}")
                .unwrap(),
            json!({"a": 2, "b": -3, "c": {"sec": 1, "nanosec": 5}, "s": "x, y", "f": 1.5, "t": true})
        );
        assert!(parse_values("{data: }").is_err());
        assert!(parse_values("{data: x").is_err());
    }
}
