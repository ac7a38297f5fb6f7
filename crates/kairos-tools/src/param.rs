//! `kairos param list|get|set`: the parameters of a node in any process (kairos or ROS 2),
//! through ROS 2's parameter services, shaped like `ros2 param`.
//!
//! Every call waits for the node's service at most `--timeout` seconds, then for the answer
//! at most as long again; a node that is not there is an error saying so.

use super::{absolute_name, seconds};
use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use kairos::graph::{Node, ParameterValue, Parameters, RosArgs, ServiceType};
use kairos::time::Duration;
use kairos_msgs::rcl_interfaces::msg as rcl;
use kairos_msgs::rcl_interfaces::srv;
use kairos_zenoh::ZenohTransport;
use kairos_zenoh::parameter_services::{from_ros, to_ros};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Subcommand)]
pub enum ParamCmd {
    /// The parameter names of a node.
    List(NodeArg),
    /// The value of one parameter.
    Get {
        #[command(flatten)]
        node: NodeArg,
        name: String,
    },
    /// Sets one parameter, e.g. `kairos param set /sensor use_sim_time true`.
    Set {
        #[command(flatten)]
        node: NodeArg,
        name: String,
        /// The value, read as `ros2 param set` reads it: true, 3, 2.5, text, [1, 2].
        value: String,
    },
    /// Every parameter of a node, as a parameter file (`--params-file`, `param load`)
    /// reads it: `/node: {ros__parameters: {...}}`, dotted names nested.
    Dump(NodeArg),
    /// Sets the parameters a parameter file gives the node (its own section and the
    /// `/**`-style wildcard sections), e.g. `kairos param load /planner params.yaml`.
    Load {
        #[command(flatten)]
        node: NodeArg,
        /// The YAML parameter file.
        file: std::path::PathBuf,
    },
    /// Runs a node with parameters and their services, reporting its clock as it switches
    /// (for demos and tests).
    #[command(hide = true)]
    Serve {
        node: String,
        /// Exit after this many seconds.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
    },
}

#[derive(Debug, Args)]
pub struct NodeArg {
    /// The node's name, e.g. /sensor.
    node: String,
    /// Seconds to wait for the node's service, then for its answer.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
}

pub fn run(cmd: ParamCmd) -> anyhow::Result<ExitCode> {
    let transport = ZenohTransport::open()?;
    transport.install(&kairos::graph::Context::global())?;
    let result = match cmd {
        ParamCmd::List(node) => list(&node),
        ParamCmd::Get { node, name } => get(&node, &name),
        ParamCmd::Set { node, name, value } => set(&node, &name, &value),
        ParamCmd::Dump(node) => dump(&node),
        ParamCmd::Load { node, file } => load(&node, &file),
        ParamCmd::Serve { node, timeout } => serve(&node, timeout),
    };
    close(&transport);
    result
}

fn close(transport: &Arc<ZenohTransport>) {
    let _ = transport.close(std::time::Duration::from_secs(5));
}

/// Calls `<node>/<service>` once.
fn call<S: ServiceType>(
    node: &NodeArg,
    service: &str,
    request: S::Request,
) -> anyhow::Result<S::Response> {
    let name = format!("{}/{service}", absolute_name(&node.node));
    let timeout = Duration::from(seconds("--timeout", node.timeout)?);
    let me = Node::new(&format!("kairos_param_{}", std::process::id()))?;
    let client = me.create_client::<S>(&name)?;
    if !client.wait_for_service(timeout) {
        bail!(
            "node {} offers no {service} service within {}s: is it running, and on the same router and ROS_DOMAIN_ID?",
            absolute_name(&node.node),
            node.timeout
        );
    }
    client
        .call(request, timeout)
        .with_context(|| format!("calling {name}"))
}

fn list(node: &NodeArg) -> anyhow::Result<ExitCode> {
    let response = call::<srv::ListParameters>(
        node,
        "list_parameters",
        srv::ListParametersRequest::default(),
    )?;
    for name in response.result.names {
        println!("  {name}");
    }
    Ok(ExitCode::SUCCESS)
}

