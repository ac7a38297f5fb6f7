//! Message definitions from installed packages, as rosbag2's recorder takes them
//! (`LocalMessageDefinitionSource`): the `.msg`, `.srv` and `.idl` files under
//! `share/<package>/` of the prefixes in `AMENT_PREFIX_PATH` (a ROS 2 install, a
//! workspace's `install/`), with every type they refer to appended.
//!
//! What it promises, so that a bag kairos records of a type installed on the machine
//! holds what rosbag2's recorder would write for it:
//! - **rosbag2's text.** The files as they are (comments included), dependencies in
//!   rosbag2's order (sorted by name, each once, depth first) behind its delimiters
//!   (80 `=`, then `MSG: `, `IDL: ` or `SRV: ` and the type); a message with no `.msg`
//!   file, or one that refers to such a type, is given in IDL (`ros2idl`), as rosbag2
//!   falls back; a service starts with its own `SRV: ` delimiter.
//! - **Never a panic, never a loop.** A name it cannot read, a package that is not
//!   installed or a missing file gives [`LocalDefinitionSource::unknown`] (encoding `unknown`,
//!   empty text, as rosbag2 records such a type); recursion stops at rosbag2's depth.
//! - **The index as ament's.** A package is installed in a prefix that has the marker
//!   `share/ament_index/resource_index/packages/<package>`; the first prefix listed wins.

use crate::MessageDefinition;
use kairos_ament::PackageIndex;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

/// rosbag2's `ROSBAG2_CPP_LOCAL_MESSAGE_DEFINITION_SOURCE_MAX_RECURSION_DEPTH`.
const MAX_DEPTH: u32 = 50;

const DELIMITER: &str =
    "================================================================================\n";

const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string",
];

/// The kind of definition file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Format {
    Msg,
    Idl,
    Srv,
}

impl Format {
    fn label(self) -> &'static str {
        match self {
            Format::Msg => "MSG: ",
            Format::Idl => "IDL: ",
            Format::Srv => "SRV: ",
        }
    }
}

/// Why a definition could not be read.
enum Missing {
    /// The name is not `pkg/Type`, `pkg/msg/Type` or `pkg/srv/Type`.
    BadName,
    /// Not installed, or no such file.
    NotFound,
    /// Deeper than rosbag2 goes.
    TooDeep,
}

/// Definitions read from the packages of a list of prefixes (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct LocalDefinitionSource {
    packages: PackageIndex,
    /// Each file read (or found missing): its text and the types it refers to.
    files: HashMap<(String, Format), Option<Spec>>,
}

/// A definition file's text and the types it refers to.
type Spec = (String, BTreeSet<String>);

impl LocalDefinitionSource {
    /// The prefixes of `AMENT_PREFIX_PATH`, in order.
    pub fn from_env() -> Self {
        Self::of(PackageIndex::from_env())
    }

    /// These prefixes, in order.
    pub fn with_prefixes(prefixes: Vec<PathBuf>) -> Self {
        Self::of(PackageIndex::with_prefixes(prefixes))
    }

    fn of(packages: PackageIndex) -> Self {
        Self {
            packages,
            files: HashMap::new(),
        }
    }

    /// A definition of `type_name` that was not found: encoding `unknown`, no text.
    pub fn unknown(type_name: &str) -> MessageDefinition {
        MessageDefinition {
            type_name: type_name.to_owned(),
            encoding: "unknown".into(),
            text: String::new(),
            type_hash: String::new(),
        }
    }

    /// The complete definition of `type_name` (`pkg/msg/Type`, `pkg/Type` or
    /// `pkg/srv/Type`), as rosbag2's recorder stores it.
    pub fn full_text(&mut self, type_name: &str) -> MessageDefinition {
        let mut seen = HashSet::new();
        let found = if type_name.contains("/srv/") {
            self.service(type_name, &mut seen)
        } else {
            match self.append(type_name, Format::Msg, &mut seen, MAX_DEPTH) {
                Ok(text) => Ok((text, "ros2msg")),
                Err(Missing::NotFound) => {
                    let mut seen = HashSet::new();
                    self.append(type_name, Format::Idl, &mut seen, MAX_DEPTH)
                        .map(|text| (delimiter(type_name, Format::Idl) + &text, "ros2idl"))
                }
                Err(e) => Err(e),
            }
        };
        match found {
            Ok((text, encoding)) => MessageDefinition {
                type_name: type_name.to_owned(),
                encoding: encoding.into(),
                text,
                type_hash: String::new(),
            },
            Err(_) => Self::unknown(type_name),
        }
    }

