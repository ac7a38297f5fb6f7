//! A launch file (ROS 2's YAML or XML format) read into the processes to start.
//!
//! The file's format is its extension's (`.yaml`/`.yml`, `.xml`), or what its text
//! starts with; both frontends read into one entity tree (`tree`) and this reader
//! resolves it, so YAML and XML files mean the same. Entities: `arg`, `let`, `set_env`,
//! `node`, `lifecycle_node`, `node_container`, `load_composable_node`, `executable`,
//! `group` (scoped, with `push_ros_namespace` or a `namespace` key),
//! `push_ros_namespace`, `include`; each may have `if:` or `unless:`. Values take
//! substitutions (see the `substitute` module). Everything is read, resolved and checked
//! before the first process starts: a key kairos does not know, a missing executable, an
//! undefined argument or a parameter file with a wrong value is an error naming the file
//! and line, and nothing is started half-way.
//!
//! The node entities are read in `nodes`, the `executable` entity and what every process
//! entity takes (output, respawning, stop timeouts, terminals, prefix) in `process`; this
//! module holds the rest of the reader.

mod nodes;
mod process;

use crate::package::{PackageIndex, is_executable};
use crate::substitute::{Scope, substitute};
use crate::tree::{Node, Value};
use crate::{composition, python};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Where the output of a process goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The launcher's terminal, each line prefixed with the process's label.
    Screen,
    /// A file of its own in the log folder.
    Log,
    /// Both.
    Both,
}

/// One process to start.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// `talker-1`: the executable's name (an `executable`'s `name:` if given) and a
    /// number, as `ros2 launch` labels lines.
    pub label: String,
    /// The executable, found before anything starts.
    pub program: PathBuf,
    /// Its arguments (a node's with its `--ros-args` ...).
    pub args: Vec<String>,
    /// Environment variables set for it (after the launcher's own).
    pub env: Vec<(String, String)>,
    /// Whether `env` is its whole environment (a Python file's `ExecuteProcess(env=...)`,
    /// which replaces the environment in ROS 2) rather than added to the launcher's.
    pub env_only: bool,
    /// The folder it starts in (the launcher's when `None`).
    pub cwd: Option<PathBuf>,
    /// Where its output goes.
    pub output: Output,
    /// Start it again when it exits (unless the launch is stopping).
    pub respawn: bool,
    /// How long to wait before starting it again.
    pub respawn_delay: Duration,
    /// How many times it is started again at most (`None`: every time it exits).
    pub respawn_max_retries: Option<u32>,
    /// Its exit stops the whole launch (`on_exit: shutdown` or `required: true`).
    pub required: bool,
    /// Its own time from SIGINT to SIGTERM in a stop (`None`: the launch's
    /// `--sigterm-timeout`); the stop's bound is the longest of them.
    pub sigterm_timeout: Option<Duration>,
    /// Its own time from SIGTERM to SIGKILL (`None`: the launch's `--sigkill-timeout`).
    pub sigkill_timeout: Option<Duration>,
    /// Its standard output and error are terminals (pseudo-terminals the launcher reads),
    /// as ROS 2's `emulate_tty`: it line-buffers and colours as at a terminal.
    pub emulate_tty: bool,
    /// `file:line` of its entity, for messages.
    pub origin: String,
}

/// A launch file that cannot be started, with the file and line to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchError {
    /// The launch file at fault (an included one, if the error is there).
    pub file: PathBuf,
    /// The line of the entity at fault.
    pub line: usize,
    /// What is wrong and what to do.
    pub what: String,
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.what)
    }
}

impl std::error::Error for LaunchError {}

/// The keys every entity may have: it is skipped when `if` is false or `unless` true.
const CONDITIONS: [&str; 2] = ["if", "unless"];

/// How deep `include`s may nest (an include cycle ends here with an error).
const MAX_INCLUDE_DEPTH: usize = 32;

/// The longest time a launch file may give in seconds (a delay, a stop timeout): 100
/// years, as the command line's options; a longer one could not be added to a clock.
pub const MAX_SECONDS: f64 = 100.0 * 365.25 * 24.0 * 3600.0;

/// `value` seconds as a duration, or why not (not a number from 0 to [`MAX_SECONDS`]).
pub fn seconds(key: &str, value: f64) -> Result<Duration, String> {
    if !(0.0..=MAX_SECONDS).contains(&value) {
        return Err(format!(
            "{key} {value} is not seconds from 0 to {MAX_SECONDS} (100 years)"
        ));
    }
    Ok(Duration::from_secs_f64(value))
}

