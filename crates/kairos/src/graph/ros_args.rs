//! ROS arguments: the `--ros-args` part of a program's command line, as rcl reads it.
//!
//! What this module promises:
//! - The syntax is ROS 2's own. A ROS section starts at `--ros-args` and ends at `--` or at
//!   the end; there may be several. Inside one: `-r`/`--remap [NODE:]FROM:=TO` (topics,
//!   services, `__node`, `__ns`), `-p`/`--param [NODE:]NAME:=VALUE` (the value read as
//!   YAML: `true`, `3`, `2.5`, `text`, `[1, 2]`), `--params-file FILE` (ROS 2's parameter
//!   YAML: node-name sections and `/**` wildcards), `--log-level [LOGGER:=]LEVEL`,
//!   `-e`/`--enclave` (the SROS2 enclave, see [`RosArgs::enclave`]) and rcl's
//!   logging switches (accepted and kept, see [`RosArgs::logging_flags`]).
//! - Bad input is a typed [`RosArgsError`] that names the argument and says what to write
//!   instead: an unknown flag, a flag without its value, a rule without `:=`, a parameter
//!   file that does not parse (file, line and why), a value of no parameter type.
//! - Everything outside the ROS sections is handed back, in order, for the program.
//! - Applied by the context ([`Context::with_ros_args`](super::Context::with_ros_args);
//!   the process-wide context reads `std::env::args`, as rcl does): node names and
//!   namespaces, topic and service names, parameter overrides. Later arguments win over
//!   earlier ones; a rule for one node wins over a rule for every node.

use super::name::{NameKind, resolve};
use super::parameters::ParameterValue;
use std::collections::BTreeMap;
use std::path::PathBuf;
use yaml_rust2::{Yaml, YamlLoader};

/// Why the ROS arguments cannot be used.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum RosArgsError {
    /// A flag ROS 2 does not define.
    #[error(
        "unknown ROS argument '{flag}': after --ros-args use -r/--remap, -p/--param, \
         --params-file, --log-level, -e/--enclave or rcl's logging switches; end the ROS \
         arguments with '--' before the program's own"
    )]
    UnknownFlag {
        /// The flag as given.
        flag: String,
    },
    /// A flag that needs a value came last.
    #[error("ROS argument '{flag}' needs a value, e.g. {example}")]
    MissingValue {
        /// The flag as given.
        flag: String,
        /// What a value looks like.
        example: &'static str,
    },
    /// A remap or parameter rule that cannot be read.
    #[error("ROS argument '{flag} {rule}': {why}")]
    BadRule {
        /// The flag.
        flag: String,
        /// The rule as given.
        rule: String,
        /// What is wrong and how to write it.
        why: String,
    },
    /// A parameter file that cannot be read or used.
    #[error("parameter file {}: {why}", path.display())]
    ParamsFile {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line or the parameter it concerns.
        why: String,
    },
}

/// A name remapping rule: `[node:]from:=to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remap {
    /// Only for the node of this name (`None`: every node).
    pub node: Option<String>,
    /// The name remapped (as written; resolved against each node).
    pub from: String,
    /// What it becomes.
    pub to: String,
}

/// A parameter value given on the command line or in a parameter file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterOverride {
    /// The nodes it applies to: a fully qualified name pattern (`/robot/planner`, `/**`,
    /// `/*/planner`); `/**` for a `-p` without a node.
    pub nodes: String,
    /// The parameter's name (nested YAML keys joined with `.`).
    pub name: String,
    /// Its value.
    pub value: ParameterValue,
}

/// A `--log-level` setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLevel {
    /// The logger (`None`: the default level of every logger).
    pub logger: Option<String>,
    /// `debug`, `info`, `warn`, `error` or `fatal`.
    pub level: String,
}

/// The ROS arguments of a program (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RosArgs {
    remaps: Vec<Remap>,
    overrides: Vec<ParameterOverride>,
    params_files: Vec<PathBuf>,
    log_levels: Vec<LogLevel>,
    enclave: Option<String>,
    logging_flags: Vec<String>,
}

