//! Message definitions in the `ros2msg` encoding, as rosbag2 stores them as MCAP schemas.
//!
//! What this module promises: [`ros2msg_definition`] builds the text rosbag2_cpp's
//! `LocalMessageDefinitionSource::get_full_text` builds for a message type: the type's
//! `.msg` text, then for each type it refers to (sorted by name, depth first, each once)
//! a newline, a line of 80 `=`, a line `MSG: pkg/Type` (the name as the field declares it,
//! which in `.msg` files is `pkg/Type`, a bare `Type` being taken from the same package),
//! and that type's text. Readers such as the `mcap_ros2` decoder and rosbags' `AnyReader`
//! build their deserializers from this text.
//!
//! Differences from rosbag2: a type the lookup does not know is an error here
//! ([`Error::MissingDefinition`]) where rosbag2 falls back to IDL or to an empty
//! definition, and `wstring` is a primitive (rosbag2 forgets it). Service types are not
//! handled: give a service event topic's text in [`TopicInfo`](crate::TopicInfo) yourself.

use crate::error::{Error, Result};
use std::collections::{BTreeSet, HashSet};

/// The delimiter line between definitions: 80 `=`.
pub const DELIMITER: &str =
    "================================================================================";

/// How deep type references may nest (rosbag2's limit).
const MAX_DEPTH: usize = 50;

/// The primitive types of `.msg` files (no definition to look up).
const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string", "wstring",
];

/// A message type's definition as a bag stores it: an MCAP schema, or a row of a `.db3`
/// file's `message_definitions` table (rosbag2_storage's `MessageDefinition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDefinition {
    /// The type, `pkg/msg/Type`.
    pub type_name: String,
    /// `ros2msg`, `ros2idl`, or `unknown` when the recorder had no definition.
    pub encoding: String,
    /// The definition text, with the text of every type it refers to.
    pub text: String,
    /// The type's hash (`RIHS01_...`); empty when the bag does not store it (MCAP schemas
    /// carry none, as in rosbag2).
    pub type_hash: String,
}

/// The MCAP schema encoding of a definition text: `ros2idl` when it starts with an IDL
/// delimiter, `unknown` when empty (as rosbag2 writes a type it found no definition for),
/// `ros2msg` otherwise.
pub fn encoding_of(text: &str) -> &'static str {
    if text.is_empty() {
        "unknown"
    } else if text
        .strip_prefix(DELIMITER)
        .is_some_and(|rest| rest.starts_with("\nIDL: "))
    {
        "ros2idl"
    } else {
        "ros2msg"
    }
}

/// The complete `ros2msg` definition of `type_name` (`pkg/msg/Type`, or a service's
/// `pkg/srv/Type_Request` or `_Response`): its text with the text of every type it refers
/// to appended, as rosbag2 writes it.
///
/// `lookup` returns the text of a type by its full name (`pkg/msg/Type`,
/// `pkg/srv/Type_Request`), or `None`.
///
/// ```
/// let text = kairos_bag::ros2msg_definition("geometry_msgs/msg/Point32", |name| match name {
///     "geometry_msgs/msg/Point32" => Some("float32 x\nfloat32 y\nfloat32 z\n".to_owned()),
///     _ => None,
/// })
/// .unwrap();
/// assert_eq!(text, "float32 x\nfloat32 y\nfloat32 z\n");
/// ```
pub fn ros2msg_definition<F>(type_name: &str, lookup: F) -> Result<String>
where
    F: Fn(&str) -> Option<String>,
{
    let (package, _, _) = split_type_name(type_name)?;
    let root = lookup(&full_name(type_name)?).ok_or_else(|| Error::MissingDefinition {
        type_name: type_name.to_owned(),
        needed_by: type_name.to_owned(),
    })?;
    let mut seen = HashSet::new();
    let mut out = String::new();
    append(
        &mut out, root, package, type_name, &lookup, &mut seen, MAX_DEPTH,
    )?;
    Ok(out)
}

/// Appends `text` (the definition of `name`, in `package`) and, recursively, the types it
/// refers to that are not in `seen`.
fn append<F>(
    out: &mut String,
    text: String,
    package: &str,
    name: &str,
    lookup: &F,
    seen: &mut HashSet<String>,
    depth: usize,
) -> Result<()>
where
    F: Fn(&str) -> Option<String>,
{
    if depth == 0 {
        return Err(Error::BadTypeName(format!(
            "{name} (types nest more than {MAX_DEPTH} deep)"
        )));
    }
    out.push_str(&text);
    for dependency in dependencies(&text, package) {
        if !seen.insert(full_name(&dependency)?) {
            continue;
        }
        let dep_text =
            lookup(&full_name(&dependency)?).ok_or_else(|| Error::MissingDefinition {
                type_name: dependency.clone(),
                needed_by: name.to_owned(),
            })?;
        out.push('\n');
        out.push_str(DELIMITER);
        out.push_str("\nMSG: ");
        out.push_str(&dependency);
        out.push('\n');
        let (dep_package, _, _) = split_type_name(&dependency)?;
        append(
            out,
            dep_text,
            dep_package,
            &dependency,
            lookup,
            seen,
            depth - 1,
        )?;
    }
    Ok(())
}

