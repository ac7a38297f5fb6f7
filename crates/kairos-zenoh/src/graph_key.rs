//! Key expressions: where data goes, and the liveliness tokens by which the graph is seen.
//!
//! What this module promises (facts from rmw_zenoh's design and `liveliness_utils`):
//! - data key `<domain>/<name without its outer slashes>/<dds type>/<RIHS01 hash>`, for
//!   topics and services alike (a service uses its service type and hash);
//! - liveliness token `@ros2_lv/<domain>/<zid>/<nid>/<id>/<kind>/<enclave>/<ns>/<node>`,
//!   followed for endpoints by `/<name>/<dds type>/<hash>/<qos>`; every `/` inside a field is
//!   written `%` (so the root namespace is `%`, an unset enclave `%`);
//! - QoS written `<rel>:<dur>:<hist>,<depth>:<deadline>:<lifespan>:<liveliness>` with every
//!   part equal to rmw_zenoh's default (reliable, volatile, keep last 42, infinite
//!   durations, automatic liveliness) left empty; a duration is `<sec>,<nsec>`, the
//!   liveliness `<kind>,<lease sec>,<lease nsec>`, with rmw's numbers;
//! - an entity's gid is XXH3-128 of its token, low 64 bits then high 64 bits, little endian.
//!
//! Parsing is lenient about what others write (any QoS numbers) and strict about shape:
//! a token that is not one is a [`TokenError`].

use crate::attachment::Gid;
use crate::message::ros_type_name;
use kairos::graph::{GraphEntity, Liveliness, Qos};
use kairos::time::Duration;

/// The key prefix of every rmw_zenoh liveliness token.
pub const ADMIN_SPACE: &str = "@ros2_lv";
/// rmw_zenoh's default history depth (a depth equal to it is left out of tokens).
pub const DEFAULT_DEPTH: u64 = 42;

/// The data key expression of a topic or service.
pub fn data_key(domain: u32, name: &str, dds_type: &str, hash: &str) -> String {
    let name = name.strip_prefix('/').unwrap_or(name);
    let name = name.strip_suffix('/').unwrap_or(name);
    format!("{domain}/{name}/{dds_type}/{hash}")
}

/// `/` written `%`, as in every liveliness token field.
pub fn mangle(field: &str) -> String {
    field.replace('/', "%")
}

/// A token field with `%` read back as `/`.
pub fn unmangle(field: &str) -> String {
    field.replace('%', "/")
}

/// What kind of entity a token announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    /// A node (`NN`).
    Node,
    /// A publisher (`MP`).
    Publisher,
    /// A subscription (`MS`).
    Subscription,
    /// A service server (`SS`).
    Service,
    /// A service client (`SC`).
    Client,
}

impl EntityKind {
    /// The two letters a token writes for the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Node => "NN",
            EntityKind::Publisher => "MP",
            EntityKind::Subscription => "MS",
            EntityKind::Service => "SS",
            EntityKind::Client => "SC",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "NN" => EntityKind::Node,
            "MP" => EntityKind::Publisher,
            "MS" => EntityKind::Subscription,
            "SS" => EntityKind::Service,
            "SC" => EntityKind::Client,
            _ => return None,
        })
    }
}

/// Reliability as rmw numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reliability {
    /// Retransmitted until delivered (1).
    Reliable,
    /// Sent once (2).
    BestEffort,
}

/// Durability as rmw numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Only messages published after a subscription joins (2).
    Volatile,
    /// The last `depth` messages for late joiners too (1).
    TransientLocal,
}

/// History as rmw numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum History {
    /// The last `depth` messages are kept (1).
    KeepLast(u64),
    /// The depth is written as rmw_zenoh writes it (a keep-all QoS still has one).
    KeepAll(u64),
}

/// The QoS a token announces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WireQos {
    /// Reliable or best effort.
    pub reliability: Reliability,
    /// Volatile or transient local.
    pub durability: Durability,
    /// Keep last (with its depth) or keep all.
    pub history: History,
    /// The deadline (`None`: infinite).
    pub deadline: Option<Duration>,
    /// The lifespan (`None`: infinite).
    pub lifespan: Option<Duration>,
    /// Automatic or manual by topic (rmw's deprecated manual-by-node is read as manual by
    /// topic, the nearest kairos has).
    pub liveliness: Liveliness,
    /// The liveliness lease (`None`: infinite).
    pub liveliness_lease: Option<Duration>,
}

/// rmw's infinite duration, `RMW_DURATION_INFINITE`, as (seconds, nanoseconds): a part
/// equal to it is left out of a token.
const INFINITE: (u64, u64) = (9_223_372_036, 854_775_807);