/// The formats a launch file may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// ROS 2's YAML frontend (`launch:` and a list of entities).
    Yaml,
    /// ROS 2's XML frontend (`<launch>` and its elements).
    Xml,
    /// A Python launch file (`generate_launch_description()`).
    Python,
}

impl Format {
    /// The format of `file` by its extension, else by what `text` starts with.
    pub fn of(file: &Path, text: &str) -> Format {
        match file.extension().and_then(|e| e.to_str()) {
            Some("xml") => Format::Xml,
            Some("py") => Format::Python,
            Some("yaml" | "yml") => Format::Yaml,
            _ if text.trim_start().starts_with('<') => Format::Xml,
            _ if text.contains("def generate_launch_description") => Format::Python,
            _ => Format::Yaml,
        }
    }
}

/// Reads `file` with the launch arguments `args` (`name:=value` from the command line),
/// finding packages in `AMENT_PREFIX_PATH`.
pub fn load(file: &Path, args: &[(String, String)]) -> Result<Vec<ProcessSpec>, LaunchError> {
    load_with(file, args, PackageIndex::from_env())
}

/// [`load`], finding packages in `packages`.
pub fn load_with(
    file: &Path,
    args: &[(String, String)],
    packages: PackageIndex,
) -> Result<Vec<ProcessSpec>, LaunchError> {
    let mut reader = Reader {
        processes: Vec::new(),
        counters: BTreeMap::new(),
    };
    // Absolute, so that $(dirname) and paths relative to the file work from anywhere.
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let scope = Context {
        scope: Scope {
            vars: BTreeMap::new(),
            file,
            packages: Arc::new(packages),
        },
        given: args.iter().cloned().collect(),
        namespace: String::new(),
        env: Vec::new(),
        depth: 0,
    };
    reader.file(scope)?;
    Ok(reader.processes)
}

/// What an entity sees: the variables, the namespace pushed by its groups, the
/// environment set for it.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) scope: Scope,
    /// Argument values given from outside (command line, or the including file).
    given: BTreeMap<String, String>,
    pub(crate) namespace: String,
    env: Vec<(String, String)>,
    depth: usize,
}

impl Context {
    pub(crate) fn error(&self, line: usize, what: impl Into<String>) -> LaunchError {
        LaunchError {
            file: self.scope.file.clone(),
            line,
            what: what.into(),
        }
    }

    /// The namespace an entity's `namespace` key puts it in, under its groups' (the
    /// groups' alone without the key).
    pub(crate) fn namespace_of(&self, f: &Fields<'_>) -> Result<String, LaunchError> {
        Ok(match f.text(self, "namespace")? {
            Some(ns) => join_namespace(&self.namespace, &ns),
            None => self.namespace.clone(),
        })
    }

    /// A path the file names: relative to the launch file's folder unless absolute.
    pub(crate) fn path(&self, node: &Node, key: &str) -> Result<PathBuf, LaunchError> {
        let path = PathBuf::from(self.text(node, key)?);
        Ok(if path.is_relative() {
            self.scope.dir().join(path)
        } else {
            path
        })
    }

    pub(crate) fn text(&self, node: &Node, key: &str) -> Result<String, LaunchError> {
        let raw = match &node.value {
            Value::Scalar { text, .. } => text.clone(),
            _ => node.to_flow(),
        };
        substitute(&raw, &self.scope).map_err(|why| self.error(node.line, format!("{key}: {why}")))
    }

    fn bool(&self, node: &Node, key: &str) -> Result<bool, LaunchError> {
        match self.text(node, key)?.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            other => Err(self.error(node.line, format!("{key}: '{other}' is not true or false"))),
        }
    }
}

/// The keys of one entity, each once, checked against the keys it may have.
pub(crate) struct Fields<'a> {
    entity: &'static str,
    line: usize,
    map: BTreeMap<String, &'a Node>,
}

impl<'a> Fields<'a> {
    /// No keys: what an entity the reader makes itself (a loader process) has.
    fn empty(entity: &'static str, line: usize) -> Self {
        Fields {
            entity,
            line,
            map: BTreeMap::new(),
        }
    }

