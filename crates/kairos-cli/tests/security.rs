//! SROS2 security on Zenoh, end to end, on loopback: a keystore and a policy made with
//! `kairos security`, a `kairos router` and kairos processes of two enclaves over mutual
//! TLS with the generated configurations; what the policy allows flows, what it does not
//! is refused at creation (the program is told) and dropped on the wire (a process whose
//! own configuration lets it try gets nothing through); certificates from another CA,
//! expired, or none are refused and see no graph; an independent rmw_zenoh peer
//! (zenoh-ros2-sdk) uses the same generated configuration; hostile traffic on the router's
//! port is refused, counted, and leaves authorised traffic flowing.
//!
//! One file for one subject, however many tests it holds: each file under `tests/` is a
//! binary of its own, and each binary links zenoh again into every CI build.

mod hosts_support;
mod zenoh_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kairos_security::{Keystore, Validity};
use kairos_testkit::router::free_loopback_port;
use zenoh_support::{Lines, Running, assert_ok, finish, kairos, spawn};

const POLICY: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/tl/talker">
      <profiles>
        <profile ns="/" node="talker">
          <topics publish="ALLOW"><topic>chatter</topic></topics>
        </profile>
        <profile ns="/" node="sensor">
          <services reply="ALLOW"><service>~/get_parameters</service></services>
        </profile>
      </profiles>
    </enclave>
    <enclave path="/tl/listener">
      <profiles>
        <profile ns="/" node="listener">
          <topics subscribe="ALLOW"><topic>chatter</topic><topic>secret</topic></topics>
          <services request="ALLOW"><service>/sensor/get_parameters</service></services>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
"#;

/// A keystore with the router's and both enclaves' identities, the policy, and the
/// configurations generated for a router on `port`.
struct Secured {
    dir: tempfile::TempDir,
    port: u16,
}

impl Secured {
    fn new() -> Self {
        Self::with_router("127.0.0.1", free_loopback_port())
    }

    /// The configurations of a router listening on `host:port`.
    fn with_router(host: &str, port: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ks = dir.path().join("ks");
        let run =
            |args: &[&str]| assert_ok(&args.join(" "), &kairos().args(args).output().unwrap());
        run(&["security", "create-keystore", ks.to_str().unwrap()]);
        for enclave in ["/zenohd", "/tl/talker", "/tl/listener"] {
            run(&["security", "create-enclave", ks.to_str().unwrap(), enclave]);
        }
        let policy = dir.path().join("policy.xml");
        std::fs::write(&policy, POLICY).unwrap();
        run(&[
            "security",
            "generate-configs",
            "--policy",
            policy.to_str().unwrap(),
            "--keystore",
            ks.to_str().unwrap(),
            "--router-listen",
            &format!("tls/{host}:{port}"),
            "--router-connect",
            &format!("tls/{host}:{port}"),
            "--session-listen",
            &format!("tls/{host}:0"),
        ]);
        Self { dir, port }
    }

    fn keystore(&self) -> PathBuf {
        self.dir.path().join("ks")
    }

    fn configs(&self) -> PathBuf {
        self.keystore().join("zenoh")
    }

    /// `kairos router` with the generated router configuration.
    fn router(&self) -> Running {
        self.router_logged().0
    }

    /// The router, and its log (standard error).
    fn router_logged(&self) -> (Running, Lines) {
        let mut child = kairos()
            .args(["router"])
            .env(
                "ZENOH_ROUTER_CONFIG_URI",
                self.configs().join("zenohd.json5"),
            )
            .env_remove("ZENOH_CONFIG_OVERRIDE")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Lines::of(child.stdout.take().unwrap());
        let log = Lines::of(child.stderr.take().unwrap());
        let running = Running(child);
        let line = lines.next_within(Duration::from_secs(30));
        assert!(
            line.as_deref().is_some_and(|l| l.contains("running")),
            "the secured router did not start: {line:?}"
        );
        (running, log)
    }

    /// A kairos command of `enclave`, security enforced, from the keystore's variables.
    fn kairos_as(&self, enclave: &str) -> Command {
        let mut cmd = kairos();
        self.enforced(&mut cmd)
            .env("ROS_SECURITY_ENCLAVE_OVERRIDE", enclave);
        cmd
    }

