//! `Client::late_responses` counts exactly the responses no caller received (issue 24).
//!
//! Randomized: a sync service with random latency on one executor; a client on another,
//! called from plain threads (`call` with a short or a long timeout, `call_async` dropped
//! at once or waited on) and from callbacks of the client's executor (a blocking `call`,
//! an async `.await`, a done callback); then the client's executor shuts down while calls
//! are in flight, sometimes the server's too. Each caller records how its call ended. Once
//! the service is dropped and the server's executor has shut down (so every request has
//! had its one answer and every server callback has returned), `late_responses()` must
//! equal the calls whose caller gave up: ended by a timeout, by its executor's
//! shutdown (a blocking call that returned `ExecutorShutDown`, an awaiting task abandoned,
//! a done callback run with `ExecutorShutDown`), or by dropping its future. The service
//! is synchronous, so no `ExecutorShutDown` comes from the server's side.
//!
//! Two CPU-bound threads run beside it. Seeds are printed; `KAIROS_LATE_SEED=<seed>`
//! replays one.

mod exec_support;
use exec_support::node_in;
use kairos::exec::Executor;
use kairos::graph::{CallError, Client, Context};
use kairos::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// How the calls ended, as their callers saw it.
#[derive(Debug, Default)]
struct Ledger {
    answered: AtomicU64,
    given_up: AtomicU64,
    issued: AtomicU64,
}

impl Ledger {
    fn record(&self, result: &Result<i64, CallError>) {
        match result {
            Ok(_) | Err(CallError::ServiceGone { .. } | CallError::ServiceUnavailable { .. }) => {
                self.answered.fetch_add(1, Ordering::SeqCst)
            }
            Err(CallError::Timeout { .. } | CallError::ExecutorShutDown { .. }) => {
                self.given_up.fetch_add(1, Ordering::SeqCst)
            }
            Err(other) => panic!("unexpected call error: {other}"),
        };
    }
}

type AddClient = Client<fn((i64, i64)) -> i64>;

