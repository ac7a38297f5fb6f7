//! `shutdown`: tripping the token, detaching the nodes, waiting for running callbacks
//! until the deadline, and the report (see the walk-through in `executor.rs`: "Shut
//! down").

use super::*;

/// The callbacks the live slots show as running.
pub(super) fn running_calls(slots: &[Weak<WorkerSlot>]) -> impl Iterator<Item = RunningCall> + '_ {
    slots
        .iter()
        .filter_map(Weak::upgrade)
        .filter_map(|slot| slot.running())
}

impl ExecShared {
    /// See [`Executor::shutdown`](super::Executor::shutdown).
    pub(super) fn shut_down_by(self: &Arc<Self>, deadline: Duration) -> ShutdownReport {
        let exec = self;
        let start = Instant::now();
        let until = deadline_after(deadline);
        crate::exec::running::shut_down(&exec.shut_down);
        exec.epoch.fetch_add(1, Ordering::AcqRel);
        exec.ready.interrupt();
        exec.shutdown_token.cancel();
        let nodes: Vec<Node> = exec.nodes.lock().drain(..).collect();
        let entities: Vec<Arc<dyn Entity>> = nodes.iter().flat_map(Node::entities).collect();
        let parked_entities = parked_in_groups(&entities);
        let live_tasks = exec.tasks.lock().live.len();
        for node in &nodes {
            node.detach();
        }
        let queued_responses = entities.iter().map(|e| e.fail_queued()).sum();
        let me = thread::current().id();
        let mut running = exec.running.lock();
        loop {
            let busy = running_calls(&running).any(|call| call.thread != me);
            // A shutdown called from a callback on a worker thread cannot wait for that thread.
            let own = usize::from(HELPER_OF.with(Cell::get) == exec.id);
            if !busy && exec.live_helpers.load(Ordering::Acquire) <= own {
                break;
            }
            let timed_out = match until {
                Some(until) => exec.idle.wait_until(&mut running, until).timed_out(),
                None => {
                    exec.idle.wait(&mut running);
                    false
                }
            };
            if timed_out {
                break;
            }
        }
        let now_ns = coarse_now_ns();
        let mut still_running: Vec<StillRunning> = running_calls(&running)
            .filter(|call| call.thread != me)
            .map(|call| StillRunning {
                callback: callback_name(&entities, call.entity),
                running_for: Duration::from_nanos(now_ns - call.since_ns),
            })
            .collect();
        drop(running);
        still_running.sort_by_key(|running| std::cmp::Reverse(running.running_for));
        let mut suspended = exec.abandon_tasks(now_ns);
        suspended.sort_by_key(|task| std::cmp::Reverse(task.suspended_for));
        // Queued work never runs now; dropping it frees the entities and tasks it holds.
        drop(exec.ready.drain());
        exec.reap_helpers();
        let report = ShutdownReport {
            still_running,
            suspended,
            live_tasks,
            parked_entities,
            queued_responses,
            waited: start.elapsed().into(),
        };
        for running in &report.still_running {
            let ns = u64::try_from(running.running_for.as_nanos()).unwrap_or(0);
            crate::trace::tp::shutdown_report(exec.id, &running.callback, "still_running_ns", ns);
        }
        for task in &report.suspended {
            let ns = u64::try_from(task.suspended_for.as_nanos()).unwrap_or(0);
            crate::trace::tp::shutdown_report(exec.id, &task.callback, "suspended_ns", ns);
        }
        report
    }
}

/// The name of the callback of entity `id`, one of `entities` (the executor's when its
/// shutdown began); an entity of a node removed since is named by its id.
pub(super) fn callback_name(entities: &[Arc<dyn Entity>], id: u64) -> String {
    entities
        .iter()
        .find(|entity| entity.core().id() == id)
        .map_or_else(
            || format!("callback {id} (of a node removed from the executor)"),
            |entity| entity.core().name.to_string(),
        )
}

/// How many items are parked in the distinct callback groups of `entities`.
pub(super) fn parked_in_groups(entities: &[Arc<dyn Entity>]) -> usize {
    let mut seen: Vec<&CallbackGroup> = Vec::new();
    let mut parked = 0;
    for entity in entities {
        let group = &entity.core().group;
        if !seen.contains(&group) {
            seen.push(group);
            parked += group.parked();
        }
    }
    parked
}