    /// A service: its own text, then each type it refers to as a message, or in IDL when
    /// it has no `.msg`.
    fn service(
        &mut self,
        type_name: &str,
        seen: &mut HashSet<(String, Format)>,
    ) -> Result<(String, &'static str), Missing> {
        seen.insert((type_name.to_owned(), Format::Srv));
        let (text, dependencies) = self.load(type_name, Format::Srv)?;
        let mut out = delimiter(type_name, Format::Srv) + &text;
        let mut encoding = "unknown";
        for dependency in dependencies {
            if !seen.insert((dependency.clone(), Format::Msg)) {
                continue;
            }
            out.push('\n');
            out += &delimiter(&dependency, Format::Msg);
            match self.append(&dependency, Format::Msg, seen, MAX_DEPTH) {
                Ok(text) => {
                    out += &text;
                    encoding = "ros2msg";
                }
                Err(Missing::NotFound) => {
                    if seen.insert((dependency.clone(), Format::Idl)) {
                        out.push('\n');
                        out += &delimiter(&dependency, Format::Idl);
                        out += &self.append(&dependency, Format::Idl, seen, MAX_DEPTH)?;
                        encoding = "ros2idl";
                    }
                }
                Err(e) => return Err(e),
            }
        }
        // A service that refers to no other type keeps rosbag2's encoding `unknown`.
        Ok((out, encoding))
    }

    /// The text of `type_name` in `format`, then each dependency not yet seen.
    fn append(
        &mut self,
        type_name: &str,
        format: Format,
        seen: &mut HashSet<(String, Format)>,
        depth: u32,
    ) -> Result<String, Missing> {
        if depth == 0 {
            return Err(Missing::TooDeep);
        }
        let (mut out, dependencies) = self.load(type_name, format)?;
        for dependency in dependencies {
            if seen.insert((dependency.clone(), format)) {
                out.push('\n');
                out += &delimiter(&dependency, format);
                out += &self.append(&dependency, format, seen, depth - 1)?;
            }
        }
        Ok(out)
    }

    /// A definition file's text and the types it refers to (cached, found or not).
    fn load(&mut self, type_name: &str, format: Format) -> Result<Spec, Missing> {
        let key = (type_name.to_owned(), format);
        if let Some(cached) = self.files.get(&key) {
            return cached.clone().ok_or(Missing::NotFound);
        }
        let (package, name) = split_name(type_name).ok_or(Missing::BadName)?;
        let folder = if format == Format::Srv { "srv" } else { "msg" };
        let extension = match format {
            Format::Msg => "msg",
            Format::Idl => "idl",
            Format::Srv => "srv",
        };
        let loaded = self.share(package).and_then(|share| {
            let text =
                std::fs::read_to_string(share.join(folder).join(format!("{name}.{extension}")))
                    .ok()?;
            let dependencies = dependencies(format, &text, package);
            Some((text, dependencies))
        });
        self.files.insert(key, loaded.clone());
        loaded.ok_or(Missing::NotFound)
    }

    /// The definition a recorder stores for `type_name` (`pkg/msg/Type`): the installed
    /// files' (rosbag2's text, comments included), else the one kairos ships; an error
    /// says that neither has it.
    #[cfg(feature = "zenoh")]
    pub fn recorded_definition(&mut self, type_name: &str) -> crate::Result<String> {
        let installed = self.full_text(type_name);
        if installed.encoding != "unknown" {
            return Ok(installed.text);
        }
        crate::shipped_definition(type_name)
    }

    /// `share/<package>` of the first prefix that has the package.
    fn share(&self, package: &str) -> Option<PathBuf> {
        self.packages.share(package).ok()
    }
}

fn delimiter(type_name: &str, format: Format) -> String {
    format!("{DELIMITER}{}{type_name}\n", format.label())
}

/// `pkg/Type`, `pkg/msg/Type` or `pkg/srv/Type` as (pkg, Type).
fn split_name(type_name: &str) -> Option<(&str, &str)> {
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let (package, rest) = type_name.split_once('/')?;
    let name = rest
        .strip_prefix("msg/")
        .or_else(|| rest.strip_prefix("srv/"))
        .unwrap_or(rest);
    (word(package) && word(name)).then_some((package, name))
}

/// The types a definition refers to, as rosbag2 finds them: in a `.msg` every field type
/// that is not a primitive (a bare name is of the same package); in an `.idl` every
/// `#include "pkg/msg/Type.idl"`; a `.srv` as a `.msg`, else as an `.idl`.
fn dependencies(format: Format, text: &str, package: &str) -> BTreeSet<String> {
    match format {
        Format::Msg => msg_dependencies(text, package),
        Format::Idl => idl_dependencies(text),
        Format::Srv => {
            let found = msg_dependencies(text, package);
            if found.is_empty() {
                idl_dependencies(text)
            } else {
                found
            }
        }
    }
}

fn msg_dependencies(text: &str, package: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            // rosbag2's regex: a type at the start of a line, an optional array suffix,
            // then whitespace.
            let line = line.trim_start();
            let end = line
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '/'))
                .unwrap_or(line.len());
            let (field_type, rest) = line.split_at(end);
            let rest = match rest.strip_prefix('[') {
                Some(array) => &array[array.find(']')? + 1..],
                None => rest,
            };
            (!field_type.is_empty() && rest.starts_with(char::is_whitespace)).then_some(field_type)
        })
        .filter(|field_type| !PRIMITIVES.contains(field_type))
        .map(|field_type| {
            if field_type.contains('/') {
                field_type.to_owned()
            } else {
                format!("{package}/{field_type}")
            }
        })
        .collect()
}

