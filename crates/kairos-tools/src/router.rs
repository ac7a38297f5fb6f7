//! `kairos router`: a Zenoh router with rmw_zenoh's configuration.

use anyhow::anyhow;
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RouterArgs {
    /// Endpoints to listen on (default rmw_zenoh's: tcp/[::]:7447).
    #[arg(long)]
    listen: Vec<String>,
}

pub fn router(args: RouterArgs) -> anyhow::Result<ExitCode> {
    // Zenoh's own warnings (a peer refused at the TLS handshake, and why) as kairos lines:
    // a router makes no context, which would install the bridge.
    kairos::logging::install_log_bridge();
    let mut config = kairos_zenoh::config::router_config()?;
    if !args.listen.is_empty() {
        let endpoints = serde_json::to_string(&args.listen)?;
        config
            .insert_json5("listen/endpoints", &endpoints)
            .map_err(|e| anyhow!("--listen {endpoints}: {e}"))?;
    }
    use zenoh::Wait;
    let session = zenoh::open(config).wait().map_err(|e| anyhow!("{e}"))?;
    println!(
        "kairos router {} running; stop it with Ctrl-C",
        session.zid()
    );
    // A router runs until it is stopped (a signal ends the process).
    loop {
        std::thread::park();
    }
}
