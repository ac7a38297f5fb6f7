//! `kairos router`: a Zenoh router with rmw_zenoh's configuration, which counts the
//! connections it refuses and the messages its access rules drop.
//!
//! Zenoh 1.10 refuses a peer that fails the TLS handshake (a certificate from another CA,
//! an expired one, none, or bytes that are no TLS at all) with a warning in its log and
//! nothing else: no counter, no event. The router shows those warnings as kairos lines
//! (the `log` bridge) and counts them through the bridge's tap, by reason; whenever the
//! count has grown, it says so once a second at most, as one line on stderr:
//! `refused 12 connections at the TLS handshake: 8 tls handshake eof, 4 ...`. The warning
//! it counts is zenoh's own text (`zenoh_link_tls`'s accept loop); the security tests pin
//! it, so a zenoh that words it otherwise fails them rather than counting nothing.

use anyhow::anyhow;
use clap::Args;
use kairos::logging::{Logger, Severity};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

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
    kairos::logging::set_log_tap(count_refusal);
    let mut config = kairos_zenoh::config::router_config()?;
    let ruled = kairos_zenoh::access::AccessRules::of(&config).enabled();
    kairos_zenoh::access_report::read_own_counters(&mut config);
    if !args.listen.is_empty() {
        let endpoints = serde_json::to_string(&args.listen)?;
        config
            .insert_json5("listen/endpoints", &endpoints)
            .map_err(|e| anyhow!("--listen {endpoints}: {e}"))?;
    }
    use zenoh::Wait;
    let session = zenoh::open(config).wait().map_err(|e| anyhow!("{e}"))?;
    // Where it listens, with the ports the OS chose for `:0` endpoints: a launcher or a
    // test reads its port here rather than handing it one that could be taken first.
    let locators: Vec<String> = session
        .info()
        .locators()
        .wait()
        .iter()
        .map(ToString::to_string)
        .collect();
    let on = if locators.is_empty() {
        String::new()
    } else {
        format!(" on {}", locators.join(", "))
    };
    println!(
        "kairos router {} running{on}; stop it with Ctrl-C",
        session.zid()
    );
    // A router runs until it is stopped (a signal ends the process); meanwhile it reports
    // what it refused.
    let logger = Logger::new("kairos_router");
    let (mut reported, mut dropped, mut unreadable) = (0, 0, false);
    loop {
        std::thread::sleep(REPORT_PERIOD);
        let grown = {
            let refusals = refusals();
            (refusals.total != reported).then(|| {
                reported = refusals.total;
                refusals.summary()
            })
        };
        if let Some(summary) = grown {
            logger.warn(summary);
        }
        if ruled {
            match kairos_zenoh::access_report::network_drops(&session, REPORT_PERIOD) {
                Ok(drops) => {
                    let total: u64 = drops.iter().map(|d| d.count).sum();
                    if total != dropped {
                        dropped = total;
                        logger.warn(drop_summary(&drops));
                    }
                }
                Err(reason) if !unreadable => {
                    unreadable = true;
                    logger.warn(format!("cannot count what access control drops: {reason}"));
                }
                Err(_) => {}
            }
        }
    }
}

/// The access-control drops in one line.
fn drop_summary(drops: &[kairos_zenoh::access_report::Dropped]) -> String {
    let total: u64 = drops.iter().map(|d| d.count).sum();
    let parts: Vec<String> = drops.iter().map(ToString::to_string).collect();
    format!(
        "access control dropped {total} messages: {}",
        parts.join(", ")
    )
}

/// How often the router may say that its count of refused connections grew.
const REPORT_PERIOD: Duration = Duration::from_secs(1);

/// Distinct reasons counted apart; beyond them, a refusal counts as "other".
const MAX_REASONS: usize = 16;

/// What zenoh 1.10's TLS accept loop appends to each failed accept (its warning's end).
const ACCEPT_FAILED: &str = ". Hint: increase the system open file limit.";

static REFUSALS: Mutex<Refusals> = Mutex::new(Refusals {
    total: 0,
    by_reason: BTreeMap::new(),
});

/// The count; a tap that panicked while holding it left a count still worth reading.
fn refusals() -> MutexGuard<'static, Refusals> {
    REFUSALS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The connections refused at the TLS handshake since the router started.
#[derive(Debug)]
struct Refusals {
    total: u64,
    by_reason: BTreeMap<String, u64>,
}

impl Refusals {
    fn count(&mut self, reason: &str) {
        self.total += 1;
        let known = self.by_reason.len() < MAX_REASONS || self.by_reason.contains_key(reason);
        let reason = if known { reason } else { "other" };
        *self.by_reason.entry(reason.to_owned()).or_default() += 1;
    }

    fn summary(&self) -> String {
        let reasons: Vec<String> = self
            .by_reason
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        format!(
            "refused {} connections at the TLS handshake: {}",
            self.total,
            reasons.join(", ")
        )
    }
}

/// The log tap: counts zenoh's warning for a failed TLS accept, by its reason.
fn count_refusal(target: &str, severity: Severity, message: &std::fmt::Arguments<'_>) {
    if severity != Severity::Warn || !target.starts_with("zenoh_link_tls") {
        return;
    }
    let message = message.to_string();
    if let Some(reason) = message.strip_suffix(ACCEPT_FAILED) {
        refusals().count(reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_reason_and_reasons_are_bounded() {
        let mut refusals = Refusals {
            total: 0,
            by_reason: BTreeMap::new(),
        };
        refusals.count("tls handshake eof");
        refusals.count("tls handshake eof");
        for i in 0..MAX_REASONS + 3 {
            refusals.count(&format!("reason {i}"));
        }
        assert_eq!(refusals.total, 2 + MAX_REASONS as u64 + 3);
        assert_eq!(refusals.by_reason.len(), MAX_REASONS + 1);
        assert_eq!(refusals.by_reason["other"], 4);
        assert!(
            refusals
                .summary()
                .starts_with("refused 21 connections at the TLS handshake: "),
            "{}",
            refusals.summary()
        );
        assert!(refusals.summary().contains("2 tls handshake eof"));
    }
}
