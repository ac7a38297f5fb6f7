//! `goals`: every action goal's life, from the client's request to the result it got.
//!
//! A goal's steps at its server and at its client are joined by the goal's UUID, which is
//! the same in every process: the join is exact across processes and hosts, never
//! inferred. For each goal the report says how it ended and where its time went: how long
//! the server took to accept it, how long it ran, how much feedback the server published
//! and the client received, and how long the result took to reach the client after the
//! goal ended. A goal the trace saw only one end of says which end is missing.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::model::{ActionRole, Goal, Model};
use crate::stats::human_ns;

/// Every goal of a trace, per action.
#[derive(Debug, Clone, Serialize)]
pub struct GoalReport {
    /// One entry per action, by name.
    pub actions: Vec<ActionGoals>,
    /// The goal id prefix asked for, if any: the text then lists those goals' steps (the
    /// JSON always has every goal's steps).
    pub only: Option<String>,
}

/// The goals of one action.
#[derive(Debug, Clone, Serialize)]
pub struct ActionGoals {
    /// The action's name (`?` when the trace began after its server and clients).
    pub action: String,
    /// Its servers, as `node (process)`.
    pub servers: Vec<String>,
    /// Its clients, as `node (process)`.
    pub clients: Vec<String>,
    /// Goals per outcome (`succeeded`, `canceled`, `aborted`, `rejected`, `running`, ...).
    pub outcomes: BTreeMap<String, u64>,
    /// Its goals, in the order they began.
    pub goals: Vec<GoalRow>,
}

/// One goal's life.
#[derive(Debug, Clone, Serialize)]
pub struct GoalRow {
    /// Its UUID.
    pub id: String,
    /// The client that sent it, as `node (process)`, if the trace saw that end.
    pub client: Option<String>,
    /// The server that took it, as `node (process)`, if the trace saw that end.
    pub server: Option<String>,
    /// Its first step, since the trace's first event.
    pub start_ns: i64,
    /// How it ended: `succeeded`, `canceled`, `aborted`, `rejected`; or, if the trace
    /// ended first, `running`, `canceling`, `no answer` (sent, never accepted or rejected).
    pub outcome: String,
    /// From the client's request to the client learning the goal was accepted.
    pub accept_ns: Option<i64>,
    /// From the server accepting the goal to its end at the server.
    pub run_ns: Option<i64>,
    /// Feedback messages the server published for it.
    pub feedback_published: u64,
    /// Feedback messages its client received.
    pub feedback_received: u64,
    /// From the goal's end at the server to the result reaching the client (includes any
    /// time the client took to ask).
    pub result_after_end_ns: Option<i64>,
    /// From the client's request to the result reaching it.
    pub total_ns: Option<i64>,
    /// Every step, in trace order.
    pub steps: Vec<StepRow>,
}

/// One step of a goal, placed in the trace.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    /// When, since the trace's first event.
    pub at_ns: i64,
    /// At the server or at the client.
    pub side: ActionRole,
    /// The node (or process) it happened in.
    pub at: String,
    /// What happened.
    pub event: String,
    /// The goal's status after it, by `action_msgs/GoalStatus` name.
    pub status: &'static str,
}

/// `action_msgs/GoalStatus`'s name for `code`.
pub fn status_name(code: i32) -> &'static str {
    match code {
        1 => "accepted",
        2 => "executing",
        3 => "canceling",
        4 => "succeeded",
        5 => "canceled",
        6 => "aborted",
        _ => "unknown",
    }
}

const ENDINGS: [&str; 3] = ["succeeded", "canceled", "aborted"];