fn spin_wait(micros: u64) {
    let until = std::time::Instant::now() + std::time::Duration::from_micros(micros);
    while std::time::Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn run(seed: u64) {
    let mut rng = Rng(seed);
    let context = Context::new();
    let server = node_in(&context, "server");
    let latency = 50 + rng.below(400);
    let service = server
        .create_service("add", move |(a, b): (i64, i64)| {
            spin_wait(latency);
            a + b
        })
        .unwrap();
    let server_exec = Executor::multi_threaded(1 + rng.below(2) as usize).unwrap();
    server_exec.add_node(&server).unwrap();
    let server_spin = server_exec.spin_thread().unwrap();

    let caller = node_in(&context, "caller");
    let client: AddClient = caller.create_client("add").unwrap();
    let ledger = Arc::new(Ledger::default());
    let exec = Executor::multi_threaded(1 + rng.below(3) as usize).unwrap();
    let group = caller.create_callback_group("calls", kairos::exec::GroupKind::Reentrant);
    let calls = caller.with_group(&group).unwrap();

    // Callbacks of the client's executor: each period a blocking call, an awaited call or
    // a done callback.
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    for kind in 0..3 {
        let (client, ledger) = (client.clone(), ledger.clone());
        let period = Duration::from_micros(200 + rng.below(800) as i64);
        match kind {
            0 => keep.push(Box::new(
                calls
                    .create_timer(period, move |_| {
                        ledger.issued.fetch_add(1, Ordering::SeqCst);
                        let result = client.call((1, 2), Duration::from_secs(10));
                        ledger.record(&result);
                    })
                    .unwrap(),
            )),
            1 => keep.push(Box::new(
                calls
                    .create_timer_async(period, move |_| {
                        let (client, ledger) = (client.clone(), ledger.clone());
                        async move {
                            ledger.issued.fetch_add(1, Ordering::SeqCst);
                            // Counted as given up until the await returns: a task
                            // abandoned at shutdown never gets here.
                            ledger.given_up.fetch_add(1, Ordering::SeqCst);
                            let result = client.call_async((3, 4)).await;
                            ledger.given_up.fetch_sub(1, Ordering::SeqCst);
                            ledger.record(&result);
                        }
                    })
                    .unwrap(),
            )),
            _ => keep.push(Box::new(
                calls
                    .create_timer(period, move |_| {
                        ledger.issued.fetch_add(1, Ordering::SeqCst);
                        let ledger = ledger.clone();
                        client
                            .call_async((5, 6))
                            .on_done(move |result| ledger.record(&result));
                    })
                    .unwrap(),
            )),
        }
    }
    exec.add_node(&caller).unwrap();
    let spin = exec.spin_thread().unwrap();

    // Plain threads: timeouts short and long, futures dropped or waited on, until the
    // executors have shut down (a request to a service whose executor shut down waits
    // for its timeout: the service answers when it is spun again, or `ServiceGone`).
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let long = Duration::from_millis(200);
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (client, ledger, stop) = (client.clone(), ledger.clone(), stop.clone());
            let mut rng = Rng(seed ^ (t + 1));
            std::thread::spawn(move || {
                for _ in 0..10_000 {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    ledger.issued.fetch_add(1, Ordering::SeqCst);
                    match rng.below(4) {
                        0 => {
                            let timeout = Duration::from_micros(rng.below(600) as i64);
                            ledger.record(&client.call((7, 8), timeout));
                        }
                        1 => ledger.record(&client.call((7, 8), long)),
                        2 => {
                            drop(client.call_async((9, 10)));
                            ledger.given_up.fetch_add(1, Ordering::SeqCst);
                        }
                        _ => {
                            let future = client.call_async((9, 10));
                            spin_wait(rng.below(300));
                            ledger.record(&future.wait(long));
                        }
                    }
                }
            })
        })
        .collect();

    spin_wait(2_000 + rng.below(8_000));
    drop(spin);
    exec.shutdown(Duration::from_secs(5));
    if rng.below(2) == 0 {
        drop(server_spin);
        server_exec.shutdown(Duration::from_secs(5));
    } else {
        drop(server_spin);
    }
    stop.store(true, Ordering::Release);
    for thread in threads {
        thread.join().unwrap();
    }
    // Every request gets its one answer: handled, or `ServiceGone` as the service goes.
    // A cancelled spin does not wait for the callback it runs: that callback may still be
    // answering, and `respond` takes a request off `pending_requests()` before it counts
    // a late response. The shutdown waits for every server callback to return, so after
    // it every response has been delivered or counted.
    drop(service);
    let report = server_exec.shutdown(Duration::from_secs(30));
    assert!(report.is_clean(), "seed {seed}: {report}");
    assert_eq!(
        client.pending_requests(),
        0,
        "seed {seed}: every request was answered"
    );
    let (issued, answered, given_up) = (
        ledger.issued.load(Ordering::SeqCst),
        ledger.answered.load(Ordering::SeqCst),
        ledger.given_up.load(Ordering::SeqCst),
    );
    // Callbacks that never began their call were not counted as issued; every issued
    // call ended one way or the other.
    assert_eq!(
        answered + given_up,
        issued,
        "seed {seed}: {issued} calls issued, {answered} answered, {given_up} given up"
    );
    assert_eq!(
        client.late_responses(),
        given_up,
        "seed {seed}: late responses must be exactly the {given_up} calls given up \
         ({issued} issued, {answered} answered)"
    );
    drop(keep);
}

#[test]
fn late_responses_are_exactly_the_calls_given_up_under_shutdowns_in_flight() {
    let seeds: Vec<u64> = match std::env::var("KAIROS_LATE_SEED") {
        Ok(seed) => vec![seed.parse().expect("KAIROS_LATE_SEED is a u64")],
        Err(_) => {
            let base = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
            (0..30)
                .map(|i| base.wrapping_mul(31).wrapping_add(i))
                .collect()
        }
    };
    // The races between a response, a give-up and a shutdown depend on scheduling.
    let _load = kairos_testkit::CpuLoad::start(2);
    for seed in seeds {
        eprintln!("seed {seed} (replay: KAIROS_LATE_SEED={seed})");
        run(seed);
    }
}