fn get(node: &NodeArg, name: &str) -> anyhow::Result<ExitCode> {
    let response = call::<srv::GetParameters>(
        node,
        "get_parameters",
        srv::GetParametersRequest {
            names: vec![name.to_owned()],
        },
    )?;
    let value = response
        .values
        .first()
        .ok_or_else(|| anyhow!("the node answered with no value"))?;
    match from_ros(value).map_err(|e| anyhow!(e))? {
        ParameterValue::NotSet => {
            eprintln!("Parameter not set: {name}");
            Ok(ExitCode::from(1))
        }
        value => {
            println!("{} value is: {value}", kind_label(&value));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn kind_label(value: &ParameterValue) -> &'static str {
    match value {
        ParameterValue::Bool(_) => "Boolean",
        ParameterValue::Integer(_) => "Integer",
        ParameterValue::Double(_) => "Double",
        ParameterValue::String(_) => "String",
        ParameterValue::ByteArray(_) => "Byte values",
        ParameterValue::BoolArray(_) => "Boolean values",
        ParameterValue::IntegerArray(_) => "Integer values",
        ParameterValue::DoubleArray(_) => "Double values",
        ParameterValue::StringArray(_) => "String values",
        ParameterValue::NotSet => "Unset",
    }
}

fn set(node: &NodeArg, name: &str, text: &str) -> anyhow::Result<ExitCode> {
    let value = parse_value(text)?;
    let response = call::<srv::SetParameters>(
        node,
        "set_parameters",
        srv::SetParametersRequest {
            parameters: vec![rcl::Parameter {
                name: name.to_owned(),
                value: to_ros(&value),
            }],
        },
    )?;
    match response.results.first() {
        Some(r) if r.successful => {
            println!("Set parameter successful");
            Ok(ExitCode::SUCCESS)
        }
        Some(r) => {
            eprintln!("Setting parameter failed: {}", r.reason);
            Ok(ExitCode::from(1))
        }
        None => bail!("the node answered with no result"),
    }
}

fn dump(node: &NodeArg) -> anyhow::Result<ExitCode> {
    let names = call::<srv::ListParameters>(
        node,
        "list_parameters",
        srv::ListParametersRequest::default(),
    )?
    .result
    .names;
    let values = call::<srv::GetParameters>(
        node,
        "get_parameters",
        srv::GetParametersRequest {
            names: names.clone(),
        },
    )?
    .values;
    let mut parameters = Vec::new();
    for (name, value) in names.into_iter().zip(values) {
        parameters.push((name, from_ros(&value).map_err(|e| anyhow!(e))?));
    }
    print!(
        "{}",
        parameter_file(&absolute_name(&node.node), &parameters)
    );
    Ok(ExitCode::SUCCESS)
}

/// `parameters` of `node` as a ROS 2 parameter file: dotted names as nested maps.
fn parameter_file(node: &str, parameters: &[(String, ParameterValue)]) -> String {
    let mut sorted: Vec<&(String, ParameterValue)> = parameters.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = format!("{node}:\n  ros__parameters:\n");
    let mut open: Vec<&str> = Vec::new();
    for (name, value) in sorted {
        let parts: Vec<&str> = name.split('.').collect();
        let (leaf, path) = parts.split_last().expect("split gives one part at least");
        let common = open.iter().zip(path).take_while(|(a, b)| a == b).count();
        open.truncate(common);
        for part in &path[common..] {
            out.push_str(&format!("{}{part}:\n", "  ".repeat(2 + open.len())));
            open.push(part);
        }
        out.push_str(&format!(
            "{}{leaf}: {}\n",
            "  ".repeat(2 + open.len()),
            yaml_value(value)
        ));
    }
    out
}

/// A value in YAML flow style, typed as the file reader will read it back.
fn yaml_value(value: &ParameterValue) -> String {
    fn string(s: &str) -> String {
        format!("'{}'", s.replace('\'', "''"))
    }
    fn double(d: f64) -> String {
        match d {
            d if d.is_nan() => ".nan".to_owned(),
            d if d.is_infinite() => if d > 0.0 { ".inf" } else { "-.inf" }.to_owned(),
            d if d.fract() == 0.0 && d.abs() < 1e15 => format!("{d:.1}"),
            d => format!("{d}"),
        }
    }
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match value {
        ParameterValue::NotSet => "null".to_owned(),
        ParameterValue::Bool(b) => b.to_string(),
        ParameterValue::Integer(i) => i.to_string(),
        ParameterValue::Double(d) => double(*d),
        ParameterValue::String(s) => string(s),
        ParameterValue::ByteArray(v) => list(v.iter().map(u8::to_string).collect()),
        ParameterValue::BoolArray(v) => list(v.iter().map(bool::to_string).collect()),
        ParameterValue::IntegerArray(v) => list(v.iter().map(i64::to_string).collect()),
        ParameterValue::DoubleArray(v) => list(v.iter().map(|d| double(*d)).collect()),
        ParameterValue::StringArray(v) => list(v.iter().map(|s| string(s)).collect()),
    }
}

fn load(node: &NodeArg, file: &std::path::Path) -> anyhow::Result<ExitCode> {
    let file_arg = file.to_string_lossy().into_owned();
    let (args, _) = RosArgs::parse(["kairos", "--ros-args", "--params-file", &file_arg])?;
    let values = args.overrides_for(&absolute_name(&node.node));
    if values.is_empty() {
        bail!(
            "{} gives node {} no parameters (no section for it, nor a wildcard one)",
            file.display(),
            absolute_name(&node.node)
        );
    }
    let response = call::<srv::SetParameters>(
        node,
        "set_parameters",
        srv::SetParametersRequest {
            parameters: values
                .iter()
                .map(|(name, value)| rcl::Parameter {
                    name: name.clone(),
                    value: to_ros(value),
                })
                .collect(),
        },
    )?;
    let mut failed = 0;
    for ((name, _), result) in values.iter().zip(&response.results) {
        if result.successful {
            println!("Set parameter {name} successful");
        } else {
            failed += 1;
            eprintln!("Setting parameter {name} failed: {}", result.reason);
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A value as `ros2 param set` reads it (YAML, as `-p NAME:=VALUE` does).
pub(crate) fn parse_value(text: &str) -> anyhow::Result<ParameterValue> {
    ParameterValue::from_yaml(text)
        .map_err(|why| anyhow!("'{text}' is not a parameter value: {why}"))
}

/// A node with `use_sim_time` and two parameters of its own, serving them; prints a line
/// whenever its clock switches between system and simulation time, and the simulated
/// second while it follows `/clock`.
fn serve(name: &str, timeout: f64) -> anyhow::Result<ExitCode> {
    let timeout = seconds("--timeout", timeout)?;
    let node = Node::new(name.trim_start_matches('/'))?;
    let parameters = Parameters::for_node(&node)?;
    parameters.declare("rate_hz", ParameterValue::Double(10.0), Default::default())?;
    parameters.declare(
        "frame_id",
        ParameterValue::String("base_link".into()),
        Default::default(),
    )?;
    let _services = kairos_zenoh::parameter_services::serve(&node, &parameters)?;
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    let spin = std::thread::spawn(move || spinner.spin());
    println!("ready");
    let end = std::time::Instant::now() + timeout;
    let mut last = None;
    while std::time::Instant::now() < end {
        let clock = node.clock();
        let sim = clock.as_ros().is_some_and(|r| r.use_sim_time());
        let now = clock.now();
        let state = (sim, sim.then(|| now.nanos() / 1_000_000_000));
        if last != Some(state) {
            match state.1 {
                Some(sec) => println!("use_sim_time=true sim_sec={sec}"),
                None => println!("use_sim_time=false"),
            }
            last = Some(state);
        }
        // A report loop for tests, not a deadline: polling a few times per 100 ms is enough.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = exec.shutdown(Duration::from_secs(2));
    let _ = spin.join();
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_reads_back_as_the_same_parameters() {
        let parameters = vec![
            ("use_sim_time".to_owned(), ParameterValue::Bool(false)),
            ("rate".to_owned(), ParameterValue::Double(10.0)),
            ("limits.speed".to_owned(), ParameterValue::Double(1.5)),
            ("limits.turn.max".to_owned(), ParameterValue::Integer(3)),
            ("frame".to_owned(), ParameterValue::String("it's 7".into())),
            (
                "names".to_owned(),
                ParameterValue::StringArray(vec!["a".into(), "true".into()]),
            ),
            (
                "gains".to_owned(),
                ParameterValue::DoubleArray(vec![1.0, 0.25]),
            ),
        ];
        let text = parameter_file("/robot/planner", &parameters);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("dump.yaml");
        std::fs::write(&file, &text).unwrap();
        let (args, _) = RosArgs::parse([
            "kairos",
            "--ros-args",
            "--params-file",
            file.to_str().unwrap(),
        ])
        .unwrap();
        let read = args.overrides_for("/robot/planner");
        assert_eq!(read.len(), parameters.len(), "{text}");
        for (name, value) in &parameters {
            assert_eq!(&read[name], value, "{name} in\n{text}");
        }
    }

    #[test]
    fn values_read_like_ros2_param_set() {
        assert_eq!(parse_value("true").unwrap(), ParameterValue::Bool(true));
        assert_eq!(parse_value("3").unwrap(), ParameterValue::Integer(3));
        assert_eq!(parse_value("2.5").unwrap(), ParameterValue::Double(2.5));
        assert_eq!(
            parse_value("map").unwrap(),
            ParameterValue::String("map".into())
        );
        assert_eq!(
            parse_value("[1, 2]").unwrap(),
            ParameterValue::IntegerArray(vec![1, 2])
        );
        assert_eq!(
            parse_value("[1, 2.5]").unwrap(),
            ParameterValue::DoubleArray(vec![1.0, 2.5])
        );
        assert!(parse_value("[1, a]").is_err());
    }
}