/// The goals of `m`; with `only`, just the goals whose id starts with it (and the text
/// then lists their steps).
pub fn report(m: &Model, only: Option<&str>) -> GoalReport {
    let mut actions: BTreeMap<String, ActionGoals> = BTreeMap::new();
    for (i, e) in m.action_endpoints.iter().enumerate() {
        let entry = action_entry(&mut actions, &e.action);
        let label = endpoint_label(m, i);
        let list = match e.role {
            ActionRole::Server => &mut entry.servers,
            ActionRole::Client => &mut entry.clients,
        };
        if !list.contains(&label) {
            list.push(label);
        }
    }
    for goal in &m.goals {
        if only.is_some_and(|prefix| !goal.id.starts_with(prefix)) {
            continue;
        }
        let row = goal_row(m, goal);
        let action = goal
            .steps
            .iter()
            .map(|s| &m.action_endpoints[s.endpoint].action)
            .find(|a| &***a != "?")
            .map_or("?", |a| a);
        let entry = action_entry(&mut actions, action);
        *entry.outcomes.entry(row.outcome.clone()).or_default() += 1;
        entry.goals.push(row);
    }
    if only.is_some() {
        actions.retain(|_, a| !a.goals.is_empty());
    }
    GoalReport {
        actions: actions.into_values().collect(),
        only: only.map(str::to_owned),
    }
}

fn action_entry<'a>(
    actions: &'a mut BTreeMap<String, ActionGoals>,
    action: &str,
) -> &'a mut ActionGoals {
    actions
        .entry(action.to_owned())
        .or_insert_with(|| ActionGoals {
            action: action.to_owned(),
            servers: Vec::new(),
            clients: Vec::new(),
            outcomes: BTreeMap::new(),
            goals: Vec::new(),
        })
}

fn endpoint_label(m: &Model, endpoint: usize) -> String {
    let e = &m.action_endpoints[endpoint];
    let process = m.process_name(e.pid);
    match e.node.or_else(|| m.only_node(e.pid)) {
        Some(n) => format!("{} ({process})", m.nodes[n].name),
        None => process,
    }
}

fn goal_row(m: &Model, goal: &Goal) -> GoalRow {
    let first = m.first_ns.unwrap_or(0);
    let role = |s: &crate::model::GoalStep| m.action_endpoints[s.endpoint].role;
    let at = |side: ActionRole, events: &[&str]| {
        goal.steps
            .iter()
            .find(|s| role(s) == side && events.contains(&s.event.as_str()))
    };
    let count = |side: ActionRole, event: &str| {
        goal.steps
            .iter()
            .filter(|s| role(s) == side && s.event == event)
            .count() as u64
    };
    let between = |a: Option<i64>, b: Option<i64>| Some(b? - a?);
    let sent = at(ActionRole::Client, &["sent"]).map(|s| s.at);
    let client_accepted = at(ActionRole::Client, &["accepted"]).map(|s| s.at);
    let server_accepted = at(ActionRole::Server, &["accepted"]).map(|s| s.at);
    let ended = at(ActionRole::Server, &ENDINGS);
    let result = at(ActionRole::Client, &["result"]);
    let last = goal.steps.last().map(|s| s.event.as_str()).unwrap_or("");
    let outcome = if let Some(end) = ended {
        end.event.clone()
    } else if let Some(r) = result.filter(|r| ENDINGS.contains(&status_name(r.status))) {
        status_name(r.status).to_owned()
    } else if goal.steps.iter().any(|s| s.event == "rejected") {
        "rejected".to_owned()
    } else if goal.steps.iter().any(|s| s.event == "canceling") {
        "canceling".to_owned()
    } else if goal.steps.iter().any(|s| s.event == "accepted") {
        "running".to_owned()
    } else if last == "sent" {
        "no answer".to_owned()
    } else {
        "unknown".to_owned()
    };
    let side_label = |side: ActionRole| {
        goal.steps
            .iter()
            .find(|s| role(s) == side)
            .map(|s| endpoint_label(m, s.endpoint))
    };
    GoalRow {
        id: goal.id.clone(),
        client: side_label(ActionRole::Client),
        server: side_label(ActionRole::Server),
        start_ns: goal.steps.first().map_or(0, |s| s.at - first),
        outcome,
        accept_ns: between(sent, client_accepted),
        run_ns: between(server_accepted, ended.map(|e| e.at)),
        feedback_published: count(ActionRole::Server, "feedback"),
        feedback_received: count(ActionRole::Client, "feedback"),
        result_after_end_ns: between(ended.map(|e| e.at), result.map(|r| r.at)),
        total_ns: between(sent, result.map(|r| r.at)),
        steps: goal
            .steps
            .iter()
            .map(|s| StepRow {
                at_ns: s.at - first,
                side: role(s),
                at: endpoint_label(m, s.endpoint),
                event: s.event.clone(),
                status: status_name(s.status),
            })
            .collect(),
    }
}