/// rmw's number for manual-by-topic liveliness (automatic is 1, the default).
const MANUAL_BY_TOPIC: &str = "3";

impl WireQos {
    /// What it announces, as kairos settings (a depth beyond what this machine can count
    /// is read as the largest it can).
    pub fn qos(&self) -> Qos {
        let depth = |d: u64| usize::try_from(d).unwrap_or(usize::MAX);
        let mut qos = Qos::keep_last(1);
        qos.reliability = match self.reliability {
            Reliability::Reliable => kairos::graph::Reliability::Reliable,
            Reliability::BestEffort => kairos::graph::Reliability::BestEffort,
        };
        qos.durability = match self.durability {
            Durability::Volatile => kairos::graph::Durability::Volatile,
            Durability::TransientLocal => kairos::graph::Durability::TransientLocal,
        };
        qos.history = match self.history {
            History::KeepLast(d) => kairos::graph::History::KeepLast(depth(d)),
            History::KeepAll(d) => kairos::graph::History::KeepAll { bound: depth(d) },
        };
        qos.deadline = self.deadline;
        qos.lifespan = self.lifespan;
        qos.liveliness = self.liveliness;
        qos.liveliness_lease = self.liveliness_lease;
        qos
    }
}

impl Default for WireQos {
    fn default() -> Self {
        Self {
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            history: History::KeepLast(DEFAULT_DEPTH),
            deadline: None,
            lifespan: None,
            liveliness: Liveliness::Automatic,
            liveliness_lease: None,
        }
    }
}

/// A duration as a token writes it: `<sec>,<nsec>`, each left out when equal to
/// infinite's.
fn encode_duration(duration: Option<Duration>) -> String {
    let (sec, nsec) = match duration {
        None => INFINITE,
        Some(d) => {
            let nanos = d.as_nanos().max(0) as u64;
            (nanos / 1_000_000_000, nanos % 1_000_000_000)
        }
    };
    let part = |value: u64, infinite: u64| {
        if value == infinite {
            String::new()
        } else {
            value.to_string()
        }
    };
    format!("{},{}", part(sec, INFINITE.0), part(nsec, INFINITE.1))
}

/// Reads `<sec>,<nsec>` (empty parts infinite's); `None` for infinite, or when not
/// numbers.
fn parse_duration(sec: &str, nsec: &str) -> Option<Option<Duration>> {
    let part = |text: &str, infinite: u64| {
        if text.is_empty() {
            Some(infinite)
        } else {
            text.parse::<u64>().ok()
        }
    };
    let (sec, nsec) = (part(sec, INFINITE.0)?, part(nsec, INFINITE.1)?);
    if (sec, nsec) == INFINITE {
        return Some(None);
    }
    let nanos = sec.saturating_mul(1_000_000_000).saturating_add(nsec);
    Some(Some(Duration::from_nanos(
        i64::try_from(nanos).unwrap_or(i64::MAX),
    )))
}

impl WireQos {
    /// The QoS field of a token, as rmw_zenoh writes it.
    pub fn encode(&self) -> String {
        let reliability = match self.reliability {
            Reliability::Reliable => "",
            Reliability::BestEffort => "2",
        };
        let durability = match self.durability {
            Durability::Volatile => "",
            Durability::TransientLocal => "1",
        };
        let history = match self.history {
            History::KeepLast(DEFAULT_DEPTH) => ",".to_owned(),
            History::KeepLast(depth) => format!(",{depth}"),
            History::KeepAll(DEFAULT_DEPTH) => "2,".to_owned(),
            History::KeepAll(depth) => format!("2,{depth}"),
        };
        let liveliness = match self.liveliness {
            Liveliness::Automatic => "",
            Liveliness::ManualByTopic => MANUAL_BY_TOPIC,
        };
        format!(
            "{reliability}:{durability}:{history}:{}:{}:{liveliness},{}",
            encode_duration(self.deadline),
            encode_duration(self.lifespan),
            encode_duration(self.liveliness_lease),
        )
    }

