//! What access control did to a process, where anyone can ask: its rules in a line, the
//! declarations they denied, and the messages zenoh dropped on the way in or out.
//!
//! What it promises:
//! - **every denial is counted where it happens.** A declaration this process's rules
//!   deny is recorded by [`AccessRules`] (the program got an error, or the runtime's own
//!   entity was declared anyway). A message that a *network's* rules drop (another
//!   process's, or the router's) is counted by zenoh itself: with zenoh's `stats`, its
//!   access-control interceptor counts every message it drops, per link, with the peer's
//!   id and certificate name. A process reads those counters from its own admin space
//!   (`@/<zid>/<whatami>/metrics`, [`network_drops`]), so the count is zenoh's, not an
//!   estimate;
//! - **the admin space stays private.** zenoh's admin space is off by default; a
//!   configuration with access rules gets it on, read-only ([`read_own_counters`]), so the
//!   process can read its counters. A remote query of it is a message like any other:
//!   the same rules apply, and the rules `kairos security generate-configs` writes (deny by
//!   default, no rule on `@/**`) keep it to the process itself;
//! - **a running process answers for itself.** Each transport answers
//!   `@kairos/<domain>/access/<zid>` with its [`AccessReport`] (JSON), the key space kairos
//!   processes already share (see [`crate::shared_waits`]); `kairos node info` asks the
//!   process of the node it shows.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use zenoh::{Session, Wait};

use crate::access::AccessRules;
use crate::shared_waits::PRIVATE_SPACE;

/// A declaration the rules denied, and how often it was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// `publisher`, `subscription`, `service` or `client`.
    pub kind: String,
    /// The topic or service.
    pub name: String,
    /// Its key expression.
    pub key: String,
    /// The deny rule that matched; empty when no allow rule covered it (default deny).
    pub rule: String,
    /// True when the program got an error; false for the runtime's own entities, which
    /// are declared anyway and whose traffic zenoh drops.
    pub refused: bool,
    /// How many times it was asked for.
    pub count: u64,
}

/// Whether zenoh dropped a message on its way in (received from a peer) or out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Received from the peer, dropped before any subscriber or queryable saw it.
    Received,
    /// Dropped before it was sent to the peer.
    Sent,
}

/// Messages of one kind that zenoh's access control dropped on the link with one peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// Received or sent.
    pub direction: Direction,
    /// zenoh's name of the message: `put`, `query`, `reply`, `declare`, ...
    pub message: String,
    /// The peer's certificate common name (its enclave), else its zenoh id.
    pub peer: String,
    /// How many.
    pub count: u64,
}

impl std::fmt::Display for Dropped {
    /// `12 put received from /tl/talker`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let way = match self.direction {
            Direction::Received => "received from",
            Direction::Sent => "to be sent to",
        };
        write!(f, "{} {} {way} {}", self.count, self.message, self.peer)
    }
}

/// What access control did to one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessReport {
    /// `enclave /robot/driver`, or `this process` without a certificate.
    pub identity: String,
    /// The rules in a line ([`AccessRules::describe`]).
    pub rules: String,
    /// The declarations denied.
    pub denials: Vec<Denial>,
    /// The messages zenoh dropped, by direction, kind and peer.
    pub dropped: Vec<Dropped>,
    /// Why `dropped` could not be read, when it could not.
    pub dropped_unknown: Option<String>,
}

impl AccessReport {
    /// The report of a process with `rules` on `session`.
    pub fn of(rules: &AccessRules, session: &Session) -> Self {
        let (dropped, dropped_unknown) = if rules.enabled() {
            match network_drops(session, OWN_COUNTERS_TIMEOUT) {
                Ok(dropped) => (dropped, None),
                Err(reason) => (Vec::new(), Some(reason)),
            }
        } else {
            (Vec::new(), None)
        };
        Self {
            identity: rules.identity().to_owned(),
            rules: rules.describe(),
            denials: rules.denials(),
            dropped,
            dropped_unknown,
        }
    }