fn cell(ns: Option<i64>) -> String {
    ns.map_or_else(|| "-".to_owned(), |v| human_ns(v as f64))
}

impl fmt::Display for GoalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.actions.is_empty() {
            return match &self.only {
                Some(prefix) => writeln!(f, "no goal whose id starts with `{prefix}`"),
                None => writeln!(f, "no action in this trace"),
            };
        }
        for (i, a) in self.actions.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let outcomes: Vec<String> = a
                .outcomes
                .iter()
                .map(|(outcome, n)| format!("{n} {outcome}"))
                .collect();
            writeln!(
                f,
                "action {}: {} goal{}{}",
                a.action,
                a.goals.len(),
                if a.goals.len() == 1 { "" } else { "s" },
                if outcomes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", outcomes.join(", "))
                }
            )?;
            let list = |v: &[String]| {
                if v.is_empty() {
                    "none traced".to_owned()
                } else {
                    v.join(", ")
                }
            };
            writeln!(f, "  servers: {}", list(&a.servers))?;
            writeln!(f, "  clients: {}", list(&a.clients))?;
            if a.goals.is_empty() {
                continue;
            }
            writeln!(
                f,
                "  {:<8}  {:<10}  {:>10}  {:>10}  {:>9}  {:>12}  {:>10}",
                "goal", "outcome", "accept", "ran", "feedback", "result after", "total"
            )?;
            for g in &a.goals {
                writeln!(
                    f,
                    "  {:<8}  {:<10}  {:>10}  {:>10}  {:>9}  {:>12}  {:>10}",
                    &g.id[..g.id.len().min(8)],
                    g.outcome,
                    cell(g.accept_ns),
                    cell(g.run_ns),
                    format!("{}/{}", g.feedback_received, g.feedback_published),
                    cell(g.result_after_end_ns),
                    cell(g.total_ns),
                )?;
            }
            let one_sided = a
                .goals
                .iter()
                .filter(|g| g.client.is_none() || g.server.is_none())
                .count();
            if one_sided > 0 {
                writeln!(
                    f,
                    "  {one_sided} goals traced at one end only (the other end's process was not traced, or began tracing later)"
                )?;
            }
            if self.only.is_some() {
                for g in &a.goals {
                    writeln!(
                        f,
                        "\n  goal {} ({}), from {} into the trace:",
                        g.id,
                        g.outcome,
                        human_ns(g.start_ns as f64)
                    )?;
                    let width = g.steps.iter().map(|s| s.at.len()).max().unwrap_or(0);
                    for s in &g.steps {
                        let side = match s.side {
                            ActionRole::Server => "server",
                            ActionRole::Client => "client",
                        };
                        writeln!(
                            f,
                            "    {:>12}  {side} {:<width$}  {:<14}  status {}",
                            format!("+{}", human_ns((s.at_ns - g.start_ns) as f64)),
                            s.at,
                            s.event,
                            s.status
                        )?;
                    }
                }
            }
        }
        if self.only.is_none() {
            writeln!(
                f,
                "\n(feedback: received/published; `--goal <id prefix>` lists a goal's steps)"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ActionEndpoint, GoalStep, Node, NodeId};
    use std::sync::Arc;

    /// One step: `(endpoint, at, event, status)`.
    type Step<'a> = (usize, i64, &'a str, i32);

    /// A model with a client (endpoint 0, pid 1) and a server (endpoint 1, pid 2) of
    /// `/move`, and `goals` made of `(endpoint, at, event, status)` steps.
    fn model(goals: &[(&str, &[Step<'_>])]) -> Model {
        let mut m = Model {
            first_ns: Some(1_000),
            last_ns: Some(100_000),
            ..Model::default()
        };
        m.nodes = vec![
            Node {
                pid: 1,
                name: "/commander".into(),
            },
            Node {
                pid: 2,
                name: "/mover".into(),
            },
        ];
        for (i, role) in [ActionRole::Client, ActionRole::Server]
            .into_iter()
            .enumerate()
        {
            m.action_endpoints.push(ActionEndpoint {
                pid: i as i64 + 1,
                node: Some(NodeId(i)),
                action: Arc::from("/move"),
                role,
            });
        }
        for (id, steps) in goals {
            m.goals.push(Goal {
                id: id.to_string(),
                steps: steps
                    .iter()
                    .map(|&(endpoint, at, event, status)| GoalStep {
                        at,
                        endpoint,
                        event: event.into(),
                        status,
                    })
                    .collect(),
            });
        }
        m
    }

    #[test]
    fn a_goal_joined_from_both_ends_says_where_its_time_went() {
        let m = model(&[(
            "aaaaaaaa-1",
            &[
                (0, 2_000, "sent", 0),
                (1, 2_500, "accepted", 2),
                (1, 3_000, "feedback", 2),
                (0, 3_100, "accepted", 1),
                (0, 3_200, "feedback", 2),
                (0, 4_000, "cancel_sent", 2),
                (1, 4_200, "canceling", 3),
                (0, 4_400, "canceling", 3),
                (1, 6_000, "canceled", 5),
                (0, 6_700, "result", 5),
            ],
        )]);
        let report = report(&m, None);
        let g = &report.actions[0].goals[0];
        assert_eq!(g.outcome, "canceled");
        assert_eq!(g.client.as_deref(), Some("/commander (pid 1)"));
        assert_eq!(g.server.as_deref(), Some("/mover (pid 2)"));
        assert_eq!(g.start_ns, 1_000);
        assert_eq!(g.accept_ns, Some(1_100));
        assert_eq!(g.run_ns, Some(3_500));
        assert_eq!((g.feedback_published, g.feedback_received), (1, 1));
        assert_eq!(g.result_after_end_ns, Some(700));
        assert_eq!(g.total_ns, Some(4_700));
        assert_eq!(report.actions[0].outcomes["canceled"], 1);
        assert_eq!(g.steps[8].status, "canceled");
    }

    #[test]
    fn unfinished_and_one_sided_goals_say_what_is_missing() {
        let m = model(&[
            (
                "running",
                &[(1, 2_000, "accepted", 2), (1, 2_100, "feedback", 2)],
            ),
            ("unanswered", &[(0, 3_000, "sent", 0)]),
            (
                "refused",
                &[(0, 4_000, "sent", 0), (1, 4_100, "rejected", 0)],
            ),
            (
                "stopping",
                &[(1, 5_000, "accepted", 2), (1, 5_500, "canceling", 3)],
            ),
            // Only the client's result: its status says how the goal ended.
            ("late", &[(0, 6_000, "result", 6)]),
        ]);
        let report = report(&m, None);
        let outcomes: Vec<&str> = report.actions[0]
            .goals
            .iter()
            .map(|g| g.outcome.as_str())
            .collect();
        assert_eq!(
            outcomes,
            ["running", "no answer", "rejected", "canceling", "aborted"]
        );
        let running = &report.actions[0].goals[0];
        assert_eq!(running.client, None);
        assert_eq!((running.run_ns, running.total_ns), (None, None));
        let text = report.to_string();
        assert!(
            text.contains("4 goals traced at one end only"),
            "running, unanswered, stopping and late: {text}"
        );
    }

    #[test]
    fn a_prefix_picks_goals_and_lists_their_steps() {
        let m = model(&[
            ("abc-1", &[(0, 2_000, "sent", 0)]),
            ("xyz-2", &[(0, 3_000, "sent", 0)]),
        ]);
        let picked = report(&m, Some("xyz"));
        assert_eq!(picked.actions[0].goals.len(), 1);
        let text = picked.to_string();
        assert!(
            text.contains("goal xyz-2 (no answer), from 2.0 us"),
            "{text}"
        );
        assert!(text.contains("+0 ns  client"), "{text}");
        assert!(text.contains("client /commander (pid 1)  sent"), "{text}");
        let none = report(&m, Some("nothing"));
        assert_eq!(none.to_string(), "no goal whose id starts with `nothing`\n");
    }
}
