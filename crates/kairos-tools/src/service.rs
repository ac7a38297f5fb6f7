//! `kairos service list|call`, and a hidden AddTwoInts server for demos and tests.

use super::values::parse_values;
use super::{
    ExecGuard, GraphArgs, Next, cli_node, gather, names_and_types, next_before, open, print_names,
    render, resolve_topic, seconds,
};
use anyhow::anyhow;
use clap::Subcommand;
use kairos_zenoh::graph_key::EntityKind;
use kairos_zenoh::interfaces;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, Subcommand)]
pub enum ServiceCmd {
    /// Services in the graph.
    List {
        #[arg(short = 't', long = "show-types")]
        show_types: bool,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Call a service.
    Call {
        service: String,
        /// e.g. example_interfaces/srv/AddTwoInts
        service_type: String,
        /// The request, e.g. "{a: 2, b: 3}".
        #[arg(default_value = "{}")]
        values: String,
        /// Seconds to wait for the server and then for the response.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        #[arg(long)]
        json: bool,
    },
    /// Serve example_interfaces/srv/AddTwoInts (a kairos service), for demos and tests.
    #[command(hide = true)]
    ServeAddTwoInts {
        #[arg(default_value = "/add_two_ints")]
        service: String,
        /// Exit after this many requests.
        #[arg(long, default_value_t = 1)]
        count: u64,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
    },
}

pub fn service(cmd: ServiceCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ServiceCmd::List { show_types, graph } => {
            let transport = open()?;
            let tokens = gather(&transport, &graph)?;
            print_names(
                &names_and_types(&tokens, &[EntityKind::Service]),
                show_types,
                graph.json,
            )?;
        }
        ServiceCmd::Call {
            service,
            service_type,
            values,
            timeout,
            json,
        } => {
            let transport = open()?;
            let codec = interfaces::service_by_name(&service_type)
                .ok_or_else(|| anyhow!("kairos does not know the service type {service_type}"))?;
            let node = cli_node(&transport, "call")?;
            let request = parse_values(&values)?;
            let timeout = kairos::time::Duration::from(seconds("--timeout", timeout)?);
            let response = codec
                .call_json(
                    &transport,
                    &node,
                    &resolve_topic(&service),
                    request,
                    timeout,
                )
                .map_err(|e| anyhow!("{e}"))?;
            println!("{}", render(&response, json));
        }
        ServiceCmd::ServeAddTwoInts {
            service,
            count,
            timeout,
        } => return serve_add_two_ints(&service, count, timeout),
    }
    Ok(ExitCode::SUCCESS)
}

fn serve_add_two_ints(service: &str, count: u64, timeout: f64) -> anyhow::Result<ExitCode> {
    use kairos_zenoh::msg::{AddTwoIntsRequest, AddTwoIntsResponse};
    let transport = open()?;
    let node = cli_node(&transport, "add_two_ints_server")?;
    let (tx, rx) = mpsc::channel();
    let server = node.create_service(service, move |r: AddTwoIntsRequest| {
        let _ = tx.send(());
        AddTwoIntsResponse { sum: r.a + r.b }
    })?;
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    let guard = ExecGuard(exec);
    println!("serving {service}");
    let deadline = Instant::now() + seconds("--timeout", timeout)?;
    for served in 0..count {
        match next_before(&rx, deadline) {
            Next::Item(()) => {}
            Next::Interrupted => return Ok(ExitCode::SUCCESS),
            Next::TimedOut | Next::Closed => {
                eprintln!("served {served} of {count} requests before the {timeout}s timeout");
                return Ok(ExitCode::from(1));
            }
        }
    }
    // The executor's shutdown waits for the callback in progress, whose end hands the
    // reply to zenoh; closing the session then flushes it.
    drop(guard);
    drop(server);
    transport.close(Duration::from_secs(5))?;
    println!("served {count}");
    Ok(ExitCode::SUCCESS)
}
