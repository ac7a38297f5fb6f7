//! Rust types for ROS 2 interface packages (`.msg`, `.srv` and `.action` files), generated
//! from a build script.
//!
//! What this crate promises: for every message and service of the packages it is given, a
//! Rust type whose serde form is the CDR of the ROS type (fields in file order, the ROS
//! primitive widths, fixed arrays without a length, sequences and strings with one), and an
//! implementation of `Message` / `ServiceType` (named through `kairos_msgs`) whose type
//! description is the one rosidl builds, so the RIHS01 hash (computed by
//! `kairos_msgs::type_hash`, the one implementation of rosidl's algorithm in kairos) is the
//! one ROS 2 computes. An action
//! `pkg/action/A` is expanded as rosidl expands it: `AGoal`, `AResult`, `AFeedback`, the
//! services `ASendGoal` and `AGetResult` and the message `AFeedbackMessage` (goal ids and
//! stamps added), named together by `A`'s `ActionType`. A definition
//! that does not parse, or a type that names a package or message it was not given, is an
//! [`Error`] naming the file and line.
//!
//! Use it from `build.rs` (add `kairos-msgs` to `[dependencies]` and `kairos-msgs-gen` to
//! `[build-dependencies]`):
//!
//! ```no_run
//! // build.rs; my_msgs/ holds msg/*.msg, srv/*.srv and action/*.action
//! let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
//! kairos_msgs_gen::Generator::new()
//!     .package("my_msgs")
//!     .write(out.join("interfaces.rs"))
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//!
//! and `include!(concat!(env!("OUT_DIR"), "/interfaces.rs"));` in the crate, which then has
//! `my_msgs::msg::MyType`. Types of the packages kairos-msgs ships (`std_msgs/Header`, ...)
//! resolve to `kairos_msgs::std_msgs::msg::Header` and so on.

mod emit;
pub mod parse;

use parse::{BaseType, MessageSpec, ParseError};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The packages `kairos-msgs` ships, resolved to `::kairos_msgs::<package>` by default.
pub const SHIPPED_PACKAGES: &[&str] = &[
    "builtin_interfaces",
    "example_interfaces",
    "geometry_msgs",
    "nav_msgs",
    "rcl_interfaces",
    "rosgraph_msgs",
    "sensor_msgs",
    "service_msgs",
    "std_msgs",
    "std_srvs",
    "tf2_msgs",
    "unique_identifier_msgs",
    "action_msgs",
    "lifecycle_msgs",
    "test_msgs",
    "type_description_interfaces",
    "rosbag2_interfaces",
    "composition_interfaces",
];

/// Why generation failed.
#[derive(Debug)]
pub enum Error {
    /// A file or folder could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A definition does not parse.
    Parse(ParseError),
    /// A field names a type the generator was not given, or one it cannot emit.
    Type {
        file: PathBuf,
        line: usize,
        message: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Parse(e) => e.fmt(f),
            Self::Type {
                file,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", file.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Parse(e) => Some(e),
            Self::Type { .. } => None,
        }
    }
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Self::Parse(e)
    }
}

/// One `.msg` file, parsed.
#[derive(Debug, Clone)]
pub struct MessageFile {
    pub name: String,
    pub file: PathBuf,
    pub spec: MessageSpec,
    /// The file's text, as `Message::DEFINITION`.
    pub text: String,
}

/// One `.srv` file, parsed.
#[derive(Debug, Clone)]
pub struct ServiceFile {
    pub name: String,
    pub file: PathBuf,
    pub request: MessageSpec,
    pub response: MessageSpec,
    /// The file's text before its `---` line, as the request's `Message::DEFINITION`
    /// (what a Foxglove client decodes a request with).
    pub request_text: String,
    /// The text after it, as the response's.
    pub response_text: String,
}