/// rcl's logging switches, which take no value.
const LOGGING_FLAGS: [&str; 6] = [
    "--enable-rosout-logs",
    "--disable-rosout-logs",
    "--enable-stdout-logs",
    "--disable-stdout-logs",
    "--enable-external-lib-logs",
    "--disable-external-lib-logs",
];

impl RosArgs {
    /// Reads the ROS sections of `args` (a whole command line, program name included, as
    /// `std::env::args` gives it) and returns them with the other arguments, in order.
    /// Parameter files are read here, so an error in one is reported before anything runs.
    ///
    /// ```
    /// use kairos::graph::RosArgs;
    ///
    /// let (ros, rest) = RosArgs::parse([
    ///     "talker", "--rate", "10", "--ros-args", "-r", "chatter:=/news",
    ///     "-r", "__ns:=/robot", "-p", "rate:=10.5", "--", "extra",
    /// ])?;
    /// assert_eq!(rest, ["talker", "--rate", "10", "extra"]);
    /// assert_eq!(ros.namespace_for("talker"), Some("/robot"));
    /// # Ok::<(), kairos::graph::RosArgsError>(())
    /// ```
    pub fn parse<I, S>(args: I) -> Result<(RosArgs, Vec<String>), RosArgsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut ros = RosArgs::default();
        let mut rest = Vec::new();
        let mut args = args.into_iter().map(|a| a.as_ref().to_owned());
        let mut in_ros = false;
        while let Some(arg) = args.next() {
            if !in_ros {
                if arg == "--ros-args" {
                    in_ros = true;
                } else {
                    rest.push(arg);
                }
                continue;
            }
            let mut value = |example: &'static str| {
                args.next().ok_or_else(|| RosArgsError::MissingValue {
                    flag: arg.clone(),
                    example,
                })
            };
            match arg.as_str() {
                "--" => in_ros = false,
                "--ros-args" => {}
                "-r" | "--remap" => {
                    let rule = value("-r chatter:=/news")?;
                    ros.remaps.push(parse_remap(&arg, &rule)?);
                }
                "-p" | "--param" => {
                    let rule = value("-p rate:=10.0")?;
                    ros.overrides.push(parse_param(&arg, &rule)?);
                }
                "--params-file" => {
                    let path = PathBuf::from(value("--params-file params.yaml")?);
                    ros.overrides.extend(super::params_file::read(&path)?);
                    ros.params_files.push(path);
                }
                "--log-level" => {
                    let rule = value("--log-level debug or --log-level talker:=debug")?;
                    ros.log_levels.push(parse_log_level(&arg, &rule)?);
                }
                "-e" | "--enclave" => ros.enclave = Some(value("--enclave /robot")?),
                "--log-config-file" => {
                    let file = value("--log-config-file logging.config")?;
                    ros.logging_flags.push(format!("{arg} {file}"));
                }
                flag if LOGGING_FLAGS.contains(&flag) => ros.logging_flags.push(arg),
                _ => return Err(RosArgsError::UnknownFlag { flag: arg }),
            }
        }
        Ok((ros, rest))
    }

    /// These arguments with `later`'s after them: where both say something of the same
    /// name (a remap, a parameter, `__ns`), `later` wins, since the last rule wins. A
    /// node's own arguments come after its context's this way, as rcl orders them.
    pub fn followed_by(mut self, later: &RosArgs) -> RosArgs {
        self.remaps.extend(later.remaps.iter().cloned());
        self.overrides.extend(later.overrides.iter().cloned());
        self.params_files.extend(later.params_files.iter().cloned());
        self.log_levels.extend(later.log_levels.iter().cloned());
        self.logging_flags
            .extend(later.logging_flags.iter().cloned());
        if later.enclave.is_some() {
            self.enclave.clone_from(&later.enclave);
        }
        self
    }

    /// [`parse`](Self::parse) of this process's command line. An argument that is not
    /// UTF-8 is read lossily (never a panic, as `std::env::args` would).
    pub fn from_env() -> Result<(RosArgs, Vec<String>), RosArgsError> {
        Self::parse(std::env::args_os().map(|a| a.to_string_lossy().into_owned()))
    }

    /// The remapping rules, in order.
    pub fn remaps(&self) -> &[Remap] {
        &self.remaps
    }

    /// The parameter values, in the order they apply (files and `-p` as given).
    pub fn parameter_overrides(&self) -> &[ParameterOverride] {
        &self.overrides
    }

    /// The parameter files read.
    pub fn params_files(&self) -> &[PathBuf] {
        &self.params_files
    }

    /// The `--log-level` settings, in order.
    pub fn log_levels(&self) -> &[LogLevel] {
        &self.log_levels
    }

    /// The `--enclave` given: which SROS2 identity of `ROS_SECURITY_KEYSTORE` the process's
    /// Zenoh session presents when `ROS_SECURITY_ENABLE=true` (see kairos-zenoh's `config`
    /// and kairos-security), and the enclave its nodes announce in the graph.
    pub fn enclave(&self) -> Option<&str> {
        self.enclave.as_deref()
    }

    /// rcl's logging switches and `--log-config-file`, as given: kept for the logging
    /// that reads them.
    pub fn logging_flags(&self) -> &[String] {
        &self.logging_flags
    }

    /// Whether these arguments turn `/rosout` on or off (`--enable-rosout-logs`,
    /// `--disable-rosout-logs`; the last one says), if they say.
    pub fn rosout_logs(&self) -> Option<bool> {
        self.logging_flags
            .iter()
            .rev()
            .find_map(|flag| match flag.as_str() {
                "--enable-rosout-logs" => Some(true),
                "--disable-rosout-logs" => Some(false),
                _ => None,
            })
    }

    /// The name a node created as `name` takes (`__node`), if remapped.
    pub fn node_name_for(&self, name: &str) -> Option<&str> {
        self.special(name, &["__node", "__name"])
    }

    /// The namespace a node created as `name` takes (`__ns`), if remapped.
    pub fn namespace_for(&self, name: &str) -> Option<&str> {
        self.special(name, &["__ns"])
    }

    /// The last matching rule wins; a rule for this node wins over one for every node.
    fn special(&self, node: &str, keys: &[&str]) -> Option<&str> {
        let rules = || {
            self.remaps
                .iter()
                .rev()
                .filter(|r| keys.contains(&&*r.from))
        };
        rules()
            .find(|r| r.node.as_deref() == Some(node))
            .or_else(|| rules().find(|r| r.node.is_none()))
            .map(|r| r.to.as_str())
    }

    /// The name `resolved` (a topic or service name of node `node` in `namespace`, already
    /// resolved) becomes under the remapping rules, if one matches.
    pub fn remap_name(
        &self,
        kind: NameKind,
        resolved: &str,
        namespace: &str,
        node: &str,
    ) -> Option<String> {
        let matching = |rule: &&Remap| {
            !rule.from.starts_with("__")
                && resolve(kind, &rule.from, namespace, node).is_ok_and(|from| from == resolved)
        };
        let rules = || self.remaps.iter().rev().filter(matching);
        let rule = rules()
            .find(|r| r.node.as_deref() == Some(node))
            .or_else(|| rules().find(|r| r.node.is_none()))?;
        resolve(kind, &rule.to, namespace, node).ok()
    }

    /// The parameter values for the node `fq_name`, as rcl resolves them: the rules of
    /// every node pattern that matches it (`/**`, `/*/planner`, its own name), pattern by
    /// pattern in the order each pattern first appears, a later value of one parameter
    /// over an earlier one. So in a file with `/**` then `/robot/planner` sections the
    /// node's own section wins, and a `-p` (a `/**` rule) given after a file wins over
    /// the file's `/**` values.
    pub fn overrides_for(&self, fq_name: &str) -> BTreeMap<String, ParameterValue> {
        let mut patterns: Vec<&str> = Vec::new();
        for rule in &self.overrides {
            if !patterns.contains(&rule.nodes.as_str()) {
                patterns.push(&rule.nodes);
            }
        }
        let mut values = BTreeMap::new();
        for pattern in patterns {
            if pattern != fq_name && !node_pattern_matches(pattern, fq_name) {
                continue;
            }
            for rule in self.overrides.iter().filter(|r| r.nodes == pattern) {
                values.insert(rule.name.clone(), rule.value.clone());
            }
        }
        values
    }
}

