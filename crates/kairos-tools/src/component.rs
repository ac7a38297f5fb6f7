//! `kairos component types|list|load|unload`: composable nodes, as `ros2 component` shows
//! and drives them. A container is a node that serves `<node>/_container/list_nodes`
//! (`composition_interfaces/srv/ListNodes`); loading and unloading are calls to its
//! `load_node` and `unload_node`, so these commands work on kairos's container and on
//! rclcpp's alike.

use super::param::parse_value;
use super::{GraphArgs, absolute_name, cli_node, gather, open, seconds};
use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use kairos::graph::{Client, Node, ServiceType};
use kairos_ament::PackageIndex;
use kairos_msgs::composition_interfaces::srv::{
    ListNodes, ListNodesRequest, LoadNode, LoadNodeRequest, UnloadNode, UnloadNodeRequest,
};
use kairos_msgs::rcl_interfaces::msg::Parameter;
use kairos_zenoh::graph_key::EntityKind;
use kairos_zenoh::parameter_services::to_ros;
use std::process::ExitCode;

/// How `composition_interfaces/srv/ListNodes` is named in key expressions.
const LIST_NODES_DDS: &str = "composition_interfaces::srv::dds_::ListNodes_";
const LIST_NODES: &str = "/_container/list_nodes";

#[derive(Debug, Subcommand)]
pub enum ComponentCmd {
    /// The components installed packages register (ament's `rclcpp_components` index).
    Types,
    /// The containers in the graph and the nodes each has loaded (of one container when
    /// it is named); `--json`: one JSON object per container.
    List {
        container: Option<String>,
        #[command(flatten)]
        graph: GraphArgs,
        /// Seconds to wait for each container's answer.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
    /// Load a package's component into a running container.
    Load(LoadArgs),
    /// Unload components from a container, by unique id.
    Unload {
        container: String,
        #[arg(required = true)]
        unique_ids: Vec<u64>,
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The container's node name, e.g. /ComponentManager.
    container: String,
    /// The package that registers the component.
    package: String,
    /// The component's plugin name, e.g. my_pkg::Talker.
    plugin: String,
    /// The node's name (the component's own when not given).
    #[arg(long, short = 'n')]
    node_name: Option<String>,
    /// The node's namespace.
    #[arg(long)]
    node_namespace: Option<String>,
    /// The node's log level: debug, info, warn, error or fatal.
    #[arg(long)]
    log_level: Option<String>,
    /// A remapping FROM:=TO; repeat.
    #[arg(long = "remap-rule", short = 'r')]
    remap_rules: Vec<String>,
    /// A parameter NAME:=VALUE (YAML, as -p reads it); repeat.
    #[arg(long = "parameter", short = 'p')]
    parameters: Vec<String>,
    /// An extra argument for the container NAME:=VALUE (use_intra_process_comms:=true).
    #[arg(long = "extra-argument", short = 'e')]
    extra_arguments: Vec<String>,
    /// Seconds to wait for the container, then for its answer.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
}

pub fn component(cmd: ComponentCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ComponentCmd::Types => types(),
        ComponentCmd::List {
            container,
            graph,
            timeout,
        } => list(container, &graph, timeout),
        ComponentCmd::Load(args) => load(args),
        ComponentCmd::Unload {
            container,
            unique_ids,
            timeout,
        } => unload(&container, &unique_ids, timeout),
    }
}

fn types() -> anyhow::Result<ExitCode> {
    let index = PackageIndex::from_env();
    for package in index.packages().into_keys() {
        let components = index.components(&package)?;
        if !components.is_empty() {
            println!("{package}");
            for (plugin, _) in components {
                println!("  {plugin}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(container: Option<String>, graph: &GraphArgs, timeout: f64) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
    let containers = match container {
        Some(name) => vec![absolute_name(&name)],
        None => {
            let tokens = gather(&transport, graph)?;
            let mut found: Vec<String> = tokens
                .iter()
                .filter(|t| t.kind == EntityKind::Service)
                .filter_map(|t| t.endpoint.as_ref())
                .filter(|e| e.dds_type == LIST_NODES_DDS)
                .filter_map(|e| e.name.strip_suffix(LIST_NODES).map(str::to_owned))
                .collect();
            found.sort();
            found.dedup();
            found
        }
    };
    let cli = cli_node(&transport, "component")?;
    let mut status = ExitCode::SUCCESS;
    for container in containers {
        let Some(client) = ready::<ListNodes>(&cli, &container, "list_nodes", timeout)? else {
            status = ExitCode::from(1);
            continue;
        };
        match client.call(ListNodesRequest::default(), timeout) {
            Ok(listed) => {
                let pairs = listed.unique_ids.iter().zip(&listed.full_node_names);
                if graph.json {
                    let nodes: Vec<_> = pairs
                        .map(|(id, name)| serde_json::json!({"unique_id": id, "name": name}))
                        .collect();
                    let line = serde_json::json!({"container": container, "nodes": nodes});
                    println!("{line}");
                } else {
                    println!("{container}");
                    for (id, name) in pairs {
                        println!("  {id}  {name}");
                    }
                }
            }
            Err(e) => {
                eprintln!("{container}: its list_nodes did not answer: {e}");
                status = ExitCode::from(1);
            }
        }
    }
    Ok(status)
}

fn load(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let request = LoadNodeRequest {
        package_name: args.package.clone(),
        plugin_name: args.plugin.clone(),
        node_name: args.node_name.unwrap_or_default(),
        node_namespace: args.node_namespace.unwrap_or_default(),
        log_level: match args.log_level.as_deref() {
            None => 0,
            Some(level) => log_level(level)?,
        },
        remap_rules: args.remap_rules,
        parameters: parameters("--parameter", &args.parameters)?,
        extra_arguments: parameters("--extra-argument", &args.extra_arguments)?,
    };
    let transport = open()?;
    let timeout = kairos::time::Duration::from(seconds("--timeout", args.timeout)?);
    let cli = cli_node(&transport, "component")?;
    let Some(client) = ready::<LoadNode>(&cli, &args.container, "load_node", timeout)? else {
        return Ok(ExitCode::from(1));
    };
    let response = client
        .call(request, timeout)
        .with_context(|| format!("loading {} into {}", args.plugin, args.container))?;
    if response.success {
        println!(
            "Loaded component {} into '{}' container node as '{}'",
            response.unique_id,
            absolute_name(&args.container),
            response.full_node_name
        );
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "Failed to load component {} into '{}': {}",
            args.plugin,
            absolute_name(&args.container),
            response.error_message
        );
        Ok(ExitCode::from(1))
    }
}

fn unload(container: &str, unique_ids: &[u64], timeout: f64) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
    let cli = cli_node(&transport, "component")?;
    let Some(client) = ready::<UnloadNode>(&cli, container, "unload_node", timeout)? else {
        return Ok(ExitCode::from(1));
    };
    let mut status = ExitCode::SUCCESS;
    for &unique_id in unique_ids {
        let response = match client.call(UnloadNodeRequest { unique_id }, timeout) {
            Ok(response) => response,
            Err(e) => {
                eprintln!("Failed to unload component {unique_id}: {e}");
                status = ExitCode::from(1);
                continue;
            }
        };
        if response.success {
            println!(
                "Unloaded component {unique_id} from '{}' container node",
                absolute_name(container)
            );
        } else {
            eprintln!(
                "Failed to unload component {unique_id} from '{}': {}",
                absolute_name(container),
                response.error_message
            );
            status = ExitCode::from(1);
        }
    }
    Ok(status)
}

/// rcl's severity number for a level name, as `ros2 component load --log-level` takes it.
fn log_level(name: &str) -> anyhow::Result<u8> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "debug" => 10,
        "info" => 20,
        "warn" | "warning" => 30,
        "error" => 40,
        "fatal" => 50,
        _ => bail!("--log-level {name}: not one of debug, info, warn, error, fatal"),
    })
}

/// `NAME:=VALUE` arguments as parameters, the value read as YAML.
fn parameters(flag: &str, items: &[String]) -> anyhow::Result<Vec<Parameter>> {
    items
        .iter()
        .map(|item| {
            let (name, value) = item
                .split_once(":=")
                .filter(|(name, _)| !name.is_empty())
                .ok_or_else(|| anyhow!("{flag} {item}: not NAME:=VALUE"))?;
            Ok(Parameter {
                name: name.to_owned(),
                value: to_ros(&parse_value(value).with_context(|| format!("{flag} {item}"))?),
            })
        })
        .collect()
}

/// A client of `<container>/_container/<service>` once it has a server; `None` (said on
/// stderr) when none came within `timeout`.
fn ready<S: ServiceType>(
    cli: &Node,
    container: &str,
    service: &str,
    timeout: kairos::time::Duration,
) -> anyhow::Result<Option<Client<S>>> {
    let name = format!("{}/_container/{service}", absolute_name(container));
    let client: Client<S> = cli.create_client(&name)?;
    if client.wait_for_service(timeout) {
        Ok(Some(client))
    } else {
        eprintln!(
            "{container} is not a component container in the graph: no server of {name} within {timeout}"
        );
        Ok(None)
    }
}
