//! `kairos lifecycle nodes|get|set|list`: managed nodes across processes, as `ros2
//! lifecycle` shows and drives them. A managed node is one that serves `<node>/get_state`
//! (`lifecycle_msgs/srv/GetState`); each command is a call to one of its services.

use super::{GraphArgs, absolute_name, cli_node, gather, open, seconds};
use clap::Subcommand;
use kairos::graph::{Client, Node, ServiceType};
use kairos_msgs::lifecycle_msgs::msg::Transition as TransitionMsg;
use kairos_msgs::lifecycle_msgs::srv::{
    ChangeState, ChangeStateRequest, GetAvailableTransitions, GetAvailableTransitionsRequest,
    GetState, GetStateRequest,
};
use kairos_zenoh::graph_key::EntityKind;
use std::process::ExitCode;

/// How `lifecycle_msgs/srv/GetState` is named in key expressions.
const GET_STATE_DDS: &str = "lifecycle_msgs::srv::dds_::GetState_";

#[derive(Debug, Subcommand)]
pub enum LifecycleCmd {
    /// Managed nodes in the graph.
    Nodes {
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// A managed node's state.
    Get {
        node: String,
        /// Seconds to wait for the node's service, then for its answer.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
    /// Ask a managed node for a transition, by label (configure, activate, ...) or id;
    /// several are asked for in turn, each once the one before succeeded.
    Set {
        node: String,
        #[arg(required = true)]
        transitions: Vec<String>,
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
    /// The transitions a managed node allows now (--all: every transition of its machine).
    List {
        node: String,
        #[arg(long, short = 'a')]
        all: bool,
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
}

pub fn lifecycle(cmd: LifecycleCmd) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    match cmd {
        LifecycleCmd::Nodes { graph } => {
            let tokens = gather(&transport, &graph)?;
            let mut nodes: Vec<String> = tokens
                .iter()
                .filter(|t| t.kind == EntityKind::Service)
                .filter_map(|t| t.endpoint.as_ref())
                .filter(|e| e.dds_type == GET_STATE_DDS)
                .filter_map(|e| e.name.strip_suffix("/get_state").map(str::to_owned))
                .collect();
            nodes.sort();
            nodes.dedup();
            for node in nodes {
                println!("{node}");
            }
            Ok(ExitCode::SUCCESS)
        }
        LifecycleCmd::Get { node, timeout } => {
            let cli = cli_node(&transport, "lifecycle")?;
            let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
            let Some(client) = ready::<GetState>(&cli, &node, "get_state", timeout)? else {
                return Ok(ExitCode::from(1));
            };
            let state = client
                .call(GetStateRequest::default(), timeout)?
                .current_state;
            println!("{} [{}]", state.label, state.id);
            Ok(ExitCode::SUCCESS)
        }
        LifecycleCmd::List { node, all, timeout } => {
            let cli = cli_node(&transport, "lifecycle")?;
            let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
            let service = if all {
                "get_transition_graph"
            } else {
                "get_available_transitions"
            };
            let Some(client) = ready::<GetAvailableTransitions>(&cli, &node, service, timeout)?
            else {
                return Ok(ExitCode::from(1));
            };
            let transitions = client
                .call(GetAvailableTransitionsRequest::default(), timeout)?
                .available_transitions;
            for t in transitions {
                println!("- {} [{}]", t.transition.label, t.transition.id);
                println!("\tStart: {}", t.start_state.label);
                println!("\tGoal: {}", t.goal_state.label);
            }
            Ok(ExitCode::SUCCESS)
        }
        LifecycleCmd::Set {
            node,
            transitions,
            timeout,
        } => {
            let cli = cli_node(&transport, "lifecycle")?;
            let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
            for transition in &transitions {
                let status = set(&cli, &node, transition, timeout)?;
                if status != ExitCode::SUCCESS {
                    return Ok(status);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Asks `node` for `transition` (a label or an id) if it allows it now.
fn set(
    cli: &Node,
    node: &str,
    transition: &str,
    timeout: kairos::time::Duration,
) -> anyhow::Result<ExitCode> {
    let Some(available) =
        ready::<GetAvailableTransitions>(cli, node, "get_available_transitions", timeout)?
    else {
        return Ok(ExitCode::from(1));
    };
    let allowed = available
        .call(GetAvailableTransitionsRequest::default(), timeout)?
        .available_transitions;
    let chosen = allowed
        .iter()
        .find(|t| t.transition.label == transition || t.transition.id.to_string() == transition);
    let Some(chosen) = chosen else {
        let names: Vec<String> = allowed
            .iter()
            .map(|t| format!("{} [{}]", t.transition.label, t.transition.id))
            .collect();
        eprintln!(
            "{node} does not allow '{transition}' now; it allows: {}",
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        );
        return Ok(ExitCode::from(2));
    };
    let Some(change) = ready::<ChangeState>(cli, node, "change_state", timeout)? else {
        return Ok(ExitCode::from(1));
    };
    let request = ChangeStateRequest {
        transition: TransitionMsg {
            id: chosen.transition.id,
            label: chosen.transition.label.clone(),
        },
    };
    if change.call(request, timeout)?.success {
        println!("Transitioning successful");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("Transitioning failed");
        Ok(ExitCode::from(1))
    }
}

/// A client of `<node>/<service>` once the service has a server; `None` (said on
/// stderr) when none came within `timeout`.
fn ready<S: ServiceType>(
    cli: &Node,
    node: &str,
    service: &str,
    timeout: kairos::time::Duration,
) -> anyhow::Result<Option<Client<S>>> {
    let name = format!("{}/{service}", absolute_name(node));
    let client: Client<S> = cli.create_client(&name)?;
    if client.wait_for_service(timeout) {
        Ok(Some(client))
    } else {
        eprintln!(
            "{node} is not a managed node in the graph: no server of {name} within {timeout}"
        );
        Ok(None)
    }
}