/// Whether a node pattern (`/**`, `/*/planner`, `/robot/**`) matches `fq_name`.
fn node_pattern_matches(pattern: &str, fq_name: &str) -> bool {
    fn tokens(s: &str) -> Vec<&str> {
        s.split('/').filter(|t| !t.is_empty()).collect()
    }
    fn matches(pattern: &[&str], name: &[&str]) -> bool {
        match (pattern.first(), name.first()) {
            (None, None) => true,
            (Some(&"**"), _) => {
                matches(&pattern[1..], name) || (!name.is_empty() && matches(pattern, &name[1..]))
            }
            (Some(p), Some(n)) if *p == "*" || p == n => matches(&pattern[1..], &name[1..]),
            _ => false,
        }
    }
    matches(&tokens(pattern), &tokens(fq_name))
}

fn split_rule<'a>(
    flag: &str,
    rule: &'a str,
    example: &str,
) -> Result<(&'a str, &'a str), RosArgsError> {
    rule.split_once(":=").ok_or_else(|| RosArgsError::BadRule {
        flag: flag.to_owned(),
        rule: rule.to_owned(),
        why: format!("a rule is written FROM:=TO, e.g. {example}"),
    })
}

/// `[node:]from:=to`; the node prefix is the part before a single `:` in the left side.
fn parse_remap(flag: &str, rule: &str) -> Result<Remap, RosArgsError> {
    let (left, to) = split_rule(flag, rule, "chatter:=/news or talker:__ns:=/robot")?;
    let (node, from) = match left.split_once(':') {
        Some((node, from)) => (Some(node.to_owned()), from),
        None => (None, left),
    };
    let bad = |why: &str| RosArgsError::BadRule {
        flag: flag.to_owned(),
        rule: rule.to_owned(),
        why: why.to_owned(),
    };
    if from.is_empty() || to.is_empty() {
        return Err(bad("both sides of ':=' must name something"));
    }
    match from {
        "__ns" if !to.starts_with('/') => {
            return Err(bad("a namespace is absolute: __ns:=/robot"));
        }
        "__node" | "__name" if to.contains('/') => {
            return Err(bad("a node name has no '/': use __ns for the namespace"));
        }
        _ => {}
    }
    Ok(Remap {
        node,
        from: from.to_owned(),
        to: to.to_owned(),
    })
}