    /// `cmd` with security enforced from this keystore, its enclave left to it, and
    /// nothing else of the environment's Zenoh settings.
    fn enforced<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("ROS_SECURITY_ENABLE", "true")
            .env("ROS_SECURITY_STRATEGY", "Enforce")
            .env("ROS_SECURITY_KEYSTORE", self.keystore())
            .env_remove("ROS_SECURITY_ENCLAVE_OVERRIDE")
            .env_remove("ZENOH_SESSION_CONFIG_URI")
            .env_remove("ZENOH_CONFIG_OVERRIDE")
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("KAIROS_TRACE")
    }

    /// A kairos command with a configuration of its own: mutual TLS with `cert`/`key`
    /// checked against `ca`, connected to the router, and no access rules of its own (a
    /// process that does not keep the policy).
    fn kairos_with_identity(&self, name: &str, ca: &Path, cert: &Path, key: &Path) -> Command {
        let config = serde_json::json!({
            "mode": "peer",
            "connect": { "endpoints": [format!("tls/127.0.0.1:{}", self.port)] },
            "listen": { "endpoints": ["tls/127.0.0.1:0"] },
            "scouting": { "multicast": { "enabled": false } },
            "transport": { "link": { "tls": {
                "root_ca_certificate": ca, "connect_certificate": cert, "connect_private_key": key,
                "listen_certificate": cert, "listen_private_key": key,
                "enable_mtls": true, "verify_name_on_connect": false,
            } } },
        });
        let path = self.dir.path().join(format!("{name}.json5"));
        std::fs::write(&path, config.to_string()).unwrap();
        let mut cmd = kairos();
        cmd.env("ZENOH_SESSION_CONFIG_URI", path)
            .env_remove("ZENOH_CONFIG_OVERRIDE")
            .env_remove("ROS_SECURITY_ENABLE")
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("KAIROS_TRACE");
        cmd
    }

    fn enclave_files(&self, enclave: &str) -> (PathBuf, PathBuf, PathBuf) {
        let dir = self.keystore().join("enclaves").join(&enclave[1..]);
        (
            dir.join("identity_ca.cert.pem"),
            dir.join("cert.pem"),
            dir.join("key.pem"),
        )
    }
}

fn echo<'a>(cmd: &'a mut Command, topic: &str, count: usize, timeout: u32) -> &'a mut Command {
    cmd.args([
        "topic",
        "echo",
        topic,
        "std_msgs/msg/String",
        "--json",
        "--count",
        &count.to_string(),
        "--timeout",
        &timeout.to_string(),
    ])
}