/// The text of a `.srv` file before and after its `---` line (already parsed, so there is
/// one).
fn service_texts(text: &str) -> (String, String) {
    let mut parts = [String::new(), String::new()];
    let mut part = 0;
    for line in text.lines() {
        if part == 0 && line.trim() == "---" {
            part = 1;
            continue;
        }
        parts[part].push_str(line);
        parts[part].push('\n');
    }
    let [request, response] = parts;
    (request, response)
}

/// One `.action` file, parsed.
#[derive(Debug, Clone)]
pub struct ActionFile {
    pub name: String,
    pub file: PathBuf,
    pub goal: MessageSpec,
    pub result: MessageSpec,
    pub feedback: MessageSpec,
}

/// One interface package: its messages, services and actions, sorted by name.
#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub messages: Vec<MessageFile>,
    pub services: Vec<ServiceFile>,
    pub actions: Vec<ActionFile>,
}

impl Package {
    /// Reads `dir/msg/*.msg`, `dir/srv/*.srv` and `dir/action/*.action`; the package is
    /// named `name`.
    pub fn load(name: &str, dir: &Path) -> Result<Self, Error> {
        let mut package = Package {
            name: name.to_owned(),
            messages: Vec::new(),
            services: Vec::new(),
            actions: Vec::new(),
        };
        for path in files(&dir.join("msg"), "msg")? {
            let text = read(&path)?;
            package.messages.push(MessageFile {
                name: stem(&path),
                spec: parse::parse_message(&path, &text)?,
                file: path,
                text,
            });
        }
        for path in files(&dir.join("srv"), "srv")? {
            let text = read(&path)?;
            let (request, response) = parse::parse_service(&path, &text)?;
            let (request_text, response_text) = service_texts(&text);
            package.services.push(ServiceFile {
                name: stem(&path),
                request,
                response,
                file: path,
                request_text,
                response_text,
            });
        }
        for path in files(&dir.join("action"), "action")? {
            let text = read(&path)?;
            let (goal, result, feedback) = parse::parse_action(&path, &text)?;
            package.actions.push(ActionFile {
                name: stem(&path),
                goal,
                result,
                feedback,
                file: path,
            });
        }
        if package.messages.is_empty() && package.services.is_empty() && package.actions.is_empty()
        {
            return Err(Error::Io {
                path: dir.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no msg/*.msg, srv/*.srv or action/*.action in this package folder",
                ),
            });
        }
        Ok(package)
    }

    fn has_message(&self, name: &str) -> bool {
        self.messages.iter().any(|m| m.name == name)
    }
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The files of `dir` ending in `.ext`, sorted; none when `dir` does not exist.
fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|source| Error::Io {
                path: dir.to_owned(),
                source,
            })?
            .path();
        if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Generates the Rust code of a set of interface packages.
#[derive(Debug, Clone)]
pub struct Generator {
    packages: Vec<(String, PathBuf)>,
    externs: BTreeMap<String, String>,
    runtime: String,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl Generator {
    /// A generator whose code uses `::kairos_msgs`, and whose references to the packages
    /// kairos-msgs ships resolve to them.
    pub fn new() -> Self {
        Self {
            packages: Vec::new(),
            externs: SHIPPED_PACKAGES
                .iter()
                .map(|p| (p.to_string(), format!("::kairos_msgs::{p}")))
                .collect(),
            runtime: "::kairos_msgs".to_owned(),
        }
    }

    /// Adds the package in folder `dir`, named after the folder.
    pub fn package(self, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.package_named(&name, dir)
    }

    /// Adds the package in folder `dir`, named `name`.
    pub fn package_named(mut self, name: &str, dir: impl AsRef<Path>) -> Self {
        self.externs.remove(name);
        self.packages
            .push((name.to_owned(), dir.as_ref().to_owned()));
        self
    }

    /// Types of package `name` are at Rust path `path` (e.g. `::other_crate::my_msgs`).
    pub fn extern_package(mut self, name: &str, path: &str) -> Self {
        self.externs.insert(name.to_owned(), path.to_owned());
        self
    }

    /// The path of the crate holding `Message`, `ServiceType` and the CDR helpers
    /// (`::kairos_msgs` by default; `crate` inside kairos-msgs itself).
    pub fn runtime_crate(mut self, path: &str) -> Self {
        self.runtime = path.to_owned();
        self
    }

    /// Parses every package and returns the Rust code.
    pub fn generate(&self) -> Result<String, Error> {
        let packages = self
            .packages
            .iter()
            .map(|(name, dir)| Package::load(name, dir))
            .collect::<Result<Vec<_>, _>>()?;
        self.check_references(&packages)?;
        Ok(emit::emit(&packages, &self.externs, &self.runtime))
    }

    /// Writes the code to `out` and tells cargo to run the build script again when a
    /// definition changes.
    pub fn write(&self, out: impl AsRef<Path>) -> Result<(), Error> {
        for (_, dir) in &self.packages {
            println!("cargo:rerun-if-changed={}", dir.display());
            for sub in ["msg", "srv", "action"] {
                let sub = dir.join(sub);
                if sub.exists() {
                    println!("cargo:rerun-if-changed={}", sub.display());
                }
            }
        }
        let code = self.generate()?;
        for (_, dir) in &self.packages {
            for path in files(&dir.join("msg"), "msg")?
                .into_iter()
                .chain(files(&dir.join("srv"), "srv")?)
                .chain(files(&dir.join("action"), "action")?)
            {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        let out = out.as_ref();
        std::fs::write(out, code).map_err(|source| Error::Io {
            path: out.to_owned(),
            source,
        })
    }

    /// Every field names a message of a given package (or of an extern one), and no field
    /// has a type the emitter cannot write.
    fn check_references(&self, packages: &[Package]) -> Result<(), Error> {
        let local: BTreeMap<&str, &Package> =
            packages.iter().map(|p| (p.name.as_str(), p)).collect();
        for package in packages {
            let actions = package.actions.iter().flat_map(|a| {
                [
                    (&a.file, &a.goal),
                    (&a.file, &a.result),
                    (&a.file, &a.feedback),
                ]
            });
            let specs = package
                .messages
                .iter()
                .map(|m| (&m.file, &m.spec))
                .chain(
                    package
                        .services
                        .iter()
                        .flat_map(|s| [(&s.file, &s.request), (&s.file, &s.response)]),
                )
                .chain(actions);
            // A service's event message names its information and stamp.
            if let Some(service) = package.services.first() {
                for needed in ["service_msgs", "builtin_interfaces"] {
                    if !local.contains_key(needed) && !self.externs.contains_key(needed) {
                        return Err(Error::Type {
                            file: service.file.clone(),
                            line: 1,
                            message: format!(
                                "a service needs the `{needed}` package (its event message, \
                                 which introspection publishes); give its folder with \
                                 Generator::package or its Rust path with \
                                 Generator::extern_package"
                            ),
                        });
                    }
                }
            }
            // An action's services and feedback message name a goal id and a stamp.
            if let Some(action) = package.actions.first() {
                for needed in [
                    "unique_identifier_msgs",
                    "builtin_interfaces",
                    "service_msgs",
                ] {
                    if !local.contains_key(needed) && !self.externs.contains_key(needed) {
                        return Err(Error::Type {
                            file: action.file.clone(),
                            line: 1,
                            message: format!(
                                "an action needs the `{needed}` package (its goal ids and \
                                 stamps); give its folder with Generator::package or its \
                                 Rust path with Generator::extern_package"
                            ),
                        });
                    }
                }
            }
            for (file, spec) in specs {
                for field in &spec.fields {
                    let type_error = |message: String| Error::Type {
                        file: file.clone(),
                        line: field.line,
                        message,
                    };
                    match &field.ty.base {
                        BaseType::WString { .. } => {
                            return Err(type_error(format!(
                                "field `{}`: wstring fields are not supported yet; use string",
                                field.name
                            )));
                        }
                        BaseType::Named { package: p, name } => {
                            let p = p.as_deref().unwrap_or(&package.name);
                            match local.get(p) {
                                Some(found) if found.has_message(name) => {}
                                Some(_) => {
                                    return Err(type_error(format!(
                                        "field `{}`: package `{p}` has no message `{name}` \
                                         (expected one of its msg/*.msg files)",
                                        field.name
                                    )));
                                }
                                None if self.externs.contains_key(p) => {}
                                None => {
                                    return Err(type_error(format!(
                                        "field `{}`: unknown package `{p}` in `{p}/{name}`; \
                                         give its folder with Generator::package or its Rust \
                                         path with Generator::extern_package",
                                        field.name
                                    )));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("a temporary folder");
        for (path, text) in files {
            let path = dir.path().join("my_msgs").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn generate(dir: &tempfile::TempDir) -> Result<String, Error> {
        Generator::new()
            .package(dir.path().join("my_msgs"))
            .generate()
    }

    #[test]
    fn references_resolve_to_local_and_shipped_packages() {
        let dir = package(&[
            ("msg/Wheel.msg", "float64 speed\n"),
            (
                "msg/Base.msg",
                "std_msgs/Header header\nWheel[4] wheels\nmy_msgs/Wheel[] spare\n",
            ),
            ("srv/Stop.srv", "bool now\n---\nWheel last\n"),
        ]);
        let code = generate(&dir).unwrap();
        assert!(code.contains("pub header: ::kairos_msgs::std_msgs::msg::Header,"));
        assert!(code.contains("pub wheels: [super::super::my_msgs::msg::Wheel; 4],"));
        assert!(code.contains("pub spare: ::std::vec::Vec<super::super::my_msgs::msg::Wheel>,"));
        assert!(code.contains("const TYPE_NAME: &'static str = \"my_msgs/srv/Stop_Request\";"));
        assert!(code.contains("visitor.service::<srv::Stop>();"));
    }

    #[test]
    fn unknown_types_and_packages_name_the_file_and_line() {
        let dir = package(&[("msg/A.msg", "int32 x\nWheel w\n")]);
        let e = generate(&dir).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(&e, Error::Type { line: 2, file, .. } if file.ends_with("my_msgs/msg/A.msg")),
            "{text}"
        );
        assert!(
            text.contains("package `my_msgs` has no message `Wheel`"),
            "{text}"
        );

        let dir = package(&[("msg/A.msg", "other_msgs/Thing t\n")]);
        let text = generate(&dir).unwrap_err().to_string();
        assert!(text.contains("A.msg:1: "), "{text}");
        assert!(text.contains("unknown package `other_msgs`"), "{text}");
        let code = Generator::new()
            .package(dir.path().join("my_msgs"))
            .extern_package("other_msgs", "::other_crate::other_msgs")
            .generate()
            .unwrap();
        assert!(code.contains("pub t: ::other_crate::other_msgs::msg::Thing,"));

        let dir = package(&[("msg/A.msg", "wstring w\n")]);
        assert!(generate(&dir).unwrap_err().to_string().contains("wstring"));
    }

    #[test]
    fn syntax_errors_and_missing_folders_are_errors() {
        let dir = package(&[("msg/A.msg", "int32 x\nfloat46 y\n")]);
        match generate(&dir).unwrap_err() {
            Error::Parse(e) => {
                assert_eq!(e.line, 2);
                assert_eq!(e.found, "float46");
                assert!(e.file.ends_with("my_msgs/msg/A.msg"));
            }
            other => panic!("{other}"),
        }
        let empty = tempfile::tempdir().unwrap();
        let e = Generator::new()
            .package(empty.path())
            .generate()
            .unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
    }
}