fn parse_param(flag: &str, rule: &str) -> Result<ParameterOverride, RosArgsError> {
    let (left, text) = split_rule(flag, rule, "rate:=10.0 or talker:rate:=10.0")?;
    let (nodes, name) = match left.split_once(':') {
        Some((node, name)) => (format!("/**/{node}"), name),
        None => ("/**".to_owned(), left),
    };
    let bad = |why: String| RosArgsError::BadRule {
        flag: flag.to_owned(),
        rule: rule.to_owned(),
        why,
    };
    if name.is_empty() {
        return Err(bad("the parameter needs a name: NAME:=VALUE".into()));
    }
    let docs =
        YamlLoader::load_from_str(text).map_err(|e| bad(format!("the value is not YAML: {e}")))?;
    let yaml = docs
        .into_iter()
        .next()
        .unwrap_or(Yaml::String(String::new()));
    let value = parameter_value(&yaml).map_err(bad)?;
    Ok(ParameterOverride {
        nodes,
        name: name.to_owned(),
        value,
    })
}

fn parse_log_level(flag: &str, rule: &str) -> Result<LogLevel, RosArgsError> {
    let (logger, level) = match rule.split_once(":=") {
        Some((logger, level)) => (Some(logger.to_owned()), level),
        None => (None, rule),
    };
    let level = level.to_ascii_lowercase();
    if !["debug", "info", "warn", "error", "fatal", "unset"].contains(&level.as_str()) {
        return Err(RosArgsError::BadRule {
            flag: flag.to_owned(),
            rule: rule.to_owned(),
            why: "the level is one of debug, info, warn, error, fatal".to_owned(),
        });
    }
    Ok(LogLevel { logger, level })
}

