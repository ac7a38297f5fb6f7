//! `kairos node list` and `kairos node info`.
//!
//! `info` prints what `ros2 node info` prints (the node's topics, services and actions
//! with their types) and, for a node of a kairos process, what access control did to that
//! process: the declarations its rules denied and the messages zenoh dropped on its links
//! (see `kairos_zenoh::access_report`), asked of the process itself.

use super::{GraphArgs, endpoint_type, gather, node_name, open, seconds};
use anyhow::bail;
use clap::{Args, Subcommand};
use kairos_zenoh::access_report::{self, AccessReport};
use kairos_zenoh::graph_key::{EntityKind, Token};
use std::collections::BTreeMap;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Nodes in the graph.
    List(GraphArgs),
    /// A node's topics, services and actions, and what access control denied its process.
    Info(InfoArgs),
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The node's full name, e.g. /talker.
    node: String,
    /// Seconds to wait for the node to be in the graph.
    #[arg(long, default_value_t = 5.0)]
    spin_time: f64,
    /// Seconds to wait for the node's process to say what access control did.
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
    /// Names starting with `_` (an action's own topics and services) too.
    #[arg(long)]
    include_hidden: bool,
    #[arg(long)]
    json: bool,
}

pub fn node(cmd: NodeCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        NodeCmd::List(args) => list(args),
        NodeCmd::Info(args) => info(args),
    }
}

