//! The subscribing child of a case: records each sample's one-way latency and counts the
//! burst, then prints one JSON line for the parent.

use super::*;

/// The subscribing child: records latencies and the burst, then prints one JSON line.
pub(super) fn child(side: Side, args: &Args) -> anyhow::Result<ExitCode> {
    let samples = args.samples as usize;
    let total = args.samples + args.burst;
    let record = Arc::new(Recorder::new(samples));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let transport = ZenohTransport::open_with(side_config(side, args)?, 0)?;
    let in_shm = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let on_message = {
        let record = record.clone();
        move |seq: u32, stamp: i64| {
            if record.note(seq, stamp, total) {
                let _ = done_tx.send(());
            }
        }
    };
    let mut kairos_exec = None;
    let _keep: Box<dyn std::any::Any> = if side.is_kairos() {
        let context = Context::new();
        transport.install(&context)?;
        let node = Node::new_in(&context, "bench_listener", "/")?;
        let on_message = on_message.clone();
        let sub =
            node.create_subscription(TOPIC, Qos::keep_last(10_000), move |m: Arc<BenchMsg>| {
                on_message(m.seq, m.stamp_ns)
            })?;
        let exec = kairos::exec::Executor::single_threaded();
        exec.set_idle_spin(kairos::time::Duration::from_micros(
            args.idle_spin_us as i64,
        ))?;
        exec.add_node(&node)?;
        let spin = exec.clone();
        std::thread::spawn(move || spin.spin());
        kairos_exec = Some(exec.clone());
        Box::new((sub, node, exec, context))
    } else {
        let in_shm = in_shm.clone();
        let take = move |sample: &zenoh::sample::Sample| {
            let b = sample.payload().to_bytes();
            if b.len() >= 16 {
                let seq = u32::from_le_bytes(b[..4].try_into().unwrap());
                let stamp = i64::from_le_bytes(b[8..16].try_into().unwrap());
                on_message(seq, stamp);
            }
        };
        // The hop side's callback thread, fed a queue as deep as the kairos subscription's
        // (a sample that finds it full is dropped, as keep-last drops one).
        let hop = (side == Side::RawRmwHop).then(|| {
            let (tx, rx) = crossbeam_channel::bounded::<zenoh::sample::Sample>(10_000);
            let take = take.clone();
            std::thread::spawn(move || {
                for sample in rx {
                    take(&sample);
                }
            });
            tx
        });
        let read_attachment = side.attached();
        let sub = transport
            .session()
            .declare_subscriber(key())
            .callback(move |sample| {
                if sample.payload().as_shm().is_some() {
                    in_shm.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                // As an rmw_zenoh-compatible subscriber reads it (sequence number, time,
                // publisher): a sample without it is not taken.
                if read_attachment
                    && sample
                        .attachment()
                        .is_none_or(|a| Attachment::from_bytes(&a.to_bytes()).is_err())
                {
                    return;
                }
                match &hop {
                    Some(queue) => {
                        let _ = queue.try_send(sample);
                    }
                    None => take(&sample),
                }
            })
            .wait()
            .map_err(|e| anyhow!("{e}"))?;
        Box::new(sub)
    };
    println!("ready");
    let cpu_at_ready = process_cpu_ms();
    // Done at the last message, or, where the publisher may drop (keep-last), when the
    // burst stalls: dropped messages never come. A reliable keep-all burst loses nothing,
    // so its stragglers are waited for (up to `give_up`): a stall there is a busy
    // machine, not a drop.
    let give_up = Instant::now() + Duration::from_secs(60);
    let mut last_count = 0;
    while Instant::now() < give_up {
        match done_rx.recv_timeout(Duration::from_secs(3)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let count = {
                    let s = record.inner.lock().unwrap();
                    s.lat_ns.len() + s.burst_received as usize
                };
                if count > 0 && count == last_count && !args.keep_all {
                    break;
                }
                last_count = count;
            }
        }
    }
    let mut report = record.report();
    report["cpu_ms"] = json!(process_cpu_ms() - cpu_at_ready);
    report["executor_sleeps"] = json!(kairos_exec.as_ref().map(|exec| exec.stats().sleeps));
    report["executor_idle_spin_us"] =
        json!(kairos_exec.map(|exec| exec.idle_spin().as_nanos() / 1000));
    report["in_shm"] = json!(if side.is_kairos() {
        transport.shared_memory().received
    } else {
        in_shm.load(std::sync::atomic::Ordering::Relaxed)
    });
    println!("{report}");
    Ok(ExitCode::SUCCESS)
}

/// This process's CPU time (user and system, all threads) in ms, from `/proc/self/stat`
/// (in its 10 ms ticks).
fn process_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis, from the state (field 3) on:
    // utime and stime are fields 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks as f64 * 10.0
}

struct Recorder {
    inner: Mutex<RecorderState>,
    samples: usize,
}

struct RecorderState {
    lat_ns: Vec<i64>,
    burst_first: Option<i64>,
    burst_last: i64,
    burst_received: u32,
}

impl Recorder {
    fn new(samples: usize) -> Self {
        Self {
            inner: Mutex::new(RecorderState {
                lat_ns: Vec::with_capacity(samples),
                burst_first: None,
                burst_last: 0,
                burst_received: 0,
            }),
            samples,
        }
    }

    /// True at the last message.
    fn note(&self, seq: u32, stamp: i64, total: u32) -> bool {
        let now = mono_ns();
        let mut s = self.inner.lock().unwrap();
        if (seq as usize) < self.samples {
            s.lat_ns.push(now - stamp);
        } else {
            s.burst_first.get_or_insert(stamp);
            s.burst_last = now;
            s.burst_received += 1;
        }
        seq + 1 == total
    }

    fn report(&self) -> serde_json::Value {
        let s = self.inner.lock().unwrap();
        let secs = s
            .burst_first
            .map_or(0.0, |first| (s.burst_last - first) as f64 / 1e9);
        json!({"lat_ns": s.lat_ns, "burst_received": s.burst_received, "burst_secs": secs})
    }
}