    pub(crate) fn of(
        ctx: &Context,
        entity: &'static str,
        node: &'a Node,
        allowed: &[&str],
    ) -> Result<Self, LaunchError> {
        let Value::Map(entries) = &node.value else {
            return Err(ctx.error(
                node.line,
                format!("'{entity}' takes a mapping of keys, not {}", node.kind()),
            ));
        };
        let mut map = BTreeMap::new();
        for (key, value) in entries {
            let Some(name) = key.as_scalar() else {
                return Err(ctx.error(key.line, format!("a key of '{entity}' must be text")));
            };
            if !allowed.contains(&name) && !CONDITIONS.contains(&name) {
                return Err(ctx.error(
                    key.line,
                    format!(
                        "'{entity}' has no key '{name}' in kairos launch (known: {})",
                        allowed.join(", ")
                    ),
                ));
            }
            if map.insert(name.to_owned(), value).is_some() {
                return Err(ctx.error(key.line, format!("'{entity}' has '{name}' twice")));
            }
        }
        Ok(Fields {
            entity,
            line: node.line,
            map,
        })
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Node> {
        self.map.get(key).copied()
    }

    pub(crate) fn required(&self, ctx: &Context, key: &str) -> Result<&'a Node, LaunchError> {
        self.get(key)
            .ok_or_else(|| ctx.error(self.line, format!("'{}' needs a '{key}'", self.entity)))
    }

    pub(crate) fn text(&self, ctx: &Context, key: &str) -> Result<Option<String>, LaunchError> {
        self.get(key).map(|n| ctx.text(n, key)).transpose()
    }

    /// The items of a list-valued key (none when absent).
    pub(crate) fn list(&self, ctx: &Context, key: &str) -> Result<&'a [Node], LaunchError> {
        match self.get(key) {
            None => Ok(&[]),
            Some(Node {
                value: Value::Seq(items),
                ..
            }) => Ok(items),
            Some(other) => Err(ctx.error(
                other.line,
                format!(
                    "'{key}' of '{}' takes a list, not {}",
                    self.entity,
                    other.kind()
                ),
            )),
        }
    }
}

struct Reader {
    processes: Vec<ProcessSpec>,
    counters: BTreeMap<String, usize>,
}

impl Reader {
    fn file(&mut self, mut ctx: Context) -> Result<(), LaunchError> {
        let file = ctx.scope.file.clone();
        let text = std::fs::read_to_string(&file).map_err(|e| LaunchError {
            file: file.clone(),
            line: 0,
            what: format!("cannot read the launch file: {e}"),
        })?;
        let root = match Format::of(&file, &text) {
            Format::Yaml => crate::yaml::parse(&text)
                .map_err(|e| ctx.error(e.line, format!("not YAML: {}", e.what)))?
                .ok_or_else(|| {
                    ctx.error(1, "the file is empty; a launch file starts with 'launch:'")
                })?,
            Format::Xml => crate::xml::parse(&text)
                .map_err(|e| ctx.error(e.line, format!("not an XML launch file: {}", e.what)))?,
            Format::Python => {
                return Err(ctx.error(
                    1,
                    "a Python launch file is read by `kairos launch` itself, not included \
                     from a YAML or XML one; include its XML or YAML form, or launch it",
                ));
            }
        };
        let Value::Map(entries) = &root.value else {
            return Err(ctx.error(
                root.line,
                "a launch file is a mapping with one key, 'launch:'",
            ));
        };
        let mut entities = None;
        for (key, value) in entries {
            match key.as_scalar() {
                Some("launch") => entities = Some(value),
                _ => {
                    return Err(ctx.error(
                        key.line,
                        format!(
                            "unknown top-level key '{}': a launch file has only 'launch:'",
                            key.to_flow()
                        ),
                    ));
                }
            }
        }
        let entities = entities.ok_or_else(|| ctx.error(root.line, "no 'launch:' key"))?;
        self.entities(&mut ctx, entities)
    }