impl ParameterValue {
    /// Reads a value as `-p NAME:=VALUE` and `ros2 param set` do: YAML, so `true`, `3`,
    /// `2.5`, `text`, `'7'` (a string) and `[1, 2]` have the types they look like. The
    /// error says why the text is no parameter value.
    ///
    /// ```
    /// use kairos::graph::ParameterValue;
    ///
    /// assert_eq!(ParameterValue::from_yaml("[1, 2.5]"), Ok(ParameterValue::DoubleArray(vec![1.0, 2.5])));
    /// assert!(ParameterValue::from_yaml("[1, a]").is_err());
    /// ```
    pub fn from_yaml(text: &str) -> Result<ParameterValue, String> {
        let docs = YamlLoader::load_from_str(text).map_err(|e| format!("not YAML: {e}"))?;
        let yaml = docs
            .into_iter()
            .next()
            .unwrap_or(Yaml::String(String::new()));
        parameter_value(&yaml)
    }
}

/// A YAML scalar or sequence as a parameter value.
pub(crate) fn parameter_value(yaml: &Yaml) -> Result<ParameterValue, String> {
    Ok(match yaml {
        Yaml::Boolean(b) => ParameterValue::Bool(*b),
        Yaml::Integer(i) => ParameterValue::Integer(*i),
        Yaml::Real(text) => ParameterValue::Double(
            yaml.as_f64()
                .ok_or_else(|| format!("'{text}' is not a number a parameter can hold"))?,
        ),
        Yaml::String(s) => ParameterValue::String(s.clone()),
        Yaml::Array(items) => array_value(items)?,
        Yaml::Null => return Err("no value: write one after ':=' (or a string in quotes)".into()),
        Yaml::Hash(_) => return Err("a map is not a parameter value (nest it as name.key)".into()),
        _ => return Err("this value has no parameter type".into()),
    })
}

