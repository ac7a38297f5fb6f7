//! Zenoh configuration, with rmw_zenoh's defaults and its environment variables, so a
//! kairos process joins an existing ROS 2 system unchanged.
//!
//! - session: peer mode, connect to a router on `tcp/localhost:7447`, listen on
//!   `tcp/localhost:0`, multicast scouting off (processes find each other through the
//!   router, as rmw_zenoh's do), timestamping on (zenoh-ext's caches of transient-local
//!   publishers order samples by timestamp; rmw_zenoh's default file enables it too);
//! - router (`kairos router`): router mode, listen on `tcp/[::]:7447`, multicast off;
//! - `ZENOH_SESSION_CONFIG_URI` / `ZENOH_ROUTER_CONFIG_URI`: a json5 file replacing the
//!   defaults; `ZENOH_CONFIG_OVERRIDE`: `key=value` pairs separated by `;` applied last,
//!   e.g. `connect/endpoints=["tcp/127.0.0.1:7448"]`;
//! - `ROS_DOMAIN_ID`: the domain (default 0);
//! - shared memory (see [`crate::shared_memory`]): off by default, as in rmw_zenoh's
//!   default files; `transport/shared_memory/enabled=true` turns it on. rmw_zenoh's
//!   `ZENOH_SHM_ALLOC_SIZE` (the pool, bytes; default 48 MiB, rmw_zenoh's) and
//!   `ZENOH_SHM_MESSAGE_SIZE_THRESHOLD` (the smallest payload sent through it, bytes;
//!   default zenoh's 3072) override the file's values;
//! - ROS 2's security variables (see [`kairos_security::environment`]): with
//!   `ROS_SECURITY_ENABLE=true`, a session without `ZENOH_SESSION_CONFIG_URI` uses the
//!   configuration `kairos security generate-configs` wrote for its enclave
//!   (`--ros-args --enclave`, `ROS_SECURITY_ENCLAVE_OVERRIDE`; the router's is `/zenohd`),
//!   else mutual TLS with the enclave's identity and no access rules (a warning says so);
//!   with `ROS_SECURITY_STRATEGY=Enforce` a process whose enclave's files are missing, or
//!   whose configuration has an endpoint that is not `tls/`, refuses to start and says
//!   which file or endpoint.

use kairos_security::environment::{Security, SecurityError};
use kairos_security::keystore::Enclave;
use zenoh::Config;

