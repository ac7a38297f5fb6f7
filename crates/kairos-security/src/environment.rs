//! ROS 2's security variables, read as rcl reads them, checked before a process joins.
//!
//! - `ROS_SECURITY_ENABLE=true` turns security on (rcl's spelling: exactly `true`);
//! - `ROS_SECURITY_KEYSTORE`: the keystore; the enclave is `--ros-args --enclave PATH`,
//!   else `ROS_SECURITY_ENCLAVE_OVERRIDE`, else `/`;
//! - `ROS_SECURITY_STRATEGY=Enforce`: a process whose enclave's files are missing refuses
//!   to start, naming the first missing file; any other value is rcl's `Permissive`: it
//!   starts without security and says so.
//!
//! An enabled process's Zenoh session uses, in order: `ZENOH_SESSION_CONFIG_URI` (as
//! rmw_zenoh), else the configuration `kairos security generate-configs` wrote for its
//! enclave under `<keystore>/zenoh/`, else mutual TLS with the enclave's identity and no
//! access rules (said in a warning).

use std::path::PathBuf;

use crate::keystore::{CertificateFacts, Enclave, Keystore, KeystoreError};

/// The folder of a keystore where `generate-configs` writes by default.
pub const CONFIGS_DIR: &str = "zenoh";

/// What the environment asks of a process's security.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Security {
    /// Security is off (`ROS_SECURITY_ENABLE` is not `true`).
    Off,
    /// On, but permissive and the enclave's files are missing: the process runs without.
    Skipped {
        /// Why, for the warning.
        reason: String,
    },
    /// On, with the enclave's identity.
    Enclave {
        /// The identity.
        enclave: Enclave,
        /// The configuration generated for it, if there is one.
        generated: Option<PathBuf>,
    },
}

/// Security is required and cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum SecurityError {
    /// `ROS_SECURITY_KEYSTORE` is unset.
    #[error(
        "ROS_SECURITY_ENABLE=true and ROS_SECURITY_STRATEGY=Enforce, but ROS_SECURITY_KEYSTORE is not set: point it at a keystore (`kairos security create-keystore DIR`), or unset ROS_SECURITY_ENABLE"
    )]
    NoKeystore,
    /// The keystore or the enclave is incomplete.
    #[error("ROS_SECURITY_STRATEGY=Enforce: {0}")]
    Missing(#[from] KeystoreError),
    /// The enclave's certificate is not valid now: every peer would refuse it.
    #[error(
        "ROS_SECURITY_STRATEGY=Enforce: the certificate {cert} of enclave {enclave} is valid from {not_before} to {not_after} (Unix seconds), not now: issue it a new one with `kairos security create-enclave KEYSTORE {enclave} --replace`"
    )]
    NotValidNow {
        /// The enclave.
        enclave: String,
        /// Its certificate.
        cert: PathBuf,
        /// Valid from.
        not_before: i64,
        /// Valid until.
        not_after: i64,
    },
}

/// Reads the security variables through `var` and the enclave given on the command line.
pub fn resolve(
    var: impl Fn(&str) -> Option<String>,
    enclave_arg: Option<&str>,
) -> Result<Security, SecurityError> {
    if var("ROS_SECURITY_ENABLE").as_deref() != Some("true") {
        return Ok(Security::Off);
    }
    let enforce = var("ROS_SECURITY_STRATEGY").as_deref() == Some("Enforce");
    let skip = |reason: String| Ok(Security::Skipped { reason });
    let Some(keystore) = var("ROS_SECURITY_KEYSTORE").filter(|k| !k.is_empty()) else {
        return if enforce {
            Err(SecurityError::NoKeystore)
        } else {
            skip("ROS_SECURITY_KEYSTORE is not set".into())
        };
    };
    let name = enclave_arg
        .map(str::to_owned)
        .or_else(|| var("ROS_SECURITY_ENCLAVE_OVERRIDE").filter(|e| !e.is_empty()))
        .unwrap_or_else(|| "/".into());
    let found = Keystore::open(std::path::Path::new(&keystore))
        .map_err(SecurityError::from)
        .and_then(|store| {
            let enclave = store.enclave(&name)?;
            let facts = CertificateFacts::read(&enclave.cert())?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            if !facts.valid_at(now) {
                return Err(SecurityError::NotValidNow {
                    enclave: name.clone(),
                    cert: enclave.cert(),
                    not_before: facts.not_before,
                    not_after: facts.not_after,
                });
            }
            let generated = store
                .dir()
                .join(CONFIGS_DIR)
                .join(crate::configs::enclave_file(&name));
            Ok(Security::Enclave {
                enclave,
                generated: generated.exists().then_some(generated),
            })
        });
    match found {
        Ok(security) => Ok(security),
        Err(e) if enforce => Err(e),
        Err(e) => skip(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keystore::Validity;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn enforce_refuses_a_missing_file_by_name_and_permissive_runs_without() {
        let dir = tempfile::tempdir().unwrap();
        let store = Keystore::create(dir.path(), Validity::default()).unwrap();
        store
            .create_enclave("/robot/driver", Validity::default(), false)
            .unwrap();
        let keystore = dir.path().to_str().unwrap();
        let base = [
            ("ROS_SECURITY_ENABLE", "true"),
            ("ROS_SECURITY_KEYSTORE", keystore),
        ];

        assert_eq!(
            resolve(env(&[]), Some("/robot/driver")).unwrap(),
            Security::Off
        );
        match resolve(env(&base), Some("/robot/driver")).unwrap() {
            Security::Enclave { enclave, generated } => {
                assert_eq!(enclave.name, "/robot/driver");
                assert_eq!(generated, None);
            }
            other => panic!("{other:?}"),
        }
        let with_override = [
            base[0],
            base[1],
            ("ROS_SECURITY_ENCLAVE_OVERRIDE", "/robot/driver"),
        ];
        assert!(matches!(
            resolve(env(&with_override), None).unwrap(),
            Security::Enclave { .. }
        ));

        let enforce = [base[0], base[1], ("ROS_SECURITY_STRATEGY", "Enforce")];
        std::fs::remove_file(dir.path().join("enclaves/robot/driver/key.pem")).unwrap();
        let err = resolve(env(&enforce), Some("/robot/driver")).unwrap_err();
        assert!(
            err.to_string().contains("enclaves/robot/driver/key.pem"),
            "{err}"
        );
        assert!(matches!(
            resolve(env(&base), Some("/robot/driver")).unwrap(),
            Security::Skipped { .. }
        ));
        let past = Validity {
            not_before: time::OffsetDateTime::now_utc() - time::Duration::days(2),
            not_after: time::OffsetDateTime::now_utc() - time::Duration::days(1),
        };
        store.create_enclave("/old", past, false).unwrap();
        let err = resolve(env(&enforce), Some("/old")).unwrap_err();
        assert!(err.to_string().contains("--replace"), "{err}");
        let err = resolve(
            env(&[
                ("ROS_SECURITY_ENABLE", "true"),
                ("ROS_SECURITY_STRATEGY", "Enforce"),
            ]),
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("ROS_SECURITY_KEYSTORE"), "{err}");
    }
}
