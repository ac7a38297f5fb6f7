//! `kairos service list|call`, and a hidden AddTwoInts server for demos and tests.

use super::values::parse_values;
use super::{
    ExecGuard, GraphArgs, Next, absolute_name, cli_node, gather, names_and_types, next_before,
    open, print_names, render, seconds,
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
        /// Publish the calls on `<service>/_service_event` (service introspection).
        #[arg(long, value_enum, default_value_t = Introspection::Off)]
        introspection: Introspection,
        /// With --introspection: serve only once a subscriber in another process hears the
        /// events (a recorder), waiting at most --timeout.
        #[arg(long)]
        wait_event_subscriber: bool,
    },
}

/// What a service publishes about its calls (rclpy's `ServiceIntrospectionState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Introspection {
    Off,
    Metadata,
    Contents,
}

impl From<Introspection> for kairos::graph::IntrospectionState {
    fn from(value: Introspection) -> Self {
        match value {
            Introspection::Off => Self::Off,
            Introspection::Metadata => Self::Metadata,
            Introspection::Contents => Self::Contents,
        }
    }
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
                    &absolute_name(&service),
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
            introspection,
            wait_event_subscriber,
        } => {
            let events = (introspection, wait_event_subscriber);
            return serve_add_two_ints(&service, count, timeout, events);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn serve_add_two_ints(
    service: &str,
    count: u64,
    timeout: f64,
    (introspection, wait_event_subscriber): (Introspection, bool),
) -> anyhow::Result<ExitCode> {
    use kairos_zenoh::msg::{AddTwoIntsRequest, AddTwoIntsResponse};
    let transport = open()?;
    let node = cli_node(&transport, "add_two_ints_server")?;
    let (tx, rx) = mpsc::channel();
    let server = node.create_service(service, move |r: AddTwoIntsRequest| {
        let _ = tx.send(());
        AddTwoIntsResponse { sum: r.a + r.b }
    })?;
    let deadline = Instant::now() + seconds("--timeout", timeout)?;
    if introspection != Introspection::Off {
        let qos = kairos::graph::Qos::keep_last(100);
        server.configure_introspection(&node.clock(), qos, introspection.into())?;
        let topic = kairos::graph::event_topic(server.name());
        if wait_event_subscriber
            && !transport.wait_remote_subscription(
                &topic,
                deadline.saturating_duration_since(Instant::now()),
            )?
        {
            eprintln!("no subscriber of {topic} within the {timeout}s timeout");
            return Ok(ExitCode::from(1));
        }
    }
    let exec = kairos::exec::Executor::single_threaded();
    exec.add_node(&node)?;
    let spinner = exec.clone();
    std::thread::spawn(move || spinner.spin());
    let guard = ExecGuard(exec);
    println!("serving {service}");
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
