//! What the bridge tells clients on its own: drops, and the server time under simulation.
//!
//! - **Drops**, every `status_period`: each client that lost messages since the last
//!   report gets one warning status (id [`DROPS_STATUS_ID`], so the app shows the latest
//!   in place of the previous one) naming the topics and counts, and the same line goes to
//!   the kairos log. The status waits in a single slot of the outbox: a stalled client
//!   reads the newest count when it reads again, and holds no growing backlog of reports.
//! - **Time**, when the bridge's clock runs on simulation time (`/clock`): each new
//!   reading is offered to every client as the server time (the `time` capability), and
//!   the current one to each client that connects, checked every [`TIME_PERIOD`]; again a
//!   single slot, the latest wins.

use crate::hub::Hub;
use foxglove::ws_protocol::server::{Status, Time};
use kairos::time::ClockKind;
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// The id of the drop status, replaced by each new report.
pub const DROPS_STATUS_ID: &str = "kairos.bridge.drops";

/// How often the simulated time is looked at.
pub const TIME_PERIOD: Duration = Duration::from_millis(20);

/// Reports each client's new drops (see the module docs), until the bridge stops.
pub(crate) async fn drops(hub: Arc<Hub>) {
    let mut tick = tokio::time::interval(hub.options.status_period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !hub.is_stopping() {
        tick.tick().await;
        let clients: Vec<_> = hub.tables().clients.values().cloned().collect();
        for client in clients {
            let drops = client.outbox.take_drops();
            if drops.is_empty() {
                continue;
            }
            let list = drops
                .iter()
                .map(|(topic, n)| format!("{n} on {topic}"))
                .collect::<Vec<_>>()
                .join(", ");
            let text = format!(
                "kairos bridge: dropped {list} since the last report ({} in all): this client reads slower than the messages arrive",
                client.outbox.dropped()
            );
            log::warn!("kairos bridge foxglove: client {}: {text}", client.addr);
            client.outbox.set_status(Message::from(
                &Status::warning(text).with_id(DROPS_STATUS_ID),
            ));
        }
    }
}

/// Offers the simulated time to every client (see the module docs), until the bridge
/// stops.
pub(crate) async fn sim_time(hub: Arc<Hub>) {
    let mut tick = tokio::time::interval(TIME_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last = None;
    let mut told = std::collections::BTreeSet::new();
    while !hub.is_stopping() {
        tick.tick().await;
        let now = hub.clock.now();
        if now.kind() != ClockKind::Sim {
            continue;
        }
        let changed = last != Some(now.nanos());
        last = Some(now.nanos());
        let message = Message::from(&Time::new(u64::try_from(now.nanos()).unwrap_or(0)));
        let tables = hub.tables();
        // A client that connected since the last change gets the time too.
        told.retain(|id| tables.clients.contains_key(id));
        for (id, client) in &tables.clients {
            if changed || told.insert(*id) {
                told.insert(*id);
                client.outbox.set_time(message.clone());
            }
        }
    }
}