fn publish<'a>(cmd: &'a mut Command, topic: &str, data: &str, times: u32) -> &'a mut Command {
    cmd.args([
        "topic",
        "pub",
        topic,
        "std_msgs/msg/String",
        &format!("{{data: {data}}}"),
        "--times",
        &times.to_string(),
        "--rate",
        "20",
        "--wait-matching",
        "20",
    ])
    .stdout(std::process::Stdio::null())
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn what_the_policy_allows_flows_over_mutual_tls_and_the_rest_is_refused_and_dropped() {
    let secured = Secured::new();
    let (_router, mut router_log) = secured.router_logged();

    // Allowed: the talker's /chatter reaches the listener, over TLS, with access rules on.
    let listener = spawn(echo(
        &mut secured.kairos_as("/tl/listener"),
        "/chatter",
        3,
        60,
    ));
    let talker = publish(
        &mut secured.kairos_as("/tl/talker"),
        "/chatter",
        "hello",
        100,
    )
    .spawn()
    .unwrap();
    let talker = Running(talker);
    let got = finish(listener, Duration::from_secs(90));
    assert_ok("the listener", &got);
    assert_eq!(stdout(&got).matches("hello").count(), 3, "{}", stdout(&got));
    drop(talker);

    // Refused at creation: the talker's process is told, with the rule to add.
    let refused = publish(&mut secured.kairos_as("/tl/talker"), "/secret", "leak", 1)
        .output()
        .unwrap();
    assert!(!refused.status.success(), "a denied publisher was created");
    let text = stderr(&refused);
    assert!(
        text.contains("does not let enclave /tl/talker publish on /secret")
            && text.contains("<topics publish=\"ALLOW\"><topic>/secret</topic></topics>"),
        "{text}"
    );

    // Dropped on the wire: a process with the talker's identity and no rules of its own
    // publishes /secret and /chatter; the listener, allowed to read both, gets /chatter
    // only (the router and the listener both refuse /secret from the talker's enclave).
    let secret = spawn(echo(
        &mut secured.kairos_as("/tl/listener"),
        "/secret",
        1,
        25,
    ));
    let chatter = spawn(echo(
        &mut secured.kairos_as("/tl/listener"),
        "/chatter",
        3,
        60,
    ));
    let (ca, cert, key) = secured.enclave_files("/tl/talker");
    let rogue = |topic: &str| {
        let mut cmd = secured.kairos_with_identity("rogue", &ca, &cert, &key);
        publish(&mut cmd, topic, "rogue", 200);
        Running(cmd.spawn().unwrap())
    };
    let _rogue_secret = rogue("/secret");
    let _rogue_chatter = rogue("/chatter");
    let got = finish(chatter, Duration::from_secs(90));
    assert_ok("the listener of /chatter", &got);
    assert_eq!(stdout(&got).matches("rogue").count(), 3, "{}", stdout(&got));
    let got = finish(secret, Duration::from_secs(60));
    assert_eq!(
        stdout(&got).matches("rogue").count(),
        0,
        "a /secret message got through: {}",
        stdout(&got)
    );
    // And the network says so: the router counts what its rules dropped from the
    // talker's enclave (zenoh's own counters, by peer) and reports it. What is dropped is
    // zenoh's business: here the declarations that would have told the rogue of the
    // listener, so no /secret message is even sent.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = router_log.wait_for("access control dropped", left);
        if line.contains(" received from /tl/talker") {
            break;
        }
    }
}

#[test]
fn a_certificate_from_another_ca_an_expired_one_or_none_is_refused_and_sees_no_graph() {
    let secured = Secured::new();
    let (_router, mut router_log) = secured.router_logged();
    let _talker = Running(
        publish(
            &mut secured.kairos_as("/tl/talker"),
            "/chatter",
            "hello",
            2000,
        )
        .spawn()
        .unwrap(),
    );
    // The allowed listener sees the talker: the system runs.
    let seen = secured
        .kairos_as("/tl/listener")
        .args([
            "node",
            "list",
            "--wait-for",
            "/chatter",
            "--spin-time",
            "30",
        ])
        .output()
        .unwrap();
    assert_ok("node list", &seen);
    assert!(stdout(&seen).contains("/kairos_pub_"), "{}", stdout(&seen));

    let other = tempfile::tempdir().unwrap();
    let foreign = Keystore::create(other.path(), Validity::default()).unwrap();
    let foreign = foreign
        .create_enclave("/tl/listener", Validity::default(), false)
        .unwrap();
    let store = Keystore::open(&secured.keystore()).unwrap();
    let past = Validity {
        not_before: time::OffsetDateTime::now_utc() - time::Duration::days(30),
        not_after: time::OffsetDateTime::now_utc() - time::Duration::days(1),
    };
    let expired = store.create_enclave("/tl/expired", past, false).unwrap();
    let (ca, _, _) = secured.enclave_files("/tl/listener");
    // Each refused process is told why (it checks its own identity against the CA its
    // configuration trusts, as no TLS peer says why it refuses), and the router logs
    // each refused handshake with the TLS alert.
    let cases = [
        (
            "another CA",
            ca.clone(),
            foreign.cert(),
            foreign.key(),
            "unknown CA",
        ),
        (
            "expired",
            ca.clone(),
            expired.cert(),
            expired.key(),
            "expired",
        ),
    ];
    for (what, ca, cert, key, reason) in cases {
        let out = secured
            .kairos_with_identity(what, &ca, &cert, &key)
            .args(["node", "list", "--spin-time", "4"])
            .output()
            .unwrap();
        assert!(
            !stdout(&out).contains("/kairos_pub_"),
            "{what}: a refused process saw the graph: {}",
            stdout(&out)
        );
        assert!(stderr(&out).contains(reason), "{what}: {}", stderr(&out));
        router_log.wait_for("zenoh_link_tls", Duration::from_secs(30));
    }
    // No certificate at all: plain TCP to the TLS port.
    let out = kairos()
        .env(
            "ZENOH_CONFIG_OVERRIDE",
            format!(
                "connect/endpoints=[\"tcp/127.0.0.1:{}\"];listen/endpoints=[\"tcp/127.0.0.1:0\"]",
                secured.port
            ),
        )
        .env_remove("ROS_DOMAIN_ID")
        .args(["node", "list", "--spin-time", "4"])
        .output()
        .unwrap();
    assert!(!stdout(&out).contains("/kairos_pub_"), "{}", stdout(&out));
}

