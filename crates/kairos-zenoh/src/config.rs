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
//! - `ROS_DOMAIN_ID`: the domain (default 0).

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
    /// `ROS_DOMAIN_ID` is not a domain.
    #[error("ROS_DOMAIN_ID='{0}' is not a number from 0 to 232")]
    Domain(String),
}

fn set(config: &mut Config, key: &str, value: &str) {
    config
        .insert_json5(key, value)
        .unwrap_or_else(|e| panic!("built-in zenoh setting {key}={value} is valid: {e}"));
}

fn load(var: &'static str, defaults: impl FnOnce(&mut Config)) -> Result<Config, ConfigError> {
    let mut config = match std::env::var(var) {
        Ok(path) if !path.is_empty() => {
            Config::from_file(&path).map_err(|e| ConfigError::File {
                var,
                path,
                reason: e.to_string(),
            })?
        }
        _ => {
            let mut config = Config::default();
            defaults(&mut config);
            config
        }
    };
    apply_overrides(&mut config)?;
    Ok(config)
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
    load("ZENOH_SESSION_CONFIG_URI", |c| {
        set(c, "mode", r#""peer""#);
        set(c, "connect/endpoints", r#"["tcp/localhost:7447"]"#);
        set(c, "listen/endpoints", r#"["tcp/localhost:0"]"#);
        set(c, "scouting/multicast/enabled", "false");
        set(
            c,
            "timestamping/enabled",
            "{ router: true, peer: true, client: true }",
        );
    })
}

/// The configuration of `kairos router`.
pub fn router_config() -> Result<Config, ConfigError> {
    load("ZENOH_ROUTER_CONFIG_URI", |c| {
        set(c, "mode", r#""router""#);
        set(c, "listen/endpoints", r#"["tcp/[::]:7447"]"#);
        set(c, "scouting/multicast/enabled", "false");
    })
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