    /// Reads the QoS field of a token.
    pub fn parse(s: &str) -> Result<Self, TokenError> {
        let bad = || TokenError::Qos(s.to_owned());
        let parts: Vec<&str> = s.split(':').collect();
        let [rel, dur, hist, deadline, lifespan, liveliness] = parts[..] else {
            return Err(bad());
        };
        let reliability = match rel {
            "2" => Reliability::BestEffort,
            _ => Reliability::Reliable,
        };
        let durability = match dur {
            "1" => Durability::TransientLocal,
            _ => Durability::Volatile,
        };
        let (kind, depth) = hist.split_once(',').ok_or_else(bad)?;
        let depth = if depth.is_empty() {
            DEFAULT_DEPTH
        } else {
            depth.parse().map_err(|_| bad())?
        };
        let history = match kind {
            "2" => History::KeepAll(depth),
            _ => History::KeepLast(depth),
        };
        let duration = |text: &str| {
            let (sec, nsec) = text.split_once(',').ok_or_else(bad)?;
            parse_duration(sec, nsec).ok_or_else(bad)
        };
        let (kind, lease) = liveliness.split_once(',').ok_or_else(bad)?;
        Ok(Self {
            reliability,
            durability,
            history,
            deadline: duration(deadline)?,
            lifespan: duration(lifespan)?,
            liveliness: match kind {
                "2" | MANUAL_BY_TOPIC => Liveliness::ManualByTopic,
                _ => Liveliness::Automatic,
            },
            liveliness_lease: duration(lease)?,
        })
    }
}

/// The node part of every token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeKey {
    /// The ROS domain id.
    pub domain: u32,
    /// The zenoh session id, as zenoh displays it.
    pub zid: String,
    /// The node's id in its session.
    pub nid: u64,
    /// Empty when unset.
    pub enclave: String,
    /// The node's namespace, `/` for the root.
    pub namespace: String,
    /// The node's name.
    pub name: String,
}

/// The endpoint part of a publisher, subscription, service or client token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EndpointKey {
    /// The fully qualified topic or service name.
    pub name: String,
    /// The type as DDS mangles it, e.g. `std_msgs::msg::dds_::String_`.
    pub dds_type: String,
    /// The type's RIHS01 hash, as text.
    pub hash: String,
    /// The QoS the entity announces.
    pub qos: WireQos,
}

/// A liveliness token: an entity that exists while the token does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Token {
    /// The node the entity belongs to.
    pub node: NodeKey,
    /// The entity's id in its session (the node's own for a node token).
    pub id: u64,
    /// What the token announces.
    pub kind: EntityKind,
    /// None for a node.
    pub endpoint: Option<EndpointKey>,
}

/// A key expression that is not an rmw_zenoh liveliness token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The key's parts are not a token's.
    #[error("'{0}' is not an rmw_zenoh liveliness token (@ros2_lv/<domain>/<zid>/...)")]
    Shape(String),
    /// The QoS field does not parse.
    #[error("QoS '{0}' is not rmw_zenoh's <rel>:<dur>:<hist>,<depth>:... form")]
    Qos(String),
}

impl Token {
    /// The token of node `node` itself (its entity id is the node's id, as rmw_zenoh
    /// writes it).
    pub fn of_node(node: NodeKey) -> Self {
        Self {
            id: node.nid,
            node,
            kind: EntityKind::Node,
            endpoint: None,
        }
    }

    /// The entity as the graph shows it (the type as ROS names it, when it can be read).
    pub fn entity(&self) -> GraphEntity {
        let endpoint = self.endpoint.as_ref();
        GraphEntity {
            kind: match self.kind {
                EntityKind::Node => kairos::graph::EntityKind::Node,
                EntityKind::Publisher => kairos::graph::EntityKind::Publisher,
                EntityKind::Subscription => kairos::graph::EntityKind::Subscription,
                EntityKind::Service => kairos::graph::EntityKind::Service,
                EntityKind::Client => kairos::graph::EntityKind::Client,
            },
            node_name: self.node.name.clone(),
            node_namespace: self.node.namespace.clone(),
            name: endpoint.map(|e| e.name.clone()).unwrap_or_default(),
            type_name: endpoint
                .map(|e| ros_type_name(&e.dds_type).unwrap_or_else(|| e.dds_type.clone()))
                .unwrap_or_default(),
            type_hash: endpoint
                .filter(|_| matches!(self.kind, EntityKind::Publisher | EntityKind::Subscription))
                .map(|e| e.hash.clone())
                .unwrap_or_default(),
            qos: endpoint
                .filter(|_| matches!(self.kind, EntityKind::Publisher | EntityKind::Subscription))
                .map(|e| e.qos.qos()),
            local: false,
            liveliness_lost: false,
        }
    }