fn list(args: GraphArgs) -> anyhow::Result<ExitCode> {
    let transport = open()?;
    let tokens = gather(&transport, &args)?;
    // A node's entities may come before its own token: each brings its node.
    let mut nodes: Vec<String> = tokens.iter().map(node_name).collect();
    nodes.sort();
    nodes.dedup();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&nodes)?);
    } else {
        for node in nodes {
            println!("{node}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The headings of `ros2 node info`, in its order, with the JSON key of each.
const SECTIONS: [(&str, &str); 6] = [
    ("Subscribers", "subscribers"),
    ("Publishers", "publishers"),
    ("Service Servers", "service_servers"),
    ("Service Clients", "service_clients"),
    ("Action Servers", "action_servers"),
    ("Action Clients", "action_clients"),
];

const SEND_GOAL: &str = "/_action/send_goal";

fn info(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let node = super::absolute_name(&args.node);
    let timeout = seconds("--timeout", args.timeout)?;
    let transport = open()?;
    let graph = GraphArgs {
        spin_time: args.spin_time,
        wait_for: Some(node.clone()),
        json: args.json,
    };
    let tokens: Vec<Token> = gather(&transport, &graph)?
        .into_iter()
        .filter(|t| node_name(t) == node)
        .collect();
    if tokens.is_empty() {
        bail!(
            "Unable to find node '{node}' within {} s (kairos node list shows the nodes)",
            args.spin_time
        );
    }
    let sections = sections(&tokens, args.include_hidden);
    let mut zids: Vec<&str> = tokens.iter().map(|t| t.node.zid.as_str()).collect();
    zids.sort_unstable();
    zids.dedup();
    let reports: Vec<(String, Result<AccessReport, String>)> = zids
        .iter()
        .map(|zid| {
            let report =
                access_report::query(transport.session(), transport.domain(), zid, timeout);
            (zid.to_string(), report)
        })
        .collect();
    if args.json {
        let mut value = serde_json::json!({ "node": node });
        for ((_, key), entries) in SECTIONS.iter().zip(&sections) {
            let list: Vec<_> = entries
                .iter()
                .map(|(name, types)| serde_json::json!({"name": name, "types": types}))
                .collect();
            value[*key] = list.into();
        }
        value["access"] = reports
            .iter()
            .map(|(zid, report)| match report {
                Ok(report) => serde_json::json!({"process": zid, "report": report}),
                Err(reason) => serde_json::json!({"process": zid, "unknown": reason}),
            })
            .collect::<Vec<_>>()
            .into();
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{node}");
    for ((heading, _), entries) in SECTIONS.iter().zip(&sections) {
        println!("  {heading}:");
        for (name, types) in entries {
            println!("    {name}: {}", types.join(", "));
        }
    }
    for (zid, report) in &reports {
        match report {
            Ok(report) => {
                println!("  Access control ({}, process {zid}):", report.identity);
                for line in report.lines() {
                    println!("  {line}");
                }
            }
            Err(reason) => println!("  Access control (process {zid}): unknown: {reason}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

type Entries = BTreeMap<String, Vec<String>>;

/// The node's entities under `ros2 node info`'s six headings. An action is its
/// `_action/send_goal` service (server) or client; its own topics and services, like
/// every name with a part starting with `_`, are hidden unless asked for.
fn sections(tokens: &[Token], include_hidden: bool) -> [Entries; 6] {
    let mut sections: [Entries; 6] = Default::default();
    for token in tokens {
        let Some(endpoint) = &token.endpoint else {
            continue;
        };
        let ty = endpoint_type(token);
        let action = endpoint.name.strip_suffix(SEND_GOAL);
        let (index, name, ty) = match (token.kind, action) {
            (EntityKind::Service, Some(action)) => (4, action, ty.trim_end_matches("_SendGoal")),
            (EntityKind::Client, Some(action)) => (5, action, ty.trim_end_matches("_SendGoal")),
            _ => {
                let hidden = endpoint.name.split('/').any(|part| part.starts_with('_'));
                if hidden && !include_hidden {
                    continue;
                }
                let index = match token.kind {
                    EntityKind::Subscription => 0,
                    EntityKind::Publisher => 1,
                    EntityKind::Service => 2,
                    EntityKind::Client => 3,
                    EntityKind::Node => continue,
                };
                (index, endpoint.name.as_str(), ty.as_str())
            }
        };
        let types = sections[index].entry(name.to_owned()).or_default();
        if !types.iter().any(|t| t == ty) {
            types.push(ty.to_owned());
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(kind: &str, name: &str, dds_type: &str) -> Token {
        let name = name.replace('/', "%");
        Token::parse(&format!(
            "@ros2_lv/0/aa/0/1/{kind}/%/%/fib/{name}/{dds_type}/RIHS01_00/::,7:,:,:,,"
        ))
        .unwrap()
    }

    #[test]
    fn sections_are_ros2s_with_actions_by_their_send_goal_and_hidden_names_left_out() {
        let goal = "example_interfaces::action::dds_::Fibonacci_SendGoal_";
        let tokens = [
            token("MS", "/cmd", "std_msgs::msg::dds_::String_"),
            token("MP", "/out", "std_msgs::msg::dds_::String_"),
            token("MP", "/out", "std_msgs::msg::dds_::Int32_"),
            token("SS", "/fibonacci/_action/send_goal", goal),
            token(
                "SS",
                "/fibonacci/_action/cancel_goal",
                "action_msgs::srv::dds_::CancelGoal_",
            ),
            token(
                "MP",
                "/fibonacci/_action/feedback",
                "example_interfaces::action::dds_::Fibonacci_FeedbackMessage_",
            ),
            token("SC", "/other/_action/send_goal", goal),
            token(
                "SS",
                "/fib/get_parameters",
                "rcl_interfaces::srv::dds_::GetParameters_",
            ),
        ];
        let [subs, pubs, servers, clients, action_servers, action_clients] =
            sections(&tokens, false);
        let names = |e: &Entries| {
            e.iter()
                .map(|(n, t)| format!("{n}: {}", t.join(", ")))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&subs), ["/cmd: std_msgs/msg/String"]);
        assert_eq!(
            names(&pubs),
            ["/out: std_msgs/msg/String, std_msgs/msg/Int32"]
        );
        assert_eq!(
            names(&servers),
            ["/fib/get_parameters: rcl_interfaces/srv/GetParameters"]
        );
        assert!(clients.is_empty());
        assert_eq!(
            names(&action_servers),
            ["/fibonacci: example_interfaces/action/Fibonacci"]
        );
        assert_eq!(
            names(&action_clients),
            ["/other: example_interfaces/action/Fibonacci"]
        );
        let [_, pubs, servers, ..] = sections(&tokens, true);
        assert!(pubs.contains_key("/fibonacci/_action/feedback"));
        assert!(servers.contains_key("/fibonacci/_action/cancel_goal"));
    }
}