/// A YAML sequence as an array parameter: all booleans, all integers, all numbers (some
/// integers among doubles count as doubles) or all strings.
fn array_value(items: &[Yaml]) -> Result<ParameterValue, String> {
    let all = |f: fn(&Yaml) -> bool| items.iter().all(f);
    if items.is_empty() {
        return Err("an empty array has no element type: give at least one element".into());
    }
    if all(|y| matches!(y, Yaml::Boolean(_))) {
        return Ok(ParameterValue::BoolArray(
            items.iter().filter_map(Yaml::as_bool).collect(),
        ));
    }
    if all(|y| matches!(y, Yaml::Integer(_))) {
        return Ok(ParameterValue::IntegerArray(
            items.iter().filter_map(Yaml::as_i64).collect(),
        ));
    }
    if all(|y| matches!(y, Yaml::Integer(_) | Yaml::Real(_))) {
        let doubles = items
            .iter()
            .map(|y| y.as_f64().or_else(|| y.as_i64().map(|i| i as f64)))
            .collect::<Option<Vec<f64>>>()
            .ok_or("an element is not a number a parameter can hold")?;
        return Ok(ParameterValue::DoubleArray(doubles));
    }
    if all(|y| matches!(y, Yaml::String(_))) {
        return Ok(ParameterValue::StringArray(
            items
                .iter()
                .filter_map(|y| y.as_str().map(str::to_owned))
                .collect(),
        ));
    }
    Err("an array's elements must all be booleans, all numbers or all strings".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(RosArgs, Vec<String>), RosArgsError> {
        RosArgs::parse(args.iter().copied())
    }

    fn parse_file(file: &std::path::Path) -> Result<(RosArgs, Vec<String>), RosArgsError> {
        let file = file.to_str().expect("test files have UTF-8 paths");
        parse(&["prog", "--ros-args", "--params-file", file])
    }

    #[test]
    fn ros_sections_are_taken_out_and_the_rest_kept_in_order() {
        let (ros, rest) = parse(&[
            "prog",
            "a",
            "--ros-args",
            "-r",
            "x:=y",
            "--",
            "b",
            "--ros-args",
            "-p",
            "n:=1",
        ])
        .unwrap();
        assert_eq!(rest, ["prog", "a", "b"]);
        assert_eq!(ros.remaps().len(), 1);
        assert_eq!(
            ros.parameter_overrides()[0].value,
            ParameterValue::Integer(1)
        );
    }

    #[test]
    fn parameter_values_take_their_yaml_types() {
        let cases: [(&str, ParameterValue); 8] = [
            ("true", ParameterValue::Bool(true)),
            ("-3", ParameterValue::Integer(-3)),
            ("2.5", ParameterValue::Double(2.5)),
            ("hello", ParameterValue::String("hello".into())),
            ("'7'", ParameterValue::String("7".into())),
            ("[1, 2]", ParameterValue::IntegerArray(vec![1, 2])),
            ("[1, 2.5]", ParameterValue::DoubleArray(vec![1.0, 2.5])),
            (
                "[a, b]",
                ParameterValue::StringArray(vec!["a".into(), "b".into()]),
            ),
        ];
        for (text, value) in cases {
            let rule = format!("p:={text}");
            let (ros, _) = parse(&["prog", "--ros-args", "-p", &rule]).unwrap();
            assert_eq!(ros.parameter_overrides()[0].value, value, "{text}");
        }
    }

    #[test]
    fn bad_input_is_a_typed_error_that_says_what_to_write() {
        let unknown = parse(&["prog", "--ros-args", "--bogus"]).unwrap_err();
        assert!(matches!(unknown, RosArgsError::UnknownFlag { .. }));
        assert!(unknown.to_string().contains("'--'"), "{unknown}");
        let missing = parse(&["prog", "--ros-args", "-r"]).unwrap_err();
        assert!(
            matches!(missing, RosArgsError::MissingValue { .. }),
            "{missing}"
        );
        let no_sep = parse(&["prog", "--ros-args", "-r", "a=b"]).unwrap_err();
        assert!(no_sep.to_string().contains("FROM:=TO"), "{no_sep}");
        let relative_ns = parse(&["prog", "--ros-args", "-r", "__ns:=robot"]).unwrap_err();
        assert!(
            relative_ns.to_string().contains("absolute"),
            "{relative_ns}"
        );
        let mixed = parse(&["prog", "--ros-args", "-p", "p:=[1, a]"]).unwrap_err();
        assert!(mixed.to_string().contains("all numbers"), "{mixed}");
        let level = parse(&["prog", "--ros-args", "--log-level", "loud"]).unwrap_err();
        assert!(level.to_string().contains("debug"), "{level}");
    }

    #[test]
    fn node_specific_rules_win_over_rules_for_every_node() {
        let (ros, _) = parse(&[
            "prog",
            "--ros-args",
            "-r",
            "talker:__node:=speaker",
            "-r",
            "__node:=other",
            "-r",
            "__ns:=/robot",
        ])
        .unwrap();
        assert_eq!(ros.node_name_for("talker"), Some("speaker"));
        assert_eq!(ros.node_name_for("listener"), Some("other"));
        assert_eq!(ros.namespace_for("talker"), Some("/robot"));
    }

    #[test]
    fn topic_rules_match_resolved_names() {
        let (ros, _) = parse(&[
            "prog",
            "--ros-args",
            "-r",
            "chatter:=news",
            "-r",
            "listener:/robot/x:=/y",
        ])
        .unwrap();
        let remap = |resolved, node| ros.remap_name(NameKind::Topic, resolved, "/robot", node);
        assert_eq!(
            remap("/robot/chatter", "talker").as_deref(),
            Some("/robot/news")
        );
        assert_eq!(remap("/chatter", "talker"), None);
        assert_eq!(remap("/robot/x", "listener").as_deref(), Some("/y"));
        assert_eq!(remap("/robot/x", "talker"), None);
    }

    #[test]
    fn node_patterns_match_as_in_ros_parameter_files() {
        for (pattern, name, expected) in [
            ("/**", "/a/b", true),
            ("/a/b", "/a/b", true),
            ("/*/b", "/a/b", true),
            ("/*/b", "/b", false),
            ("/**/b", "/b", true),
            ("/**/b", "/x/y/b", true),
            ("/a/**", "/a/b/c", true),
            ("/a", "/b", false),
        ] {
            assert_eq!(
                node_pattern_matches(pattern, name),
                expected,
                "{pattern} {name}"
            );
        }
    }

    #[test]
    fn a_parameter_file_gives_nested_names_and_wildcards() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("params.yaml");
        std::fs::write(
            &file,
            "/**:\n  ros__parameters:\n    rate: 5\n    use_sim_time: true\n\
             planner:\n  ros__parameters:\n    rate: 10.5\n    limits:\n      speed: 1.5\n      \
             names: [a, b]\n",
        )
        .unwrap();
        let (ros, _) = parse_file(&file).unwrap();
        let planner = ros.overrides_for("/planner");
        assert_eq!(planner["rate"], ParameterValue::Double(10.5));
        assert_eq!(planner["limits.speed"], ParameterValue::Double(1.5));
        assert_eq!(planner["use_sim_time"], ParameterValue::Bool(true));
        let other = ros.overrides_for("/robot/other");
        assert_eq!(other["rate"], ParameterValue::Integer(5));
        assert!(!other.contains_key("limits.speed"));
    }

    #[test]
    fn a_parameter_file_is_read_as_rcl_reads_it() {
        // Node names nested key by key, a key written twice, and rcl's order: the
        // patterns that match a node, in the order each first appears, last value wins.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rcl.yaml");
        std::fs::write(
            &file,
            "/**:\n  ros__parameters:\n    full_wild: 1\n\
             /**:\n  node2:\n    ros__parameters:\n      a_value: first\n\
             /ns:\n  node2:\n    ros__parameters:\n      a_value: second\n      bar: bar\n\
             /*:\n  node2:\n    ros__parameters:\n      a_value: last_one_win\n\
             ns:\n  \"*\":\n    ros__parameters:\n      in_ns: 2\n\
             nsX:\n  node2:\n    ros__parameters:\n      should_not_appear: 3\n",
        )
        .unwrap();
        let (ros, _) = parse_file(&file).unwrap();
        let node = ros.overrides_for("/ns/node2");
        assert_eq!(node["full_wild"], ParameterValue::Integer(1));
        assert_eq!(
            node["a_value"],
            ParameterValue::String("last_one_win".into())
        );
        assert_eq!(node["bar"], ParameterValue::String("bar".into()));
        assert_eq!(node["in_ns"], ParameterValue::Integer(2));
        assert!(!node.contains_key("should_not_appear"));
        let root = ros.overrides_for("/node2");
        assert_eq!(root["a_value"], ParameterValue::String("first".into()));
        assert!(!root.contains_key("in_ns"));
    }

    #[test]
    fn a_broken_parameter_file_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.yaml");
        std::fs::write(&file, "planner:\n  ros__parameters:\n    rate: [1\n").unwrap();
        let err = parse_file(&file).unwrap_err();
        assert!(err.to_string().contains("line"), "{err}");
        let missing =
            parse(&["prog", "--ros-args", "--params-file", "/nonexistent.yaml"]).unwrap_err();
        assert!(missing.to_string().contains("cannot read"), "{missing}");
        std::fs::write(&file, "planner:\n  rate: 1\n").unwrap();
        let flat = parse_file(&file).unwrap_err();
        assert!(flat.to_string().contains("ros__parameters"), "{flat}");
    }
}