    /// The token's liveliness key expression.
    pub fn key_expr(&self) -> String {
        let n = &self.node;
        let enclave = if n.enclave.is_empty() {
            "%".to_owned()
        } else {
            mangle(&n.enclave)
        };
        let mut key = format!(
            "{ADMIN_SPACE}/{}/{}/{}/{}/{}/{enclave}/{}/{}",
            n.domain,
            n.zid,
            n.nid,
            self.id,
            self.kind.as_str(),
            mangle(&n.namespace),
            mangle(&n.name)
        );
        if let Some(e) = &self.endpoint {
            key.push_str(&format!(
                "/{}/{}/{}/{}",
                mangle(&e.name),
                mangle(&e.dds_type),
                mangle(&e.hash),
                e.qos.encode()
            ));
        }
        key
    }

    /// The entity's gid: XXH3-128 of the token, low half first, each half little endian.
    pub fn gid(&self) -> Gid {
        gid_of(&self.key_expr())
    }

    /// Reads a liveliness key expression.
    pub fn parse(key: &str) -> Result<Self, TokenError> {
        let bad = || TokenError::Shape(key.to_owned());
        let chunks: Vec<&str> = key.split('/').collect();
        if chunks.len() < 9 || chunks[0] != ADMIN_SPACE {
            return Err(bad());
        }
        let enclave = unmangle(chunks[6]);
        let node = NodeKey {
            domain: chunks[1].parse().map_err(|_| bad())?,
            zid: chunks[2].to_owned(),
            nid: chunks[3].parse().map_err(|_| bad())?,
            enclave: if enclave == "/" {
                String::new()
            } else {
                enclave
            },
            namespace: unmangle(chunks[7]),
            name: unmangle(chunks[8]),
        };
        let kind = EntityKind::parse(chunks[5]).ok_or_else(bad)?;
        let endpoint = match (kind, chunks.len()) {
            (EntityKind::Node, 9) => None,
            // Newer rmw_zenoh may add chunks after the QoS; they are not ours to read.
            (EntityKind::Node, _) | (_, ..13) => return Err(bad()),
            _ => Some(EndpointKey {
                name: unmangle(chunks[9]),
                dds_type: unmangle(chunks[10]),
                hash: unmangle(chunks[11]),
                qos: WireQos::parse(chunks[12])?,
            }),
        };
        Ok(Self {
            node,
            id: chunks[4].parse().map_err(|_| bad())?,
            kind,
            endpoint,
        })
    }
}