fn idl_dependencies(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("#include")?;
            let rest = rest.trim_start();
            let quoted = rest.strip_prefix('"').or_else(|| rest.strip_prefix('<'))?;
            let end = quoted.find(['"', '>'])?;
            quoted[..end].strip_suffix(".idl").map(str::to_owned)
        })
        .filter(|name| {
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefix with `packages`: (package, [(relative path, text)]).
    fn prefix(root: &std::path::Path, packages: &[(&str, &[(&str, &str)])]) -> PathBuf {
        let index = root.join("share/ament_index/resource_index/packages");
        std::fs::create_dir_all(&index).unwrap();
        for (package, files) in packages {
            std::fs::write(index.join(package), "").unwrap();
            for (path, text) in *files {
                let path = root.join("share").join(package).join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
        }
        root.to_owned()
    }

    fn delim(label: &str, name: &str) -> String {
        format!("{DELIMITER}{label}: {name}\n")
    }

    #[test]
    fn a_message_comes_with_its_dependencies_once_each_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = prefix(
            dir.path(),
            &[
                (
                    "demo_msgs",
                    &[
                        ("msg/Inner.msg", "# the inner one\nfloat32 c\n"),
                        (
                            "msg/Outer.msg",
                            "Inner b\nInner[4] c\nother_msgs/Aux a # note\nint32 X=1\n",
                        ),
                    ],
                ),
                (
                    "other_msgs",
                    &[("msg/Aux.msg", "demo_msgs/Inner i\nstring<=8 s\n")],
                ),
            ],
        );
        let mut source = LocalDefinitionSource::with_prefixes(vec![root]);
        let d = source.full_text("demo_msgs/msg/Outer");
        assert_eq!(d.encoding, "ros2msg");
        assert_eq!(
            d.text,
            format!(
                "Inner b\nInner[4] c\nother_msgs/Aux a # note\nint32 X=1\n\n{}# the inner one\nfloat32 c\n\n{}demo_msgs/Inner i\nstring<=8 s\n",
                delim("MSG", "demo_msgs/Inner"),
                delim("MSG", "other_msgs/Aux"),
            )
        );
        assert_eq!(
            source.full_text("demo_msgs/Outer").text,
            d.text,
            "pkg/Type too"
        );
    }

    #[test]
    fn without_a_msg_file_the_idl_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let basic = "module demo_msgs {\n  module msg {\n    struct Basic {\n      float x;\n    };\n  };\n};\n";
        let complex = "#include \"demo_msgs/msg/Basic.idl\"\n\nmodule demo_msgs { };\n";
        let root = prefix(
            dir.path(),
            &[(
                "demo_msgs",
                &[
                    ("msg/Basic.idl", basic),
                    ("msg/Complex.idl", complex),
                    ("srv/Ask.srv", "demo_msgs/Basic req\n---\nbool ok\n"),
                ],
            )],
        );
        let mut source = LocalDefinitionSource::with_prefixes(vec![root]);
        let d = source.full_text("demo_msgs/msg/Complex");
        assert_eq!(d.encoding, "ros2idl");
        assert_eq!(
            d.text,
            format!(
                "{}{complex}\n{}{basic}",
                delim("IDL", "demo_msgs/msg/Complex"),
                delim("IDL", "demo_msgs/msg/Basic")
            )
        );
        let s = source.full_text("demo_msgs/srv/Ask");
        assert_eq!(s.encoding, "ros2idl");
        assert_eq!(
            s.text,
            format!(
                "{}demo_msgs/Basic req\n---\nbool ok\n\n{}\n{}{basic}",
                delim("SRV", "demo_msgs/srv/Ask"),
                delim("MSG", "demo_msgs/Basic"),
                delim("IDL", "demo_msgs/Basic")
            )
        );
    }

    #[test]
    fn what_is_not_installed_is_unknown_and_loops_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = prefix(
            dir.path(),
            &[(
                "loop_msgs",
                &[("msg/A.msg", "B b\n"), ("msg/B.msg", "A a\n")],
            )],
        );
        let mut source = LocalDefinitionSource::with_prefixes(vec![root]);
        for name in [
            "some_pkg",
            "no_pkg/msg/X",
            "loop_msgs/msg/Missing",
            "a/b/c/d",
            "",
        ] {
            let d = source.full_text(name);
            assert_eq!(
                (d.encoding.as_str(), d.text.as_str()),
                ("unknown", ""),
                "{name}"
            );
            assert_eq!(d.type_name, name);
        }
        let d = source.full_text("loop_msgs/msg/A");
        assert_eq!(d.text.matches("MSG: ").count(), 2, "{}", d.text);
    }

    #[test]
    fn the_first_prefix_that_has_the_package_wins() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let overlay = prefix(a.path(), &[("p_msgs", &[("msg/T.msg", "int8 new\n")])]);
        let underlay = prefix(b.path(), &[("p_msgs", &[("msg/T.msg", "int8 old\n")])]);
        let mut source = LocalDefinitionSource::with_prefixes(vec![overlay, underlay]);
        assert_eq!(source.full_text("p_msgs/msg/T").text, "int8 new\n");
    }
}
