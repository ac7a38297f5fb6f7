//! `kairos node list`.

use super::{GraphArgs, gather, node_name, open};
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Nodes in the graph.
    List(GraphArgs),
}

pub fn node(cmd: NodeCmd) -> anyhow::Result<ExitCode> {
    let NodeCmd::List(args) = cmd;
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