    /// The report as lines for a person, each starting with two spaces.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("  Rules: {}", self.rules)];
        for denial in &self.denials {
            let rule = if denial.rule.is_empty() {
                "no allow rule covers it".to_owned()
            } else {
                format!("rule '{}' denies it", denial.rule)
            };
            let outcome = if denial.refused {
                "the program got an error"
            } else {
                "declared anyway, zenoh drops its traffic"
            };
            lines.push(format!(
                "  Denied: {} {} ({}x): {rule}; {outcome}",
                denial.kind, denial.name, denial.count
            ));
        }
        for dropped in &self.dropped {
            lines.push(format!("  Dropped by access control: {dropped}"));
        }
        if let Some(reason) = &self.dropped_unknown {
            lines.push(format!("  Dropped by access control: unknown ({reason})"));
        }
        lines
    }
}

/// How long the CLI waits for a process's report, by default.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a process answering waits for its own admin space: well inside
/// [`QUERY_TIMEOUT`], so that a slow admin space makes a report whose drops are unknown
/// rather than no report at all.
pub const OWN_COUNTERS_TIMEOUT: Duration = Duration::from_secs(2);

/// The key a transport of `zid` answers its report on.
pub fn report_key(domain: u32, zid: &str) -> String {
    format!("{PRIVATE_SPACE}/{domain}/access/{zid}")
}

/// Turns zenoh's admin space on, read-only, in a configuration with access rules, so the
/// process can read its own drop counters; a configuration that sets the admin space on
/// itself is left as it is.
pub fn read_own_counters(config: &mut zenoh::Config) {
    let acl_on = config
        .get_json("access_control/enabled")
        .is_ok_and(|v| v == "true");
    let admin_on = config
        .get_json("adminspace/enabled")
        .is_ok_and(|v| v == "true");
    if acl_on && !admin_on {
        for (key, value) in [
            ("adminspace/enabled", "true"),
            ("adminspace/permissions/read", "true"),
            ("adminspace/permissions/write", "false"),
        ] {
            // The keys are zenoh's own: a failure would be a zenoh that renamed them, and
            // the process then reports its drops as unknown rather than not starting.
            let _ = config.insert_json5(key, value);
        }
    }
}

/// The messages zenoh's access control dropped on this session's links so far (links
/// since closed included), read from the session's own admin space.
pub fn network_drops(session: &Session, timeout: Duration) -> Result<Vec<Dropped>, String> {
    let selector = format!(
        "@/{}/*/metrics?compression=false;descriptors=false;per_link=false;per_key=false;disconnected=true",
        session.zid()
    );
    let replies = session
        .get(selector)
        .timeout(timeout)
        .wait()
        .map_err(|e| format!("the admin space did not take the query: {e}"))?;
    let deadline = Instant::now() + timeout;
    let mut text = None;
    while let Ok(Some(reply)) =
        replies.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        if let Ok(sample) = reply.result() {
            text = Some(String::from_utf8_lossy(&sample.payload().to_bytes()).into_owned());
            break;
        }
    }
    let text = text.ok_or_else(|| {
        "the session's admin space did not answer; is `adminspace` off in its configuration?"
            .to_owned()
    })?;
    Ok(access_control_drops(&text))
}

/// The access-control drops in zenoh's metrics (OpenMetrics text): the `_count` of each
/// per-transport series of `zenoh_{rx,tx}_network_message_dropped_payload` whose `reason`
/// is `access-control`, summed by direction, message and peer. (zenoh also writes a sum
/// over all transports under the name without `_per_transport`, which would count each
/// drop twice, and which names no peer.)
pub fn access_control_drops(metrics: &str) -> Vec<Dropped> {
    let mut sums: BTreeMap<(Direction, String, String), u64> = BTreeMap::new();
    for line in metrics.lines() {
        let Some((name, labels, value)) = series(line) else {
            continue;
        };
        let name = name.strip_prefix("zenoh_").unwrap_or(name);
        let direction = match name.split_once('_') {
            Some(("rx", rest)) if is_dropped_count(rest) => Direction::Received,
            Some(("tx", rest)) if is_dropped_count(rest) => Direction::Sent,
            _ => continue,
        };
        let label = |key: &str| {
            labels
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        };
        if label("reason") != Some("access-control") {
            continue;
        }
        let Ok(count) = value.parse::<f64>() else {
            continue;
        };
        if count < 1.0 {
            continue;
        }
        let peer = label("remote_cn")
            .or_else(|| label("remote_zid"))
            .unwrap_or("an unknown peer");
        let message = label("message").unwrap_or("message");
        *sums
            .entry((direction, message.to_owned(), peer.to_owned()))
            .or_default() += count as u64;
    }
    sums.into_iter()
        .map(|((direction, message, peer), count)| Dropped {
            direction,
            message,
            peer,
            count,
        })
        .collect()
}