    fn entities(&mut self, ctx: &mut Context, list: &Node) -> Result<(), LaunchError> {
        let Value::Seq(items) = &list.value else {
            return Err(ctx.error(
                list.line,
                format!(
                    "expected a list of entities ('- node: ...'), not {}",
                    list.kind()
                ),
            ));
        };
        for item in items {
            let entry = match &item.value {
                Value::Map(entries) if entries.len() == 1 => &entries[0],
                _ => {
                    return Err(ctx.error(
                        item.line,
                        "each entity is one key ('- node:', '- arg:', ...) with its fields",
                    ));
                }
            };
            let (key, body) = entry;
            if !self.condition_holds(ctx, body)? {
                continue;
            }
            match key.as_scalar().unwrap_or("") {
                "arg" => self.arg(ctx, body)?,
                "let" => {
                    let f = Fields::of(ctx, "let", body, &["name", "value"])?;
                    let name = f
                        .text(ctx, "name")?
                        .ok_or_else(|| ctx.error(body.line, "'let' needs a 'name'"))?;
                    let value = ctx.text(f.required(ctx, "value")?, "value")?;
                    ctx.scope.vars.insert(name, value);
                }
                "set_env" | "set-env" => {
                    let f = Fields::of(ctx, "set_env", body, &["name", "value"])?;
                    let name = ctx.text(f.required(ctx, "name")?, "name")?;
                    let value = ctx.text(f.required(ctx, "value")?, "value")?;
                    ctx.env.push((name, value));
                }
                "push_ros_namespace" | "push-ros-namespace" => {
                    let f = Fields::of(ctx, "push_ros_namespace", body, &["namespace"])?;
                    let ns = ctx.text(f.required(ctx, "namespace")?, "namespace")?;
                    ctx.namespace = join_namespace(&ctx.namespace, &ns);
                }
                "group" => self.group(ctx, body)?,
                "include" => self.include(ctx, body)?,
                "node" => self.node(ctx, body)?,
                "executable" => self.executable(ctx, body)?,
                "lifecycle_node" | "lifecycle-node" => self.lifecycle_node(ctx, body)?,
                "node_container" | "node-container" => self.node_container(ctx, body)?,
                "load_composable_node" | "load-composable-node" => {
                    let f = Fields::of(
                        ctx,
                        "load_composable_node",
                        body,
                        &["target", "composable_node"],
                    )?;
                    let target = ctx.text(f.required(ctx, "target")?, "target")?;
                    let container = join_namespace(&ctx.namespace, &target);
                    self.load_composable_nodes(ctx, &f, body.line, &container)?;
                }
                other => {
                    return Err(ctx.error(
                        key.line,
                        format!(
                            "unknown entity '{other}' (kairos launch knows arg, let, set_env, \
                             node, lifecycle_node, executable, group, push_ros_namespace, \
                             include, node_container, load_composable_node)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether an entity's `if:` / `unless:` lets it run.
    fn condition_holds(&self, ctx: &Context, body: &Node) -> Result<bool, LaunchError> {
        let Value::Map(entries) = &body.value else {
            return Ok(true);
        };
        for (key, value) in entries {
            match key.as_scalar() {
                Some("if") if !ctx.bool(value, "if")? => return Ok(false),
                Some("unless") if ctx.bool(value, "unless")? => return Ok(false),
                _ => {}
            }
        }
        Ok(true)
    }

    fn arg(&mut self, ctx: &mut Context, body: &Node) -> Result<(), LaunchError> {
        let f = Fields::of(
            ctx,
            "arg",
            body,
            &["name", "default", "description", "choices"],
        )?;
        let name = ctx.text(f.required(ctx, "name")?, "name")?;
        let value = match ctx.given.get(&name) {
            Some(value) => value.clone(),
            None => match ctx.scope.vars.get(&name) {
                Some(value) => value.clone(),
                None => f.text(ctx, "default")?.ok_or_else(|| {
                    ctx.error(
                        body.line,
                        format!("launch argument '{name}' has no default: pass {name}:=VALUE"),
                    )
                })?,
            },
        };
        let choices = f.list(ctx, "choices")?;
        if !choices.is_empty() {
            let allowed: Vec<String> = choices
                .iter()
                .map(|c| ctx.text(c, "choices"))
                .collect::<Result<_, _>>()?;
            if !allowed.contains(&value) {
                return Err(ctx.error(
                    body.line,
                    format!(
                        "launch argument '{name}' is '{value}', not one of {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        ctx.scope.vars.insert(name, value);
        Ok(())
    }

    fn group(&mut self, ctx: &Context, body: &Node) -> Result<(), LaunchError> {
        let mut inner = ctx.clone();
        match &body.value {
            Value::Seq(_) => self.entities(&mut inner, body),
            Value::Map(_) => {
                let f = Fields::of(ctx, "group", body, &["namespace", "scoped", "children"])?;
                if let Some(ns) = f.text(ctx, "namespace")? {
                    inner.namespace = join_namespace(&inner.namespace, &ns);
                }
                if let Some(scoped) = f.get("scoped")
                    && !ctx.bool(scoped, "scoped")?
                {
                    return Err(ctx.error(
                        scoped.line,
                        "unscoped groups are not supported: a group's args and namespace stay in it",
                    ));
                }
                self.entities(&mut inner, f.required(ctx, "children")?)
            }
            Value::Scalar { .. } => Err(ctx.error(body.line, "'group' takes a list of entities")),
        }
    }

    fn include(&mut self, ctx: &Context, body: &Node) -> Result<(), LaunchError> {
        let f = Fields::of(ctx, "include", body, &["file", "arg"])?;
        let path = ctx.path(f.required(ctx, "file")?, "file")?;
        if ctx.depth >= MAX_INCLUDE_DEPTH {
            return Err(ctx.error(
                body.line,
                format!(
                    "includes nest deeper than {MAX_INCLUDE_DEPTH}: does a file include itself?"
                ),
            ));
        }
        if !path.is_file() {
            return Err(ctx.error(
                body.line,
                format!("included file {} does not exist", path.display()),
            ));
        }
        let mut given = BTreeMap::new();
        for item in f.list(ctx, "arg")? {
            let a = Fields::of(ctx, "arg", item, &["name", "value"])?;
            let name = ctx.text(a.required(ctx, "name")?, "name")?;
            let value = ctx.text(a.required(ctx, "value")?, "value")?;
            given.insert(name, value);
        }
        let inner = Context {
            scope: Scope {
                vars: ctx.scope.vars.clone(),
                file: path,
                packages: ctx.scope.packages.clone(),
            },
            given,
            namespace: ctx.namespace.clone(),
            env: ctx.env.clone(),
            depth: ctx.depth + 1,
        };
        self.file(inner)
    }
}

pub(crate) fn split_words(
    ctx: &Context,
    line: usize,
    text: &str,
) -> Result<Vec<String>, LaunchError> {
    shlex::split(text).ok_or_else(|| ctx.error(line, format!("'{text}' has an unclosed quote")))
}

/// A node's fully qualified name: `name` in `namespace` (the root when empty).
fn fully_qualified(namespace: &str, name: &str) -> String {
    join_namespace(&join_namespace("/", namespace), name)
}

/// `outer` with `inner` pushed: an absolute `inner` replaces it.
fn join_namespace(outer: &str, inner: &str) -> String {
    let absolute = inner.starts_with('/');
    let inner = inner.trim_matches('/');
    if inner.is_empty() {
        return outer.to_owned();
    }
    if outer.is_empty() || absolute {
        return format!("/{inner}");
    }
    format!("{}/{inner}", outer.trim_end_matches('/'))
}

/// Where kairos looks for an executable named in a launch file: a path (relative to the
/// launch file), or a name found next to the launch file, on `PATH`, next to this
/// `kairos` binary (cargo's target directory when run by cargo) or its `examples/`, or in
/// `target/{release,debug}` (and their `examples/`) under `CARGO_TARGET_DIR` or here.
pub fn find_executable(name: &str, launch_dir: &Path) -> Result<PathBuf, String> {
    if name.contains('/') {
        let path = Path::new(name);
        let path = if path.is_relative() {
            launch_dir.join(path)
        } else {
            path.to_path_buf()
        };
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(format!(
                "executable {} does not exist or is not executable",
                path.display()
            ))
        };
    }
    let mut dirs = vec![launch_dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    if let Some(own) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(own.join("examples"));
        dirs.push(own);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    for profile in ["release", "debug"] {
        dirs.push(target.join(profile));
        dirs.push(target.join(profile).join("examples"));
    }
    dirs.iter()
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path))
        .ok_or_else(|| {
            format!(
                "executable '{name}' not found next to the launch file, on PATH, or in cargo's \
                 target directory; build it (e.g. `cargo build --release --example {name}`) or \
                 give its path"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::join_namespace;

    #[test]
    fn namespaces_push_like_ros_launch() {
        assert_eq!(join_namespace("", "robot"), "/robot");
        assert_eq!(join_namespace("/robot", "arm"), "/robot/arm");
        assert_eq!(join_namespace("/robot", ""), "/robot");
        assert_eq!(join_namespace("/robot", "/top"), "/top");
    }
}