/// The non-primitive field types of a `.msg` text, sorted, as written (`pkg/Type`), a bare
/// `Type` prefixed with `package` — what rosbag2's `MSG_FIELD_TYPE_REGEX` finds: on each
/// line, after leading blanks, a run of `[A-Za-z0-9_/]`, an optional `[...]`, then a blank.
fn dependencies(text: &str, package: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        let end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '/'))
            .unwrap_or(line.len());
        let (field_type, rest) = line.split_at(end);
        if field_type.is_empty() || PRIMITIVES.contains(&field_type) {
            continue;
        }
        let rest = match rest.strip_prefix('[') {
            Some(array) => match array.find(']') {
                Some(close) => &array[close + 1..],
                None => continue,
            },
            None => rest,
        };
        // The regex wants whitespace after the type; the line's end counts (`\s` matches
        // the newline), a `<` (bounded string) or `=` does not.
        if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
            continue;
        }
        if field_type.contains('/') {
            found.insert(field_type.to_owned());
        } else {
            found.insert(format!("{package}/{field_type}"));
        }
    }
    found
}

/// `pkg` and `Type` of `pkg/Type` or `pkg/msg/Type`.
fn split_type_name(name: &str) -> Result<(&str, &str, &str)> {
    let bad = || Error::BadTypeName(name.to_owned());
    let (package, rest) = name.split_once('/').ok_or_else(bad)?;
    let (kind, type_) = match rest.split_once('/') {
        Some((kind @ ("msg" | "srv"), type_)) => (kind, type_),
        Some(_) => return Err(bad()),
        None => ("msg", rest),
    };
    let valid = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid(package) && valid(type_) {
        Ok((package, kind, type_))
    } else {
        Err(bad())
    }
}

/// `pkg/msg/Type` for `pkg/Type` or `pkg/msg/Type`; `pkg/srv/Type_Request` as it is (a
/// service's request or response, as a Foxglove service schema's root).
fn full_name(name: &str) -> Result<String> {
    let (package, kind, type_) = split_type_name(name)?;
    Ok(format!("{package}/{kind}/{type_}"))
}

/// The complete `ros2msg` definition of a message type kairos ships (kairos-msgs), as a
/// recorder stores it (rosbag2 takes the installed `.msg` files); an error names the
/// type, or the dependency, kairos does not ship.
#[cfg(feature = "zenoh")]
pub fn shipped_definition(type_name: &str) -> Result<String> {
    ros2msg_definition(type_name, |name| {
        kairos_zenoh::interfaces::message_by_name(name)
            .map(|tool| tool.definition())
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        Some(
            match name {
                "geometry_msgs/msg/PoseStamped" => {
                    "# A Pose with reference coordinate frame and timestamp\n\
                     std_msgs/Header header\nPose pose\n"
                }
                "geometry_msgs/msg/Pose" => "Point position\nQuaternion orientation\n",
                "geometry_msgs/msg/Point" => "float64 x\nfloat64 y\nfloat64 z\n",
                "geometry_msgs/msg/Quaternion" => {
                    "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"
                }
                "std_msgs/msg/Header" => "builtin_interfaces/Time stamp\nstring frame_id\n",
                "builtin_interfaces/msg/Time" => "int32 sec\nuint32 nanosec\n",
                _ => return None,
            }
            .to_owned(),
        )
    }

    #[test]
    fn appends_dependencies_sorted_depth_first_once() {
        let text = ros2msg_definition("geometry_msgs/msg/PoseStamped", lookup).unwrap();
        let d = DELIMITER;
        let expected = format!(
            "# A Pose with reference coordinate frame and timestamp\n\
             std_msgs/Header header\nPose pose\n\
             \n{d}\nMSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n\
             \n{d}\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n\
             \n{d}\nMSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n\
             \n{d}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
             \n{d}\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
        );
        assert_eq!(text, expected);
        assert_eq!(encoding_of(&text), "ros2msg");
    }

    #[test]
    fn skips_primitives_constants_comments_and_bounded_strings() {
        let deps = dependencies(
            "# Foo bar\nint32 A=1\nstring<=5 s\nuint8[] data\nfloat64[3] v\n\
             Time[<=4] times\n  wstring w\nbuiltin_interfaces/Duration d\n---\n",
            "pkg",
        );
        let deps: Vec<_> = deps.into_iter().collect();
        assert_eq!(deps, ["builtin_interfaces/Duration", "pkg/Time"]);
    }

    #[test]
    fn missing_dependency_names_it() {
        let err = ros2msg_definition("geometry_msgs/msg/PoseStamped", |n| {
            (n != "builtin_interfaces/msg/Time")
                .then(|| lookup(n))
                .flatten()
        })
        .unwrap_err();
        assert!(
            matches!(&err, Error::MissingDefinition { type_name, needed_by }
                if type_name == "builtin_interfaces/Time" && needed_by == "std_msgs/Header"),
            "{err}"
        );
        assert!(matches!(
            ros2msg_definition("nopackage", lookup),
            Err(Error::BadTypeName(_))
        ));
    }

    #[test]
    fn a_services_request_is_a_root_its_dependencies_are_messages() {
        let text = ros2msg_definition("demo/srv/Locate_Request", |n| match n {
            "demo/srv/Locate_Request" => Some("string frame\nbuiltin_interfaces/Time at\n".into()),
            _ => lookup(n),
        })
        .unwrap();
        assert_eq!(
            text,
            format!(
                "string frame\nbuiltin_interfaces/Time at\n\n{DELIMITER}\nMSG: builtin_interfaces/Time\n{}",
                lookup("builtin_interfaces/msg/Time").unwrap()
            )
        );
        assert!(matches!(
            ros2msg_definition("demo/action/Locate_Goal", lookup),
            Err(Error::BadTypeName(_))
        ));
    }

    #[test]
    fn encodings() {
        assert_eq!(encoding_of(""), "unknown");
        assert_eq!(
            encoding_of(&format!("{DELIMITER}\nIDL: a/msg/B\n")),
            "ros2idl"
        );
        assert_eq!(encoding_of("int32 a\n"), "ros2msg");
    }
}