/// The per-transport count of `network_message_dropped_payload`, whatever unit suffix
/// zenoh gives it.
fn is_dropped_count(rest: &str) -> bool {
    rest.starts_with("network_message_dropped_payload_per_transport") && rest.ends_with("_count")
}

/// A sample's labels, in the order written.
type Labels = Vec<(String, String)>;

/// One OpenMetrics sample line: its name, its labels and its value.
fn series(line: &str) -> Option<(&str, Labels, &str)> {
    if line.starts_with('#') {
        return None;
    }
    let (name, rest) = match line.find('{') {
        Some(open) => (&line[..open], &line[open + 1..]),
        None => {
            let (name, value) = line.split_once(' ')?;
            return Some((name, Vec::new(), value.split_whitespace().next()?));
        }
    };
    let mut labels = Vec::new();
    let mut chars = rest.char_indices().peekable();
    let mut key = String::new();
    let end = loop {
        let (i, c) = chars.next()?;
        match c {
            '}' => break i,
            ',' | ' ' => {}
            '=' => {
                if chars.next()?.1 != '"' {
                    return None;
                }
                let mut value = String::new();
                loop {
                    match chars.next()?.1 {
                        '"' => break,
                        '\\' => value.push(chars.next()?.1),
                        c => value.push(c),
                    }
                }
                labels.push((std::mem::take(&mut key), value));
            }
            c => key.push(c),
        }
    };
    let value = rest[end + 1..].split_whitespace().next()?;
    Some((name, labels, value))
}

/// Queries being answered at once, at most; more are answered with an error, so a flood of
/// queries costs no more than this many threads.
const MAX_ANSWERING: usize = 4;

/// Answers `@kairos/<domain>/access/<zid>` with what `report` says when asked (`None`:
/// the process is closing). Each answer is made on a thread of its own: reading the
/// admin space is a query, which a zenoh callback must not wait for.
pub(crate) fn serve(
    session: &Session,
    domain: u32,
    report: impl Fn() -> Option<AccessReport> + Send + Sync + 'static,
) -> zenoh::Result<zenoh::query::Queryable<()>> {
    let key = report_key(domain, &session.zid().to_string());
    let report = std::sync::Arc::new(report);
    let answering = std::sync::Arc::new(AtomicUsize::new(0));
    session
        .declare_queryable(key.clone())
        .callback(move |query| {
            if answering.fetch_add(1, Ordering::AcqRel) >= MAX_ANSWERING {
                answering.fetch_sub(1, Ordering::AcqRel);
                let _ = query
                    .reply_err("busy: too many questions at once; ask again")
                    .wait();
                return;
            }
            let (report, done, key) = (report.clone(), answering.clone(), key.clone());
            let spawned = std::thread::Builder::new()
                .name("kairos-access-report".into())
                .spawn(move || {
                    if let Some(report) = report() {
                        let json = serde_json::to_vec(&report).unwrap_or_default();
                        let _ = query.reply(&key, json).wait();
                    }
                    done.fetch_sub(1, Ordering::AcqRel);
                });
            if spawned.is_err() {
                // No thread: the query goes unanswered and its asker times out.
                answering.fetch_sub(1, Ordering::AcqRel);
            }
        })
        .wait()
}