#[test]
fn enforce_refuses_to_start_without_the_enclaves_files_and_names_the_missing_one() {
    let secured = Secured::new();
    let out = secured
        .kairos_as("/tl/ghost")
        .args(["node", "list", "--spin-time", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains("ROS_SECURITY_STRATEGY=Enforce")
            && text.contains("enclaves/tl/ghost/identity_ca.cert.pem")
            && text.contains("kairos security create-enclave"),
        "{text}"
    );
    // Enforced, a configuration in the clear is refused too.
    let out = secured
        .kairos_as("/tl/listener")
        .env(
            "ZENOH_CONFIG_OVERRIDE",
            "connect/endpoints=[\"tcp/127.0.0.1:7447\"]",
        )
        .args(["node", "list", "--spin-time", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("endpoint tcp/127.0.0.1:7447, which is not TLS"),
        "{}",
        stderr(&out)
    );
}

/// `kairos security check`: before anything runs, what a process of an enclave would be
/// (identity, configuration, rules) and whether the operations named are allowed; each
/// problem says what to do, and makes the exit status 1.
#[test]
fn security_check_says_what_an_enclave_may_do_and_what_stands_in_its_way() {
    let secured = Secured::new();
    let check = |enclave: &str, args: &[&str]| {
        secured
            .kairos_as(enclave)
            .args(["security", "check"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = check(
        "/tl/talker",
        &["--publish", "chatter", "--serve", "/sensor/get_parameters"],
    );
    let text = assert_ok("security check", &out);
    for line in [
        "ok  security: on, strategy Enforce, enclave /tl/talker",
        "(CN /tl/talker), signed by",
        "(generated for the enclave)",
        "ok  publish on /chatter: allowed",
        "ok  serve /sensor/get_parameters: allowed",
        "0 problem(s)",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    // What the policy does not give the talker: refused, with the policy change.
    let out = check("/tl/talker", &["--subscribe", "/chatter", "--call", "/add"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for line in [
        "PROBLEM  subscribe to /chatter: the security configuration does not let enclave /tl/talker subscribe to /chatter",
        r#"<topics subscribe="ALLOW"><topic>/chatter</topic></topics>"#,
        "PROBLEM  call /add:",
        "2 problem(s)",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    // An enclave without files, and an expired identity: a process would not start.
    let store = Keystore::open(&secured.keystore()).unwrap();
    let past = Validity {
        not_before: time::OffsetDateTime::now_utc() - time::Duration::days(30),
        not_after: time::OffsetDateTime::now_utc() - time::Duration::days(1),
    };
    store.create_enclave("/tl/expired", past, false).unwrap();
    for (enclave, says) in [
        ("/tl/ghost", "enclaves/tl/ghost/identity_ca.cert.pem"),
        ("/tl/expired", "not now"),
    ] {
        let out = check(enclave, &["--publish", "/chatter"]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{enclave}: {text}");
        assert!(
            text.contains("PROBLEM  security: ROS_SECURITY_STRATEGY=Enforce")
                && text.contains(says)
                && text.contains("kairos security create-enclave"),
            "{enclave}: {text}"
        );
    }
}

#[test]
fn an_rmw_zenoh_peer_uses_the_generated_configuration_to_talk_to_kairos_over_tls() {
    zenoh_support::require_zenoh_ros2_sdk("zenoh_ros2_sdk");
    let secured = Secured::new();
    let _router = secured.router();
    let _talker = Running(
        publish(
            &mut secured.kairos_as("/tl/talker"),
            "/chatter",
            "from kairos",
            2000,
        )
        .spawn()
        .unwrap(),
    );
    // zenoh-ros2-sdk reads ZENOH_SESSION_CONFIG_URI, then sets a tcp/ endpoint of its
    // own; ZENOH_CONFIG_OVERRIDE (applied last) puts the generated tls/ one back.
    let script = r#"
import threading
from zenoh_ros2_sdk import ROS2Subscriber
got = []
three = threading.Event()
def heard(m):
    got.append(m.data)
    if len(got) >= 3:
        three.set()
sub = ROS2Subscriber('/chatter', 'std_msgs/msg/String', heard,
    msg_definition="string data\n",
    type_hash="RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
    node_name='listener')
three.wait(60)
print('enough', len(got) >= 3, got[:3], flush=True)
sub.close()
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .env(
            "ZENOH_SESSION_CONFIG_URI",
            secured.configs().join("listener.json5"),
        )
        .env(
            "ZENOH_CONFIG_OVERRIDE",
            format!("connect/endpoints=[\"tls/127.0.0.1:{}\"]", secured.port),
        )
        .env_remove("ROS_DOMAIN_ID")
        .output()
        .unwrap();
    assert_ok("the zenoh-ros2-sdk listener", &out);
    assert!(
        stdout(&out).contains("enough True") && stdout(&out).contains("from kairos"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// The router's resident memory, from /proc.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// One hostile connection of kind `kind` to `port`: garbage, a truncated TLS handshake,
/// an oversized record, or connect-and-close. Bounded in bytes and time. True if the
/// connection was made (the router then has it to refuse).
fn hostile(port: u16, kind: u64, rng: &mut u64) -> bool {
    use std::io::Write as _;
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(2),
    ) else {
        return false;
    };
    let _ = stream.set_write_timeout(Some(Duration::from_millis(500)));
    let mut next = || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng
    };
    let bytes: Vec<u8> = match kind {
        // Random bytes.
        0 => (0..4096).map(|_| next() as u8).collect(),
        // A TLS ClientHello record header promising 512 bytes, cut after a few.
        1 => vec![
            0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
        ],
        // A record header claiming the largest length, then garbage.
        2 => {
            let mut b = vec![0x16, 0x03, 0x03, 0xff, 0xff];
            b.extend((0..16384).map(|_| next() as u8));
            b
        }
        // Connect and close.
        _ => Vec::new(),
    };
    let _ = stream.write_all(&bytes);
    true
}

/// Zenoh 1.10's TLS listener sleeps 100 ms after every failed handshake before it accepts
/// again, so while bad connections keep coming (10 a second suffice) no new peer can join;
/// links already up are not touched. So this asserts that an authorised link up before the
/// attack keeps delivering through it, that a new authorised process joins once it ends,
/// that the router counts every connection it refused, and that its memory stays bounded.
#[test]
fn hostile_traffic_on_the_routers_tls_port_leaves_authorised_traffic_flowing_and_memory_bounded() {
    let seed: u64 = std::env::var("KAIROS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    println!("KAIROS_SEED={seed}");
    let secured = Secured::new();
    let (router, mut router_log) = secured.router_logged();
    let router_pid = router.0.id();
    let _talker = Running(
        publish(
            &mut secured.kairos_as("/tl/talker"),
            "/chatter",
            "steady",
            100_000,
        )
        .spawn()
        .unwrap(),
    );
    let mut listener = spawn(echo(
        &mut secured.kairos_as("/tl/listener"),
        "/chatter",
        100_000,
        600,
    ));
    let mut lines = zenoh_support::stdout_lines(&mut listener);
    lines.wait_for("steady", Duration::from_secs(90));
    let rss_before = rss_kib(router_pid);

    // 400 hostile connections, four kinds in turn, from two threads; bounded in count
    // and by a 60 s deadline.
    let started = std::time::Instant::now();
    let deadline = started + Duration::from_secs(60);
    let port = secured.port;
    let attackers: Vec<_> = (0..2u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut rng = seed.wrapping_add(t).max(1);
                let (mut sent, mut connected) = (0u64, 0u64);
                for i in 0..200u64 {
                    if std::time::Instant::now() > deadline {
                        break;
                    }
                    connected += u64::from(hostile(port, (i + t) % 4, &mut rng));
                    sent += 1;
                }
                (sent, connected)
            })
        })
        .collect();
    // The link that was up delivers during the attack.
    lines.seen_now();
    let watch = std::time::Instant::now() + Duration::from_secs(60);
    let mut during = 0;
    while during < 20 {
        let left = watch.saturating_duration_since(std::time::Instant::now());
        match lines.next_within(left) {
            Some(line) if line.contains("steady") => during += 1,
            Some(_) => {}
            None => break,
        }
    }
    let (sent, connected) = attackers
        .into_iter()
        .map(|a| a.join().unwrap())
        .fold((0, 0), |(s, c), (sent, connected)| {
            (s + sent, c + connected)
        });
    println!(
        "{:?} after the attack began: {sent} hostile connections ({connected} made) and \
         {during} lines heard",
        started.elapsed()
    );
    assert!(
        during >= 20,
        "{during} lines reached the listener during the attack; the router said:\n{}",
        router_log.seen_now().join("\n")
    );
    // After it, the router admits a new authorised process.
    let after = finish(
        spawn(echo(
            &mut secured.kairos_as("/tl/listener"),
            "/chatter",
            3,
            150,
        )),
        Duration::from_secs(180),
    );
    assert_ok("a new listener after the attack", &after);
    println!(
        "{:?} after the attack began: a new listener heard 3 lines",
        started.elapsed()
    );
    let rss_after = rss_kib(router_pid);
    // Every connection made was refused at the handshake, and the router counted it
    // (zenoh's listener takes them one by one, 100 ms apart: a liveness bound).
    let counted = |line: &str| -> Option<u64> {
        let (_, rest) = line.split_once("refused ")?;
        let (n, _reasons) = rest.split_once(" connections at the TLS handshake: ")?;
        n.parse().ok()
    };
    let give_up = std::time::Instant::now() + Duration::from_secs(180);
    let (mut refused, mut said) = (0, String::new());
    while refused < connected {
        let left = give_up.saturating_duration_since(std::time::Instant::now());
        match router_log.next_within(left) {
            Some(line) => {
                if let Some(n) = counted(&line) {
                    (refused, said) = (n, line);
                }
            }
            None => panic!(
                "the router counted {refused} of {connected} refused connections; it said:\n{}",
                router_log.seen_now().join("\n")
            ),
        }
    }
    println!(
        "{sent} hostile connections ({connected} made); router RSS {rss_before} KiB before, \
         {rss_after} KiB after; the router said:\n{said}"
    );
    assert_eq!(sent, 400, "the attack was cut short by its deadline");
    assert!(
        rss_after < rss_before + 64 * 1024,
        "the router grew from {rss_before} KiB to {rss_after} KiB under {sent} hostile connections"
    );
}

#[test]
fn generate_policy_writes_what_the_running_graph_does_and_configs_follow_from_it() {
    let router = zenoh_support::Router::start(zenoh_support::KAIROS);
    let mut talker = router.kairos();
    talker.env("ROS_SECURITY_ENCLAVE_OVERRIDE", "/tl/talker");
    let _talker = Running(publish(&mut talker, "/chatter", "x", 2000).spawn().unwrap());
    let out = router
        .kairos()
        .args([
            "security",
            "generate-policy",
            "--wait-for",
            "/chatter",
            "--spin-time",
            "60",
        ])
        .output()
        .unwrap();
    let xml = assert_ok("generate-policy", &out);
    for expected in [
        "<enclave path=\"/tl/talker\">",
        "<profile ns=\"/\" node=\"kairos_pub_",
        "<topics publish=\"ALLOW\">",
        "<topic>/chatter</topic>",
    ] {
        assert!(xml.contains(expected), "no {expected} in\n{xml}");
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.xml");
    std::fs::write(&policy, &xml).unwrap();
    let ks = dir.path().join("ks");
    let store = Keystore::create(&ks, Validity::default()).unwrap();
    for enclave in ["/zenohd", "/tl/talker"] {
        store
            .create_enclave(enclave, Validity::default(), false)
            .unwrap();
    }
    let out = kairos()
        .args(["security", "generate-configs", "--policy"])
        .arg(&policy)
        .arg("--keystore")
        .arg(&ks)
        .output()
        .unwrap();
    let written = assert_ok("generate-configs", &out);
    assert!(written.contains("enclaves/tl/talker.json5"), "{written}");
}

/// The talker example (a program of the user's kind: `kairos_zenoh::init`, a node with
/// parameters), built by the workspace build of scripts/test.
fn talker_example() -> PathBuf {
    let path = Path::new(zenoh_support::KAIROS)
        .parent()
        .expect("target dir")
        .join("examples/talker");
    if !path.is_file() {
        let built = kairos_testkit::process::cargo()
            .args(["build", "-p", "kairos-cli", "--example", "talker"])
            .args((!cfg!(debug_assertions)).then_some("--release"))
            .status()
            .unwrap();
        assert!(built.success(), "cargo build --example talker failed");
    }
    path
}

#[test]
fn a_program_takes_its_enclave_from_ros_args_and_an_allowed_call_works_while_others_are_refused() {
    let secured = Secured::new();
    let _router = secured.router();
    // A user's program, its enclave given as ROS 2 gives it: --ros-args --enclave.
    let mut talker = Command::new(talker_example());
    secured
        .enforced(&mut talker)
        .args(["--ros-args", "--enclave", "/tl/talker"])
        .env("KAIROS_TRANSPORT", "zenoh")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let _talker = Running(talker.spawn().unwrap());
    let heard = finish(
        spawn(echo(
            &mut secured.kairos_as("/tl/listener"),
            "/chatter",
            2,
            60,
        )),
        Duration::from_secs(90),
    );
    let heard = assert_ok("the listener of the talker example", &heard);
    assert_eq!(heard.matches("hello").count(), 2, "{heard}");
    // Its node as `kairos node info` shows it: what it does, and what its process's rules
    // denied (the runtime's own /rosout, which the policy leaves out: declared anyway).
    let info = secured
        .kairos_as("/tl/listener")
        .args([
            "node",
            "info",
            "/talker",
            "--spin-time",
            "30",
            "--timeout",
            "30",
        ])
        .output()
        .unwrap();
    let info = assert_ok("node info /talker", &info);
    for expected in [
        "  Publishers:\n    /chatter: std_msgs/msg/String\n",
        "  Access control (enclave /tl/talker, process ",
        "    Rules: ",
        "    Denied: publisher /rosout (1x): no allow rule covers it; declared anyway, zenoh drops its traffic",
    ] {
        assert!(info.contains(expected), "no {expected:?} in\n{info}");
    }

    // A service the policy lets the listener call, served in the talker's enclave.
    let _sensor = Running(
        secured
            .kairos_as("/tl/talker")
            .args(["param", "serve", "/sensor", "--timeout", "120"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let got = secured
        .kairos_as("/tl/listener")
        .args(["param", "get", "/sensor", "use_sim_time", "--timeout", "60"])
        .output()
        .unwrap();
    let text = assert_ok("param get over TLS", &got);
    assert!(text.contains("false"), "{text}");
    // One it does not: refused when the client is made, with the policy line, and
    // traced (`kairos:access_denied`) for babeltrace2 and the analyzer.
    let trace = tempfile::tempdir().unwrap();
    let refused = secured
        .kairos_as("/tl/listener")
        .args(["param", "list", "/sensor", "--timeout", "10"])
        .env("KAIROS_TRACE", trace.path())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("does not let enclave /tl/listener call /sensor/list_parameters"),
        "{}",
        stderr(&refused)
    );
    let events = kairos_testkit::babeltrace2_clean(&[], trace.path());
    let denial = events
        .lines()
        .find(|l| l.contains("kairos:access_denied") && l.contains("/sensor/list_parameters"))
        .unwrap_or_else(|| panic!("no access_denied event of the refused client:\n{events}"));
    for field in [
        "kind = \"client\"",
        "enclave = \"/tl/listener\"",
        "rule = \"\"",
        "refused = 1",
    ] {
        assert!(denial.contains(field), "{field} missing: {denial}");
    }
    let summary = kairos()
        .args(["trace", "summary"])
        .arg(trace.path())
        .output()
        .unwrap();
    let summary = assert_ok("kairos trace summary", &summary);
    assert!(
        summary.lines().any(|l| l.starts_with("access denied: enclave /tl/listener")
            && l.contains("client /sensor/list_parameters: no allow rule covers it; the program got an error")),
        "{summary}"
    );
}

/// Two routers of the router's enclave, the second connected to the first
/// (rmw_zenoh#468), and a client of each: the allowed topic crosses both routers, as
/// their rules let through between routers what some enclave may do. The sessions are
/// clients, so no direct peer link can carry it past the routers.
#[test]
fn the_allowed_topic_crosses_two_routers_of_the_routers_enclave() {
    let secured = Secured::new();
    let _first = secured.router();
    let second_port = free_loopback_port();
    let mut second = kairos()
        .args([
            "router",
            "--listen",
            &format!("tls/127.0.0.1:{second_port}"),
        ])
        .env(
            "ZENOH_ROUTER_CONFIG_URI",
            secured.configs().join("zenohd.json5"),
        )
        .env(
            "ZENOH_CONFIG_OVERRIDE",
            format!("connect/endpoints=[\"tls/127.0.0.1:{}\"]", secured.port),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = Lines::of(second.stdout.take().unwrap());
    let _second = Running(second);
    let line = lines.next_within(Duration::from_secs(30));
    assert!(
        line.as_deref().is_some_and(|l| l.contains("running")),
        "the second router did not start: {line:?}"
    );
    let client_of = |enclave: &str, port: u16| {
        let mut cmd = secured.kairos_as(enclave);
        cmd.env(
            "ZENOH_CONFIG_OVERRIDE",
            format!("mode=\"client\";connect/endpoints=[\"tls/127.0.0.1:{port}\"]"),
        );
        cmd
    };
    let listener = spawn(echo(
        &mut client_of("/tl/listener", second_port),
        "/chatter",
        3,
        60,
    ));
    let _talker = Running(
        publish(
            &mut client_of("/tl/talker", secured.port),
            "/chatter",
            "across",
            400,
        )
        .spawn()
        .unwrap(),
    );
    let got = finish(listener, Duration::from_secs(90));
    assert_ok("the listener behind the second router", &got);
    assert_eq!(
        stdout(&got).matches("across").count(),
        3,
        "{}",
        stdout(&got)
    );
}

/// Two hosts (network namespaces on a veth pair): the router and the listener on host A,
/// the talker on host B; the generated configurations, unchanged but for where each
/// process listens, carry the allowed topic across hosts over mutual TLS.
#[test]
fn the_allowed_topic_crosses_hosts_over_mutual_tls() {
    let hosts = hosts_support::TwoHosts::new();
    let secured = Secured::with_router(&hosts.addr(1), 7447);
    let mut router = hosts.exec(&hosts.a);
    router
        .arg("router")
        .env(
            "ZENOH_ROUTER_CONFIG_URI",
            secured.configs().join("zenohd.json5"),
        )
        .stdout(std::process::Stdio::piped());
    let mut router = spawn(&mut router);
    let started = zenoh_support::stdout_lines(&mut router).next_within(Duration::from_secs(30));
    assert!(
        started.as_deref().is_some_and(|l| l.contains("running")),
        "the router on host A said {started:?}"
    );
    let on = |ns: &str, host: u8, enclave: &str| {
        let mut cmd = hosts.exec(ns);
        cmd.env("ROS_SECURITY_ENABLE", "true")
            .env("ROS_SECURITY_STRATEGY", "Enforce")
            .env("ROS_SECURITY_KEYSTORE", secured.keystore())
            .env("ROS_SECURITY_ENCLAVE_OVERRIDE", enclave)
            .env(
                "ZENOH_CONFIG_OVERRIDE",
                format!("listen/endpoints=[\"tls/{}:0\"]", hosts.addr(host)),
            );
        cmd
    };
    let listener = spawn(echo(
        &mut on(&hosts.a, 1, "/tl/listener"),
        "/chatter",
        3,
        60,
    ));
    let _talker = Running(
        publish(
            &mut on(&hosts.b, 2, "/tl/talker"),
            "/chatter",
            "across",
            200,
        )
        .spawn()
        .unwrap(),
    );
    let got = finish(listener, Duration::from_secs(90));
    let text = assert_ok("the listener on host A", &got);
    assert_eq!(text.matches("across").count(), 3, "{text}");
}