/// XXH3-128 of `key`, stored as rmw_zenoh stores it.
pub fn gid_of(key: &str) -> Gid {
    xxhash_rust::xxh3::xxh3_128(key.as_bytes()).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRING_HASH: &str =
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    fn node(zid: &str, name: &str) -> NodeKey {
        NodeKey {
            domain: 0,
            zid: zid.into(),
            nid: 0,
            enclave: String::new(),
            namespace: "/".into(),
            name: name.into(),
        }
    }

    #[test]
    fn data_keys_strip_one_outer_slash() {
        assert_eq!(
            data_key(0, "/chatter", "std_msgs::msg::dds_::String_", STRING_HASH),
            format!("0/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}")
        );
        assert_eq!(
            data_key(
                2,
                "/robot1/chatter",
                "std_msgs::msg::dds_::String_",
                STRING_HASH
            ),
            format!("2/robot1/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}")
        );
    }

    // Both tokens are quoted from rmw_zenoh's design.md.
    #[test]
    fn tokens_match_rmw_zenoh_examples() {
        let listener = Token {
            node: node("aac3178e146ba6f1fc6e6a4085e77f21", "listener"),
            id: 0,
            kind: EntityKind::Node,
            endpoint: None,
        };
        assert_eq!(
            listener.key_expr(),
            "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener"
        );
        let talker = Token {
            node: node("8b20917502ee955ac4476e0266340d5c", "talker"),
            id: 10,
            kind: EntityKind::Publisher,
            endpoint: Some(EndpointKey {
                name: "/chatter".into(),
                dds_type: "std_msgs::msg::dds_::String_".into(),
                hash: STRING_HASH.into(),
                qos: WireQos {
                    history: History::KeepLast(7),
                    ..WireQos::default()
                },
            }),
        };
        let key = format!(
            "@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,7:,:,:,,"
        );
        assert_eq!(talker.key_expr(), key);
        assert_eq!(Token::parse(&key).unwrap(), talker);
        assert_eq!(Token::parse(&listener.key_expr()).unwrap(), listener);
    }

    #[test]
    fn qos_writes_only_what_differs_from_rmw_zenoh_defaults() {
        assert_eq!(WireQos::default().encode(), "::,:,:,:,,");
        let qos = WireQos {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            history: History::KeepAll(DEFAULT_DEPTH),
            ..WireQos::default()
        };
        assert_eq!(qos.encode(), "2:1:2,:,:,:,,");
        assert_eq!(WireQos::parse(&qos.encode()).unwrap(), qos);
        let keep_all_100 = WireQos {
            history: History::KeepAll(100),
            ..WireQos::default()
        };
        assert_eq!(keep_all_100.encode(), "::2,100:,:,:,,");
        assert_eq!(WireQos::parse("::2,100:,:,:,,").unwrap(), keep_all_100);
        assert!(WireQos::parse("1:2").is_err());
    }

    #[test]
    fn any_qos_reads_back_as_it_was_written() {
        // A fixed xorshift stream: random, and the same on every run.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let duration = |next: &mut dyn FnMut() -> u64| match next() % 4 {
            0 => None,
            // Whole seconds, a nanosecond, the largest finite, and any.
            1 => Some(Duration::from_secs((next() % 100_000) as i64 + 1)),
            2 => Some(Duration::from_nanos(
                [1, i64::MAX - 1][(next() % 2) as usize],
            )),
            _ => Some(Duration::from_nanos(
                (next() >> 1).max(1) as i64 % (i64::MAX - 1) + 1,
            )),
        };
        for _ in 0..5_000 {
            let depth = [0, 1, DEFAULT_DEPTH, next() % 1_000_000][(next() % 4) as usize];
            let qos = WireQos {
                reliability: [Reliability::Reliable, Reliability::BestEffort]
                    [(next() % 2) as usize],
                durability: [Durability::Volatile, Durability::TransientLocal]
                    [(next() % 2) as usize],
                history: if next() % 2 == 0 {
                    History::KeepLast(depth)
                } else {
                    History::KeepAll(depth)
                },
                deadline: duration(&mut next),
                lifespan: duration(&mut next),
                liveliness: [Liveliness::Automatic, Liveliness::ManualByTopic]
                    [(next() % 2) as usize],
                liveliness_lease: duration(&mut next),
            };
            let text = qos.encode();
            assert_eq!(WireQos::parse(&text).as_ref(), Ok(&qos), "{text}");
            assert_eq!(text.matches(':').count(), 5, "six parts: {text}");
        }
    }

    #[test]
    fn deadline_lifespan_and_liveliness_are_written_as_rmw_zenoh_writes_them() {
        let qos = WireQos {
            deadline: Some(Duration::from_millis(1500)),
            lifespan: Some(Duration::from_secs(2)),
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease: Some(Duration::from_millis(250)),
            ..WireQos::default()
        };
        assert_eq!(qos.encode(), "::,:1,500000000:2,0:3,0,250000000");
        assert_eq!(WireQos::parse(&qos.encode()).unwrap(), qos);
        // rmw's manual-by-node (2) is read as manual by topic; a lone nanosecond part
        // keeps infinite's seconds.
        let parsed = WireQos::parse("::,:,:,5:2,,").unwrap();
        assert_eq!(parsed.liveliness, Liveliness::ManualByTopic);
        assert_eq!(
            parsed.lifespan,
            Some(Duration::from_nanos(9_223_372_036_000_000_005))
        );
        assert!(WireQos::parse("::,:x,1:,:,,").is_err(), "not a number");
        assert!(WireQos::parse("::,:1:,:,,").is_err(), "no nanosecond part");
        let kairos = qos.qos();
        assert_eq!(kairos.deadline, Some(Duration::from_millis(1500)));
        assert_eq!(kairos.liveliness, Liveliness::ManualByTopic);
    }

    #[test]
    fn namespaces_and_enclaves_are_mangled() {
        let token = Token {
            node: NodeKey {
                domain: 3,
                zid: "1f".into(),
                nid: 4,
                enclave: "/secure".into(),
                namespace: "/robot/arm".into(),
                name: "driver".into(),
            },
            id: 4,
            kind: EntityKind::Node,
            endpoint: None,
        };
        assert_eq!(
            token.key_expr(),
            "@ros2_lv/3/1f/4/4/NN/%secure/%robot%arm/driver"
        );
        assert_eq!(Token::parse(&token.key_expr()).unwrap(), token);
        assert!(Token::parse("@ros2_lv/0/zid/0/0/XX/%/%/n").is_err());
        assert!(Token::parse("0/chatter").is_err());
    }

    #[test]
    fn gid_is_xxh3_128_low_half_first() {
        // XXH3-128 of the empty input (seed 0) is 99aa06d3014798d86001c324468d497f: high
        // half 99aa06d3014798d8, low half 6001c324468d497f.
        let gid = gid_of("");
        assert_eq!(&gid[..8], &0x6001c324468d497fu64.to_le_bytes());
        assert_eq!(&gid[8..], &0x99aa06d3014798d8u64.to_le_bytes());
    }
}
