//! `kairos security`: SROS2 keystores, enclaves and policies, and the Zenoh
//! configurations that enforce them (see kairos-security).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use kairos_security::configs::{self, Options};
use kairos_security::environment::CONFIGS_DIR;
use kairos_security::policy::{Access, EnclavePolicy, Grant, Permission, Profile};
use kairos_security::{Keystore, Policy, Validity};
use kairos_zenoh::graph_key::EntityKind;

#[derive(Debug, Subcommand)]
pub enum SecurityCmd {
    /// Create a keystore: a certificate authority in SROS2's layout.
    CreateKeystore {
        /// The keystore's folder (created if missing).
        keystore: PathBuf,
        /// Days the CA is valid.
        #[arg(long, default_value_t = 3650)]
        days: i64,
    },
    /// Issue an enclave an identity (key and certificate, CN = its path) signed by the keystore's CA.
    CreateEnclave {
        /// The keystore.
        keystore: PathBuf,
        /// The enclave's path, e.g. /talker_listener/talker (the router's: /zenohd).
        enclave: String,
        /// Days the certificate is valid.
        #[arg(long, default_value_t = 3650)]
        days: i64,
        /// Issue a new identity to an enclave that has one.
        #[arg(long)]
        replace: bool,
    },
    /// List the enclaves of a keystore, with their certificates' validity.
    ListEnclaves {
        /// The keystore.
        keystore: PathBuf,
    },
    /// Write the SROS2 policy of the running graph: what each node publishes, subscribes, serves and calls.
    GeneratePolicy(GeneratePolicyArgs),
    /// Turn a policy and a keystore into Zenoh configurations: one per enclave (mutual TLS, access rules) and the router's.
    GenerateConfigs(GenerateConfigsArgs),
    /// Check, before it runs, what a process of an enclave would be: its identity, its configuration, and whether its rules allow the operations named (exit status 1 on any problem).
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The enclave (default: ROS_SECURITY_ENCLAVE_OVERRIDE, else /), as `--ros-args --enclave`.
    #[arg(long)]
    enclave: Option<String>,
    /// Topics it would publish on.
    #[arg(long, num_args = 1..)]
    publish: Vec<String>,
    /// Topics it would subscribe to.
    #[arg(long, num_args = 1..)]
    subscribe: Vec<String>,
    /// Services it would serve.
    #[arg(long, num_args = 1..)]
    serve: Vec<String>,
    /// Services it would call.
    #[arg(long, num_args = 1..)]
    call: Vec<String>,
    /// The type of the topics and services named, for rules that name types (default:
    /// any type).
    #[arg(long = "type")]
    ros_type: Option<String>,
}

#[derive(Debug, Args)]
pub struct GeneratePolicyArgs {
    /// The policy file to write (standard output if absent).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Seconds to gather the graph.
    #[arg(long, default_value_t = 2.0)]
    spin_time: f64,
    /// Return as soon as this node, topic or service is in the graph.
    #[arg(long)]
    wait_for: Option<String>,
}

#[derive(Debug, Args)]
pub struct GenerateConfigsArgs {
    /// The SROS2 policy.
    #[arg(short, long)]
    policy: PathBuf,
    /// The keystore holding every enclave of the policy and the router's.
    #[arg(short, long)]
    keystore: PathBuf,
    /// Where to write (default: the keystore's zenoh/ folder, where kairos processes find them).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The ROS domain (default ROS_DOMAIN_ID, else 0).
    #[arg(short = 'd', long)]
    ros_domain_id: Option<u32>,
    /// The router's enclave.
    #[arg(long, default_value = "/zenohd")]
    router_enclave: String,
    /// Where the router listens.
    #[arg(long, default_value = "tls/[::]:7447")]
    router_listen: String,
    /// Where sessions connect to the router.
    #[arg(long, default_value = "tls/localhost:7447")]
    router_connect: String,
    /// Where sessions listen for peers.
    #[arg(long, default_value = "tls/localhost:0")]
    session_listen: String,
}

pub fn run(cmd: SecurityCmd) -> anyhow::Result<ExitCode> {
    let validity = |days: i64| -> anyhow::Result<Validity> {
        anyhow::ensure!(days > 0, "--days {days}: give a number of days > 0");
        Ok(Validity::from_now(time::Duration::days(days)))
    };
    match cmd {
        SecurityCmd::CreateKeystore { keystore, days } => {
            Keystore::create(&keystore, validity(days)?)?;
            println!("created keystore {}", keystore.display());
        }
        SecurityCmd::CreateEnclave {
            keystore,
            enclave,
            days,
            replace,
        } => {
            let store = Keystore::open(&keystore)?;
            let created = store.create_enclave(&enclave, validity(days)?, replace)?;
            println!("created enclave {enclave} in {}", created.dir.display());
        }
        SecurityCmd::ListEnclaves { keystore } => {
            let store = Keystore::open(&keystore)?;
            for enclave in store.enclaves()? {
                let facts = kairos_security::keystore::CertificateFacts::read(&enclave.cert())?;
                let until = time::OffsetDateTime::from_unix_timestamp(facts.not_after)
                    .map(|t| t.date().to_string())
                    .unwrap_or_else(|_| facts.not_after.to_string());
                println!("{}  (valid until {until})", enclave.name);
            }
        }
        SecurityCmd::GeneratePolicy(args) => generate_policy(args)?,
        SecurityCmd::GenerateConfigs(args) => generate_configs(args)?,
        SecurityCmd::Check(args) => return Ok(check(args)),
    }
    Ok(ExitCode::SUCCESS)
}