/// The report of the process whose session is `zid`, asked through `session`.
pub fn query(
    session: &Session,
    domain: u32,
    zid: &str,
    timeout: Duration,
) -> Result<AccessReport, String> {
    let replies = session
        .get(report_key(domain, zid))
        .timeout(timeout)
        .wait()
        .map_err(|e| format!("cannot ask process {zid}: {e}"))?;
    let deadline = Instant::now() + timeout;
    // The first reply is the process's (one queryable per zid).
    if let Ok(Some(reply)) =
        replies.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        return match reply.result() {
            Ok(sample) => serde_json::from_slice(&sample.payload().to_bytes())
                .map_err(|e| format!("process {zid} answered what is no access report: {e}")),
            Err(e) => Err(format!(
                "process {zid} answered with an error: {}",
                String::from_utf8_lossy(&e.payload().to_bytes())
            )),
        };
    }
    Err(format!(
        "process {zid} did not answer within {timeout:?} (not a kairos process, or the access rules keep @kairos from it)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_control_drops_are_summed_by_direction_message_and_peer() {
        // As zenoh 1.10 writes them (labels shortened where they do not matter).
        let metrics = r#"# TYPE zenoh_rx_network_message_dropped_payload_bytes histogram
zenoh_rx_network_message_dropped_payload_bytes_count{local_id="16",local_whatami="peer",priority="control",message="declare",protocol="",reason="access-control"} 6
zenoh_rx_network_message_dropped_payload_per_transport_bytes_count{local_id="16",local_whatami="peer",priority="control",message="put",protocol="",reason="access-control",remote_zid="1c48",remote_whatami="peer",remote_group="",remote_cn="/tl/talker",disconnected="false"} 3
zenoh_rx_network_message_dropped_payload_per_transport_bytes_sum{local_id="16",message="put",reason="access-control",remote_zid="1c48",remote_cn="/tl/talker"} 300.0
zenoh_rx_network_message_dropped_payload_per_transport_bytes_bucket{local_id="16",le="64.0",message="put",reason="access-control",remote_zid="1c48",remote_cn="/tl/talker"} 3
zenoh_rx_network_message_dropped_payload_per_transport_bytes_count{local_id="16",priority="data_high",message="put",reason="access-control",remote_zid="bb",remote_cn="/tl/talker",disconnected="true"} 4
zenoh_tx_network_message_dropped_payload_per_transport_bytes_count{local_id="16",priority="data",message="query",protocol="",reason="access-control",remote_zid="1cae",remote_whatami="router",remote_group="",remote_cn="",disconnected="false"} 1
zenoh_tx_network_message_dropped_payload_per_transport_bytes_count{remote_zid="cc",message="put",reason="congestion"} 9
zenoh_rx_network_message_dropped_payload_per_transport_bytes_count{remote_zid="dd",message="put",reason="access-control"} 0
zenoh_rx_network_message_payload_per_transport_bytes_count{remote_zid="aa",message="put"} 1000
# EOF
"#;
        assert_eq!(
            access_control_drops(metrics),
            vec![
                Dropped {
                    direction: Direction::Received,
                    message: "put".into(),
                    peer: "/tl/talker".into(),
                    count: 7,
                },
                Dropped {
                    direction: Direction::Sent,
                    message: "query".into(),
                    peer: "1cae".into(),
                    count: 1,
                },
            ]
        );
    }

    #[test]
    fn label_values_may_hold_commas_quotes_and_braces() {
        let (name, labels, value) = series(r#"x_count{a="1,2",b="say \"}\"",c=""} 5"#).unwrap();
        assert_eq!(name, "x_count");
        assert_eq!(
            labels,
            vec![
                ("a".into(), "1,2".into()),
                ("b".into(), "say \"}\"".into()),
                ("c".into(), "".into())
            ]
        );
        assert_eq!(value, "5");
        assert!(series("# HELP x").is_none());
        assert!(series("broken{a=1} 2").is_none());
        assert!(series("unterminated{a=\"1} 2").is_none());
    }

    #[test]
    fn the_admin_space_is_turned_on_read_only_only_where_access_rules_are() {
        let mut plain = zenoh::Config::default();
        read_own_counters(&mut plain);
        assert_eq!(plain.get_json("adminspace/enabled").unwrap(), "false");
        let mut ruled = zenoh::Config::default();
        ruled
            .insert_json5("access_control/enabled", "true")
            .unwrap();
        read_own_counters(&mut ruled);
        assert_eq!(ruled.get_json("adminspace/enabled").unwrap(), "true");
        assert_eq!(
            ruled.get_json("adminspace/permissions/write").unwrap(),
            "false"
        );
    }
}