/// A configuration that cannot be used, with what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file an environment variable names cannot be read or is not zenoh's.
    #[error("cannot read zenoh config file {path} (from {var}): {reason}")]
    File {
        /// The variable, e.g. `ZENOH_SESSION_CONFIG_URI`.
        var: &'static str,
        /// The file it names.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An override entry that cannot be applied.
    #[error("ZENOH_CONFIG_OVERRIDE entry '{entry}' is not key=value with a json5 value: {reason}")]
    Override {
        /// The entry as given.
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A size variable that is not a positive number of bytes.
    #[error("{var}='{value}' is not a positive number of bytes")]
    Size {
        /// The variable, e.g. `ZENOH_SHM_ALLOC_SIZE`.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// ROS 2's security variables ask for what cannot be had.
    #[error(transparent)]
    Security(#[from] SecurityError),
    /// Security is enforced and this process's certificate would be refused.
    #[error("ROS_SECURITY_STRATEGY=Enforce: {0}")]
    Identity(String),
    /// Security is enforced and the configuration would talk in the clear.
    #[error(
        "ROS_SECURITY_STRATEGY=Enforce, but the zenoh configuration has the endpoint {endpoint}, which is not TLS: write it tls/..., or use the configuration `kairos security generate-configs` writes"
    )]
    Unsecured {
        /// The endpoint in the clear.
        endpoint: String,
    },
    /// `ROS_DOMAIN_ID` is not a domain.
    #[error("ROS_DOMAIN_ID='{0}' is not a number from 0 to 232")]
    Domain(String),
}

fn set(config: &mut Config, key: &str, value: &str) {
    config
        .insert_json5(key, value)
        .unwrap_or_else(|e| panic!("built-in zenoh setting {key}={value} is valid: {e}"));
}

fn from_file(var: &'static str, path: &std::path::Path) -> Result<Config, ConfigError> {
    Config::from_file(path).map_err(|e| ConfigError::File {
        var,
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Whether the environment enforces security (rcl's `Enforce` strategy).
fn enforced() -> bool {
    std::env::var("ROS_SECURITY_ENABLE").as_deref() == Ok("true")
        && std::env::var("ROS_SECURITY_STRATEGY").as_deref() == Ok("Enforce")
}

fn load(
    var: &'static str,
    enclave: Option<&str>,
    defaults: impl FnOnce(&mut Config),
) -> Result<Config, ConfigError> {
    let security = kairos_security::environment::resolve(|v| std::env::var(v).ok(), enclave)?;
    let mut config = match std::env::var(var) {
        Ok(path) if !path.is_empty() => from_file(var, path.as_ref())?,
        _ => match &security {
            Security::Enclave {
                generated: Some(path),
                ..
            } => from_file("ROS_SECURITY_KEYSTORE", path)?,
            _ => {
                let mut config = Config::default();
                defaults(&mut config);
                config
            }
        },
    };
    match &security {
        Security::Enclave {
            enclave,
            generated: None,
        } if std::env::var(var).is_err() => {
            secure(&mut config, enclave);
            crate::report::warn(format_args!(
                "security: enclave {} talks over mutual TLS with no access rules: no configuration was generated for it; run `kairos security generate-configs` with a policy",
                enclave.name
            ));
        }
        Security::Skipped { reason } => crate::report::warn(format_args!(
            "security: ROS_SECURITY_ENABLE=true but this process runs without security ({reason}); set ROS_SECURITY_STRATEGY=Enforce to refuse instead"
        )),
        _ => {}
    }
    apply_shm_sizes(&mut config, |var| std::env::var(var).ok())?;
    apply_overrides(&mut config)?;
    if let Err(reason) = check_identity(&config) {
        if enforced() {
            return Err(ConfigError::Identity(reason));
        }
        crate::report::warn(format_args!("security: {reason}"));
    }
    if enforced() {
        check_secured(&config)?;
    }
    Ok(config)
}

/// Mutual TLS with `enclave`'s identity, as `kairos security generate-configs` writes it,
/// on the same hosts and ports (every endpoint's protocol becomes `tls`).
pub fn secure(config: &mut Config, enclave: &Enclave) {
    let tls = kairos_security::configs::tls(enclave);
    for (key, value) in tls.as_object().expect("the TLS settings are an object") {
        set(
            config,
            &format!("transport/link/tls/{key}"),
            &value.to_string(),
        );
    }
    for list in ["connect/endpoints", "listen/endpoints"] {
        let endpoints: Vec<String> = endpoints(config, list)
            .into_iter()
            .map(|e| match e.split_once('/') {
                Some((_, rest)) => format!("tls/{rest}"),
                None => e,
            })
            .collect();
        set(
            config,
            list,
            &serde_json::to_string(&endpoints).expect("strings"),
        );
    }
}

/// The endpoints of `list` (`connect/endpoints`), whatever the mode they are given for.
fn endpoints(config: &Config, list: &str) -> Vec<String> {
    fn collect(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
            serde_json::Value::Object(o) => o.values().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(value) = config
        .get_json(list)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
    {
        collect(&value, &mut out);
    }
    out
}

/// The certificate this configuration presents and the CA it trusts, if it has both.
pub(crate) fn tls_identity(config: &Config) -> Option<(String, String)> {
    let path = |key: &str| -> Option<String> {
        serde_json::from_str(&config.get_json(&format!("transport/link/tls/{key}")).ok()?).ok()
    };
    Some((path("connect_certificate")?, path("root_ca_certificate")?))
}

/// Why peers will refuse this process's TLS identity, if they will (see
/// [`kairos_security::keystore::check_identity`]); `Ok` without one.
fn check_identity(config: &Config) -> Result<(), String> {
    let Some((cert, ca)) = tls_identity(config) else {
        return Ok(());
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    kairos_security::keystore::check_identity(cert.as_ref(), ca.as_ref(), now)
}

fn check_secured(config: &Config) -> Result<(), ConfigError> {
    for list in ["connect/endpoints", "listen/endpoints"] {
        if let Some(endpoint) = endpoints(config, list)
            .into_iter()
            .find(|e| !(e.starts_with("tls/") || e.starts_with("quic/")))
        {
            return Err(ConfigError::Unsecured { endpoint });
        }
    }
    Ok(())
}

/// The shared-memory pool size of kairos's defaults: rmw_zenoh's (room for two 16 MiB
/// images and more in flight; zenoh's own default, 16 MiB, holds not even one).
pub const SHM_POOL_BYTES: usize = 48 << 20;

const SHM_POOL: &str = "transport/shared_memory/transport_optimization/pool_size";
const SHM_THRESHOLD: &str = "transport/shared_memory/transport_optimization/message_size_threshold";

fn apply_shm_sizes(
    config: &mut Config,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    for (var, key) in [
        ("ZENOH_SHM_ALLOC_SIZE", SHM_POOL),
        ("ZENOH_SHM_MESSAGE_SIZE_THRESHOLD", SHM_THRESHOLD),
    ] {
        let Some(value) = env(var) else {
            continue;
        };
        let bad = || ConfigError::Size {
            var,
            value: value.clone(),
        };
        let bytes: usize = value.trim().parse().map_err(|_| bad())?;
        if bytes == 0 {
            return Err(bad());
        }
        config
            .insert_json5(key, &bytes.to_string())
            .map_err(|_| bad())?;
    }
    Ok(())
}

fn apply_overrides(config: &mut Config) -> Result<(), ConfigError> {
    let Ok(overrides) = std::env::var("ZENOH_CONFIG_OVERRIDE") else {
        return Ok(());
    };
    for entry in overrides.split(';').filter(|e| !e.trim().is_empty()) {
        let bad = |reason: String| ConfigError::Override {
            entry: entry.to_owned(),
            reason,
        };
        let (key, value) = entry.split_once('=').ok_or_else(|| bad("no '='".into()))?;
        config
            .insert_json5(key.trim(), value.trim())
            .map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

/// The configuration of a kairos process's session.
pub fn session_config() -> Result<Config, ConfigError> {
    let enclave = kairos::graph::Context::global()
        .ros_args()
        .ok()
        .and_then(|args| args.enclave().map(str::to_owned));
    session_config_for(enclave.as_deref())
}

/// The configuration of a session of `enclave` (`None`: the environment's, else `/`).
pub fn session_config_for(enclave: Option<&str>) -> Result<Config, ConfigError> {
    load("ZENOH_SESSION_CONFIG_URI", enclave, |c| {
        set(c, "mode", r#""peer""#);
        set(c, "connect/endpoints", r#"["tcp/localhost:7447"]"#);
        set(c, "listen/endpoints", r#"["tcp/localhost:0"]"#);
        set(c, "scouting/multicast/enabled", "false");
        set(
            c,
            "timestamping/enabled",
            "{ router: true, peer: true, client: true }",
        );
        set(c, "transport/shared_memory/enabled", "false");
        set(c, SHM_POOL, &SHM_POOL_BYTES.to_string());
    })
}

/// The router's enclave unless `ROS_SECURITY_ENCLAVE_OVERRIDE` names another: the name
/// rmw_zenoh's generator gives the router's folder.
pub const ROUTER_ENCLAVE: &str = "/zenohd";

/// The configuration of `kairos router`.
pub fn router_config() -> Result<Config, ConfigError> {
    let enclave = std::env::var("ROS_SECURITY_ENCLAVE_OVERRIDE").ok();
    load(
        "ZENOH_ROUTER_CONFIG_URI",
        Some(enclave.as_deref().unwrap_or(ROUTER_ENCLAVE)),
        |c| {
            set(c, "mode", r#""router""#);
            set(c, "listen/endpoints", r#"["tcp/[::]:7447"]"#);
            set(c, "scouting/multicast/enabled", "false");
            set(c, "transport/shared_memory/enabled", "false");
        },
    )
}

/// `ROS_DOMAIN_ID`, default 0.
pub fn domain_id() -> Result<u32, ConfigError> {
    match std::env::var("ROS_DOMAIN_ID") {
        Ok(s) if !s.trim().is_empty() => s
            .trim()
            .parse()
            .ok()
            .filter(|d| *d <= 232)
            .ok_or(ConfigError::Domain(s)),
        _ => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(config: &Config, key: &str) -> String {
        config.get_json(key).expect(key)
    }

    #[test]
    fn shared_memory_is_off_by_default_with_rmw_zenohs_pool() {
        let config = session_config().expect("the defaults are valid");
        assert_eq!(json(&config, "transport/shared_memory/enabled"), "false");
        assert_eq!(json(&config, SHM_POOL), SHM_POOL_BYTES.to_string());
    }

    #[test]
    fn rmw_zenohs_size_variables_override_and_bad_ones_are_refused() {
        let mut config = Config::default();
        apply_shm_sizes(&mut config, |var| {
            Some(match var {
                "ZENOH_SHM_ALLOC_SIZE" => "100000000".into(),
                _ => " 512 ".into(),
            })
        })
        .expect("valid sizes");
        assert_eq!(json(&config, SHM_POOL), "100000000");
        assert_eq!(json(&config, SHM_THRESHOLD), "512");
        for bad in ["0", "-1", "48MiB", ""] {
            let err = apply_shm_sizes(&mut config, |var| {
                (var == "ZENOH_SHM_ALLOC_SIZE").then(|| bad.to_owned())
            })
            .expect_err(bad);
            assert!(
                err.to_string().contains("ZENOH_SHM_ALLOC_SIZE='")
                    && err.to_string().contains("positive number of bytes"),
                "{err}"
            );
        }
    }
}
