//! The publishing parent of one case: starts the subscribing child of a side, waits for
//! it, sends the paced samples and the burst, and reads the child's measurement.

use super::*;

pub(super) fn run_case(
    side: Side,
    size: usize,
    round: u32,
    port: u16,
    args: &Args,
) -> anyhow::Result<Case> {
    let plan = plan(size, args);
    let mut child = Command::new(std::env::current_exe()?)
        .args(["bench", "zenoh", "--child"])
        .arg(
            side.to_possible_value()
                .expect("no side is skipped")
                .get_name(),
        )
        .args(["--port", &port.to_string(), "--size", &size.to_string()])
        .args(["--samples", &plan.samples.to_string()])
        .args(["--burst", &plan.burst.to_string()])
        .args(["--idle-spin-us", &args.idle_spin_us.to_string()])
        .args(args.shm.then_some("--shm"))
        .args(["--tls-port", &args.tls_port.to_string()])
        .args(
            args.tls_dir
                .iter()
                .flat_map(|d| [std::ffi::OsStr::new("--tls-dir"), d.as_os_str()]),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start the subscribing child")?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let result = (|| {
        let ready = rx.recv_timeout(Duration::from_secs(30))?;
        if ready != "ready" {
            bail!("the child said {ready:?}");
        }
        let pub_cpu_ns = publish(side, size, port, plan, args)?;
        let report = rx.recv_timeout(Duration::from_secs(60))?;
        let report: serde_json::Value = serde_json::from_str(&report)?;
        let lat: Vec<i64> = serde_json::from_value(report["lat_ns"].clone())?;
        let received = report["burst_received"].as_u64().unwrap_or(0) as u32;
        let in_shm = report["in_shm"].as_u64().unwrap_or(0);
        let secs = report["burst_secs"].as_f64().unwrap_or(0.0);
        let sub_cpu_ms = report["cpu_ms"].as_f64().unwrap_or(0.0);
        let executor_sleeps = report["executor_sleeps"].as_u64();
        let executor_idle_spin_us = report["executor_idle_spin_us"].as_i64();
        Ok(Case {
            round,
            name: side.name(),
            size,
            latency: Summary::of_nanos(&lat),
            samples_received: lat.len() as u32,
            msgs_per_s: if secs > 0.0 {
                received as f64 / secs
            } else {
                0.0
            },
            received,
            burst: plan.burst,
            in_shm,
            sub_cpu_ms,
            pub_cpu_ns,
            executor_sleeps,
            executor_idle_spin_us,
        })
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Sends the paced samples, then the burst, from this process; returns the publishing
/// thread's CPU time per burst message, in ns.
fn publish(side: Side, size: usize, port: u16, plan: Plan, args: &Args) -> anyhow::Result<f64> {
    let config = if side == Side::KairosTls {
        side_config(side, args)?
    } else {
        peer_config(port, args.shm)?
    };
    let transport = ZenohTransport::open_with(config, 0)?;
    let payload = vec![0xa5u8; size.saturating_sub(16)];
    let clock = kairos::time::Clock::steady();
    let cancel = kairos::time::CancelToken::new();
    let total = plan.samples + plan.burst;
    // Paced: one message in flight; then back to back. Returns the CPU time per burst
    // message.
    let send_all = |send: &dyn Fn(u32)| -> anyhow::Result<f64> {
        let mut next = clock.now();
        for seq in 0..plan.samples {
            next = next + plan.pace;
            clock.sleep_until(next, &cancel)?;
            send(seq);
        }
        let cpu = thread_cpu_ns();
        for seq in plan.samples..total {
            send(seq);
        }
        Ok((thread_cpu_ns() - cpu) as f64 / f64::from(plan.burst.max(1)))
    };
    let zerr = |e: zenoh::Error| anyhow!("{e}");
    let probe = transport
        .session()
        .declare_publisher(key())
        .congestion_control(if args.keep_all {
            zenoh::qos::CongestionControl::Block
        } else {
            zenoh::qos::CongestionControl::Drop
        })
        .wait()
        .map_err(zerr)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !probe.matching_status().wait().map_err(zerr)?.matching() {
        if Instant::now() > deadline {
            bail!("the subscribing child did not match within 30 s");
        }
        std::thread::yield_now();
    }
    let cpu_per_msg = if side.is_kairos() {
        // As the raw side gets its pool before its clock starts: kairos sends large
        // payloads as bytes while the pool is still starting, never waiting for it.
        if args.shm && !transport.wait_shared_memory(Duration::from_secs(30)) {
            bail!("the shared-memory pool did not start within 30 s");
        }
        let context = Context::new();
        transport.install(&context)?;
        let node = Node::new_in(&context, "bench_talker", "/")?;
        let qos = if args.keep_all {
            Qos::keep_all(100)
        } else {
            Qos::keep_last(100)
        };
        let publisher = node.create_publisher::<BenchMsg>(TOPIC, qos)?;
        // One buffer behind every message (a clone is a reference count), as the raw side
        // copies from one buffer: both read the same bytes from the same place each time.
        let data = Bytes::from(Bytes::from(payload).into_shared());
        send_all(&|seq| {
            if args.loaned {
                let template = BenchMsg {
                    seq,
                    stamp_ns: 0,
                    data: Bytes::new(),
                };
                let mut loan = publisher.loan(template, |m| &mut m.data, data.len());
                loan.data.copy_from_slice(&data);
                loan.stamp_ns = mono_ns();
                publisher.publish_loaned(loan);
                return;
            }
            // The message is built first, as the raw side fills its buffer first: the
            // clock starts at the publish.
            let data = data.clone();
            publisher.publish(BenchMsg {
                seq,
                stamp_ns: mono_ns(),
                data,
            });
        })?
    } else {
        // What a zenoh user writes: each message's bytes built in a buffer of their own,
        // in the session's shared memory when it has one and the payload is as large as
        // zenoh's threshold for it (kairos's too).
        let provider = if args.shm && size >= SHM_THRESHOLD {
            transport.session().get_shm_provider().wait()
        } else {
            None
        };
        let fill = |b: &mut [u8], seq: u32, early: Option<i64>| {
            b[..4].copy_from_slice(&seq.to_le_bytes());
            b[16..].copy_from_slice(&payload);
            let stamp = early.unwrap_or_else(mono_ns);
            b[8..16].copy_from_slice(&stamp.to_le_bytes());
        };
        // What rmw_zenoh puts beside each sample, for the side that carries it.
        let gid: [u8; 16] =
            std::array::from_fn(|i| (std::process::id() >> (i % 4 * 8)) as u8 ^ i as u8);
        send_all(&|seq| {
            // The clock starts at the publish, as on the kairos side: before the buffer is
            // taken and the payload copied into it (kairos's publish does both); loaned,
            // once it is filled.
            let early = (!args.loaned).then(mono_ns);
            let shm = provider.as_ref().and_then(|p| {
                p.alloc(size.max(16))
                    .with_policy::<zenoh::shm::GarbageCollect<zenoh::shm::Defragment>>()
                    .wait()
                    .ok()
            });
            let bytes = match shm {
                Some(mut b) => {
                    fill(&mut b, seq, early);
                    zenoh::bytes::ZBytes::from(b)
                }
                None => {
                    let mut b = vec![0u8; size.max(16)];
                    fill(&mut b, seq, early);
                    zenoh::bytes::ZBytes::from(b)
                }
            };
            let put = probe.put(bytes);
            let _ = if side.attached() {
                let attachment = Attachment {
                    sequence_number: i64::from(seq) + 1,
                    source_timestamp: kairos_zenoh::attachment::now_ns(),
                    gid,
                };
                put.attachment(attachment.to_bytes()).wait()
            } else {
                put.wait()
            };
        })?
    };
    transport.close(Duration::from_secs(5))?;
    Ok(cpu_per_msg)
}