/// `kairos security check`: one line per finding, problems marked, then the count.
fn check(args: CheckArgs) -> ExitCode {
    use kairos_zenoh::security_check::{self, Operation};
    let operations: Vec<Operation> = [
        (EntityKind::Publisher, &args.publish),
        (EntityKind::Subscription, &args.subscribe),
        (EntityKind::Service, &args.serve),
        (EntityKind::Client, &args.call),
    ]
    .into_iter()
    .flat_map(|(kind, names)| {
        let ros_type = &args.ros_type;
        names.iter().map(move |name| Operation {
            kind,
            name: kairos_tools::absolute_name(name),
            ros_type: ros_type.clone(),
        })
    })
    .collect();
    let findings = security_check::check(args.enclave.as_deref(), &operations);
    for f in &findings {
        let mark = if f.problem { "PROBLEM" } else { "ok" };
        println!("{mark:>7}  {}: {}", f.subject, f.text);
    }
    let problems = findings.iter().filter(|f| f.problem).count();
    println!("{problems} problem(s)");
    if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn generate_configs(args: GenerateConfigsArgs) -> anyhow::Result<()> {
    let policy = Policy::read(&args.policy)?;
    let keystore = Keystore::open(&args.keystore)?;
    let domain = match args.ros_domain_id {
        Some(domain) => domain,
        None => kairos_zenoh::config::domain_id()?,
    };
    let options = Options {
        domain,
        router_enclave: args.router_enclave,
        router_listen: args.router_listen,
        router_connect: args.router_connect,
        session_listen: args.session_listen,
    };
    let generated = configs::generate(&policy, &keystore, &options)?;
    let dir = args
        .output
        .unwrap_or_else(|| keystore.dir().join(CONFIGS_DIR));
    let written = configs::write(&generated, &dir)
        .with_context(|| format!("cannot write the configurations under {}", dir.display()))?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}

/// The graph's nodes as a policy: each node's enclave (`/` when it announces none), its
/// profile listing what it publishes, subscribes, serves and calls, as `ros2 security
/// generate_policy` writes it. Hidden nodes (`_` first) and this command's own are left out.
fn generate_policy(args: GeneratePolicyArgs) -> anyhow::Result<()> {
    let transport = kairos_tools::open_transport()?;
    let spin = kairos_tools::seconds("--spin-time", args.spin_time)?;
    let wait_for = args.wait_for.clone();
    transport
        .graph()
        .wait_until(std::time::Instant::now() + spin, |tokens| {
            wait_for.as_deref().is_some_and(|name| {
                tokens.iter().any(|t| {
                    t.node.name == name.trim_start_matches('/')
                        || t.endpoint.as_ref().is_some_and(|e| e.name == name)
                })
            })
        });
    let own_zid = transport.session().zid().to_string();
    let mut enclaves: Vec<EnclavePolicy> = Vec::new();
    for token in transport.graph().tokens() {
        if token.node.zid == own_zid || token.node.name.starts_with('_') {
            continue;
        }
        let Some(endpoint) = &token.endpoint else {
            continue;
        };
        let access = match token.kind {
            EntityKind::Publisher => Access::Publish,
            EntityKind::Subscription => Access::Subscribe,
            EntityKind::Service => Access::Reply,
            EntityKind::Client => Access::Request,
            EntityKind::Node => continue,
        };
        let path = match token.node.enclave.as_str() {
            "" => "/".to_owned(),
            e => e.to_owned(),
        };
        let enclave = match enclaves.iter().position(|e| e.path == path) {
            Some(i) => &mut enclaves[i],
            None => {
                enclaves.push(EnclavePolicy {
                    path,
                    profiles: Vec::new(),
                });
                enclaves.last_mut().expect("just pushed")
            }
        };
        let (ns, node) = (&token.node.namespace, &token.node.name);
        let profile = match enclave
            .profiles
            .iter()
            .position(|p| &p.ns == ns && &p.node == node)
        {
            Some(i) => &mut enclave.profiles[i],
            None => {
                enclave.profiles.push(Profile {
                    ns: ns.clone(),
                    node: node.clone(),
                    grants: Vec::new(),
                });
                enclave.profiles.last_mut().expect("just pushed")
            }
        };
        profile.grants.push(Grant {
            access,
            permission: Permission::Allow,
            name: endpoint.name.clone(),
        });
    }
    enclaves.sort_by(|a, b| a.path.cmp(&b.path));
    for enclave in &mut enclaves {
        enclave
            .profiles
            .sort_by(|a, b| (&a.ns, &a.node).cmp(&(&b.ns, &b.node)));
    }
    anyhow::ensure!(
        !enclaves.is_empty(),
        "no node was seen in {:.1} s: start the system first, check ROS_DOMAIN_ID and that a router runs, or give a longer --spin-time",
        args.spin_time
    );
    let xml = Policy { enclaves }.to_xml();
    match args.output {
        Some(path) => std::fs::write(&path, xml)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{xml}"),
    }
    Ok(())
}
