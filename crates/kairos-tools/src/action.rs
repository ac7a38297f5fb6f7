//! `kairos action list|info|send_goal`: actions across processes, as `ros2 action` shows
//! and drives them. An action is found by its `_action/send_goal` service; its type is
//! that service's type without `_SendGoal`. Ctrl-C during `send_goal` cancels the goal
//! on its server, as `ros2 action send_goal` does.

use super::values::parse_values;
use super::{GraphArgs, absolute_name, cli_node, gather, node_name, open, render, seconds};
use anyhow::{Context as _, anyhow};
use clap::Subcommand;
use kairos::graph::{ActionType, Message, Node};
use kairos_action::{ActionClient, ClientGoalHandle, GoalStatus};
use kairos_zenoh::graph_key::{EntityKind, Token};
use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

const SEND_GOAL: &str = "/_action/send_goal";

#[derive(Debug, Subcommand)]
pub enum ActionCmd {
    /// Actions in the graph.
    List {
        #[arg(short = 't', long = "show-types")]
        show_types: bool,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// An action's servers and clients.
    Info {
        action: String,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Send a goal and print its feedback (with --feedback) and result.
    #[command(name = "send_goal", alias = "send-goal")]
    SendGoal {
        action: String,
        /// e.g. example_interfaces/action/Fibonacci
        action_type: String,
        /// The goal, e.g. "{order: 5}".
        #[arg(default_value = "{}")]
        goal: String,
        /// Print each feedback message.
        #[arg(long, short = 'f')]
        feedback: bool,
        /// Seconds to wait for the server, then for acceptance, then for the result.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        #[arg(long)]
        json: bool,
    },
}

pub fn action(cmd: ActionCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ActionCmd::List { show_types, graph } => {
            let transport = open()?;
            let tokens = gather(&transport, &graph)?;
            let actions = actions(&tokens);
            super::print_names(&actions, show_types, graph.json)?;
            Ok(ExitCode::SUCCESS)
        }
        ActionCmd::Info { action, graph } => {
            let transport = open()?;
            let tokens = gather(&transport, &graph)?;
            info(&tokens, &absolute_name(&action), graph.json)
        }
        ActionCmd::SendGoal {
            action,
            action_type,
            goal,
            feedback,
            timeout,
            json,
        } => {
            let tool = tools()
                .get(action_type.as_str())
                .ok_or_else(|| anyhow!("kairos does not know the action type {action_type}"))?;
            // Ctrl-C cancels the goal (as `ros2 action send_goal`), so this command takes
            // the signals itself rather than kairos's shutdown on signal.
            kairos::signal::set_shutdown_on_signal(false);
            let transport = open()?;
            let node = cli_node(&transport, "send_goal")?;
            let goal = parse_values(&goal)?;
            let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
            let request = SendGoal {
                action: absolute_name(&action),
                goal,
                feedback,
                timeout,
                json,
            };
            (tool.send_goal)(&node, request)
        }
    }
}

/// Actions by name, with their types: the `_action/send_goal` services of the graph.
fn actions(tokens: &[Token]) -> BTreeMap<String, Vec<String>> {
    let services = super::names_and_types(tokens, &[EntityKind::Service]);
    services
        .into_iter()
        .filter_map(|(name, types)| {
            let action = name.strip_suffix(SEND_GOAL)?.to_owned();
            let types = types
                .iter()
                .map(|t| t.strip_suffix("_SendGoal").unwrap_or(t).to_owned())
                .collect();
            Some((action, types))
        })
        .collect()
}

fn info(tokens: &[Token], action: &str, json: bool) -> anyhow::Result<ExitCode> {
    let service = format!("{action}{SEND_GOAL}");
    let nodes = |kind: EntityKind| {
        let mut names: Vec<String> = tokens
            .iter()
            .filter(|t| t.kind == kind && t.endpoint.as_ref().is_some_and(|e| e.name == service))
            .map(node_name)
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let (servers, clients) = (nodes(EntityKind::Service), nodes(EntityKind::Client));
    if json {
        let value = serde_json::json!({"action": action, "servers": servers, "clients": clients});
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("Action: {action}");
        println!("Action clients: {}", clients.len());
        for c in &clients {
            println!("    {c}");
        }
        println!("Action servers: {}", servers.len());
        for s in &servers {
            println!("    {s}");
        }
    }
    if servers.is_empty() && clients.is_empty() {
        eprintln!("no server or client of action {action} in the graph");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

struct SendGoal {
    action: String,
    goal: serde_json::Value,
    feedback: bool,
    timeout: kairos::time::Duration,
    json: bool,
}

/// One action type, for this tool.
struct ActionTool {
    send_goal: fn(&Node, SendGoal) -> anyhow::Result<ExitCode>,
}

fn tools() -> &'static HashMap<&'static str, ActionTool> {
    static TOOLS: OnceLock<HashMap<&'static str, ActionTool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let mut tools = Tools(HashMap::new());
        kairos_msgs::visit_interfaces(&mut tools);
        tools.0
    })
}

struct Tools(HashMap<&'static str, ActionTool>);

impl kairos_msgs::InterfaceVisitor for Tools {
    fn message<M: Message>(&mut self) {}
    fn service<S: kairos::graph::ServiceType>(&mut self) {}
    fn action<A: ActionType>(&mut self) {
        self.0.insert(
            A::TYPE_NAME,
            ActionTool {
                send_goal: send_goal::<A>,
            },
        );
    }
}

fn send_goal<A: ActionType>(node: &Node, request: SendGoal) -> anyhow::Result<ExitCode> {
    let goal: A::Goal = serde_json::from_value(request.goal)
        .map_err(|e| anyhow!("not a {}: {e}", <A::Goal as Message>::TYPE_NAME))?;
    let client = ActionClient::<A>::new(node, &request.action)?;
    let executor = kairos::exec::Executor::single_threaded();
    executor.add_node(node)?;
    let spinner = executor.clone();
    std::thread::spawn(move || spinner.spin());
    let guard = super::ExecGuard(executor);
    let json = request.json;
    if !json {
        println!("Waiting for an action server to become available...");
    }
    if !client.wait_for_server(request.timeout) {
        eprintln!(
            "no server of action {} within {}",
            request.action, request.timeout
        );
        return Ok(ExitCode::from(1));
    }
    if !json {
        println!("Sending goal:\n{}", indent(&render(&to_json(&goal), false)));
    }
    let show = move |label: &str, value: serde_json::Value| {
        if json {
            println!("{}", serde_json::json!({ label: value }));
        } else {
            println!(
                "{}:\n{}",
                capitalized(label),
                indent(&render(&value, false))
            );
        }
    };
    let accepted: Arc<Mutex<Option<Arc<ClientGoalHandle<A>>>>> = Arc::default();
    watch_ctrl_c(accepted.clone(), request.timeout)?;
    let handle = if request.feedback {
        client.send_goal_with_feedback(
            goal,
            move |feedback| show("feedback", to_json(&feedback)),
            request.timeout,
        )?
    } else {
        client.send_goal(goal, request.timeout)?
    };
    let handle = Arc::new(handle);
    // Known to the Ctrl-C handler before anyone is told: a Ctrl-C that follows the line
    // cancels the goal (it used to find no goal, and exit without canceling it).
    *accepted.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle.clone());
    if !json {
        println!(
            "Goal accepted with ID: {}",
            handle.id().0.map(|b| format!("{b:02x}")).concat()
        );
    }
    let outcome = handle.get_result(request.timeout)?;
    // Feedback and the result travel apart: feedback the server sent just before the
    // result may still be queued. Let the executor hand it over (for at most a second),
    // then stop it, which waits for a feedback line being printed, and only then print
    // the result.
    let drained_by = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while client.feedback_stats().queued > 0 && std::time::Instant::now() < drained_by {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    drop(guard);
    show("result", to_json(&outcome.result));
    let status = match outcome.status {
        GoalStatus::Succeeded => "SUCCEEDED",
        GoalStatus::Canceled => "CANCELED",
        GoalStatus::Aborted => "ABORTED",
        _ => "UNKNOWN",
    };
    if json {
        println!("{}", serde_json::json!({ "status": status }));
    } else {
        println!("Goal finished with status: {status}");
    }
    Ok(if outcome.status == GoalStatus::Succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Ctrl-C (or SIGTERM) while a goal runs asks its server to cancel it; the result then
/// comes as usual (status CANCELED). Before a goal is accepted, or at a second signal, the
/// command exits at once with 128 + the signal.
fn watch_ctrl_c<A: ActionType>(
    accepted: Arc<Mutex<Option<Arc<ClientGoalHandle<A>>>>>,
    timeout: kairos::time::Duration,
) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("install the Ctrl-C handler")?;
    std::thread::Builder::new()
        .name("kairos-send-goal-signal".into())
        .spawn(move || {
            let mut canceling = false;
            for signal in signals.forever() {
                let goal = accepted.lock().unwrap_or_else(|e| e.into_inner()).clone();
                match goal {
                    Some(goal) if !canceling => {
                        canceling = true;
                        eprintln!("Canceling goal...");
                        if let Err(e) = goal.cancel(timeout) {
                            eprintln!("the server did not cancel the goal: {e}");
                            std::process::exit(128 + signal);
                        }
                    }
                    _ => std::process::exit(128 + signal),
                }
            }
        })
        .context("start the Ctrl-C handler thread")?;
    Ok(())
}

fn to_json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
}

fn indent(text: &str) -> String {
    text.trim_end_matches(['\n', '-'])
        .trim_end()
        .lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn capitalized(label: &str) -> String {
    let mut chars = label.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
