//! SROS2 keystores: a certificate authority and one identity per enclave, in the layout
//! `ros2 security create_keystore` and `create_enclave` write, so one keystore serves
//! kairos, rmw_zenoh and ROS 2's tools alike.
//!
//! ```text
//! keystore/
//!   public/ca.cert.pem            the CA (identity_ca.cert.pem, permissions_ca.cert.pem: copies)
//!   private/ca.key.pem            the CA's key (identity_ca.key.pem, permissions_ca.key.pem: copies)
//!   enclaves/<path>/cert.pem      an enclave's certificate, CN = its path ("/robot/driver")
//!   enclaves/<path>/key.pem       its key (PKCS#8, ECDSA P-256, as SROS2's)
//!   enclaves/<path>/identity_ca.cert.pem, permissions_ca.cert.pem   the CA, beside it
//! ```
//!
//! What it promises:
//! - keys are ECDSA P-256 (SROS2's `prime256v1`), certificates X.509 v3, the CA's
//!   constrained to signing, an enclave's to a leaf for both TLS client and server;
//! - an existing keystore is never overwritten: creating one where one exists is an error,
//!   creating an enclave that exists is an error unless asked to replace it;
//! - every failure names the file and what to do ([`KeystoreError`]).
//!
//! SROS2's DDS-Security artifacts (`governance.p7s`, `permissions.p7s`, S/MIME signed XML)
//! are not written: Zenoh does not read them. Access rules live in the Zenoh
//! configurations [`crate::configs`] generates.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use time::{Duration, OffsetDateTime};

/// The CA's common name, SROS2's.
pub const CA_COMMON_NAME: &str = "sros2testCA";

/// How long certificates are valid by default: SROS2's ten years.
pub const DEFAULT_VALIDITY: Duration = Duration::days(3650);

/// A keystore that cannot be created or read, with what to do.
#[derive(Debug, thiserror::Error)]
pub enum KeystoreError {
    /// A file or folder could not be written or read.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot write").
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A keystore is already there.
    #[error("{0} already holds a keystore (public/ca.cert.pem); use it, or choose another folder")]
    Exists(PathBuf),
    /// The folder is not a keystore.
    #[error(
        "{dir} is not a keystore: {missing} is missing; create one with `kairos security create-keystore {dir}`"
    )]
    NotAKeystore {
        /// The folder given.
        dir: PathBuf,
        /// The file that should be there.
        missing: PathBuf,
    },
    /// An enclave of that path exists already.
    #[error(
        "enclave {name} exists in {dir}; pass --replace to issue it a new identity (its old certificate stays valid until it expires)"
    )]
    EnclaveExists {
        /// The enclave's path.
        name: String,
        /// The keystore.
        dir: PathBuf,
    },
    /// The enclave path is not one SROS2 accepts.
    #[error(
        "'{0}' is not an enclave path: write it as an absolute ROS name, e.g. /robot/driver (letters, digits and '_' between '/')"
    )]
    BadEnclaveName(String),
    /// The enclave is not in the keystore.
    #[error(
        "no enclave {name} in keystore {dir} ({missing} is missing); create it with `kairos security create-enclave {dir} {name}`"
    )]
    NoEnclave {
        /// The enclave's path.
        name: String,
        /// The keystore.
        dir: PathBuf,
        /// The file that should be there.
        missing: PathBuf,
    },
    /// A key or certificate could not be made or read.
    #[error("{what}: {reason}")]
    Crypto {
        /// What was being done.
        what: String,
        /// Why it failed.
        reason: String,
    },
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> KeystoreError + 'a {
    move |source| KeystoreError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

fn crypto(what: impl Into<String>) -> impl FnOnce(rcgen::Error) -> KeystoreError {
    let what = what.into();
    move |e| KeystoreError::Crypto {
        what,
        reason: e.to_string(),
    }
}

/// When an issued certificate is valid.
#[derive(Debug, Clone, Copy)]
pub struct Validity {
    /// Not valid before.
    pub not_before: OffsetDateTime,
    /// Not valid after.
    pub not_after: OffsetDateTime,
}

impl Validity {
    /// From now (less a minute, for clocks a little behind) for `duration`.
    pub fn from_now(duration: Duration) -> Self {
        let now = OffsetDateTime::now_utc();
        Self {
            not_before: now - Duration::minutes(1),
            not_after: now + duration,
        }
    }
}

impl Default for Validity {
    fn default() -> Self {
        Self::from_now(DEFAULT_VALIDITY)
    }
}

/// A keystore on disk.
#[derive(Debug, Clone)]
pub struct Keystore {
    dir: PathBuf,
}

/// An enclave's identity in a keystore: the files a process of that enclave uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enclave {
    /// Its path, e.g. `/robot/driver`.
    pub name: String,
    /// Its folder, `<keystore>/enclaves/robot/driver`.
    pub dir: PathBuf,
}

impl Enclave {
    /// Its certificate.
    pub fn cert(&self) -> PathBuf {
        self.dir.join("cert.pem")
    }
    /// Its private key.
    pub fn key(&self) -> PathBuf {
        self.dir.join("key.pem")
    }
    /// The CA its peers' certificates must be signed by.
    pub fn ca(&self) -> PathBuf {
        self.dir.join("identity_ca.cert.pem")
    }
    /// The files a process of this enclave needs, in the order they are checked.
    pub fn files(&self) -> [PathBuf; 3] {
        [self.ca(), self.cert(), self.key()]
    }
}

/// Checks an enclave path: absolute, ROS name tokens between slashes.
pub fn check_enclave_name(name: &str) -> Result<(), KeystoreError> {
    let bad = || KeystoreError::BadEnclaveName(name.to_owned());
    let rest = name.strip_prefix('/').ok_or_else(bad)?;
    if rest.is_empty() {
        return Err(bad());
    }
    for token in rest.split('/') {
        let ok = !token.is_empty()
            && !token.starts_with(|c: char| c.is_ascii_digit())
            && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(bad());
        }
    }
    Ok(())
}

impl Keystore {
    /// Creates a keystore in `dir` (made if missing) with a new CA valid for `validity`.
    pub fn create(dir: &Path, validity: Validity) -> Result<Self, KeystoreError> {
        if dir.join("public/ca.cert.pem").exists() {
            return Err(KeystoreError::Exists(dir.to_owned()));
        }
        for sub in ["public", "private", "enclaves"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path).map_err(io("cannot create", &path))?;
        }
        // Absolute, so the configurations generated from it work from any folder.
        let dir = &dir.canonicalize().map_err(io("cannot resolve", dir))?;
        let store = Self {
            dir: dir.to_owned(),
        };
        let key = KeyPair::generate().map_err(crypto("generate the CA's key"))?;
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, CA_COMMON_NAME);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = validity.not_before;
        params.not_after = validity.not_after;
        let cert = params
            .self_signed(&key)
            .map_err(crypto("sign the CA's certificate"))?;
        let key_pem = key.serialize_pem();
        for name in ["ca", "identity_ca", "permissions_ca"] {
            write_private(&dir.join(format!("private/{name}.key.pem")), &key_pem)?;
            write(&dir.join(format!("public/{name}.cert.pem")), &cert.pem())?;
        }
        Ok(store)
    }

    /// Opens the keystore in `dir`, checking that its CA is there.
    pub fn open(dir: &Path) -> Result<Self, KeystoreError> {
        let store = Self {
            dir: dir.canonicalize().unwrap_or_else(|_| dir.to_owned()),
        };
        for missing in [store.ca_cert(), store.ca_key()] {
            if !missing.exists() {
                return Err(KeystoreError::NotAKeystore {
                    dir: dir.to_owned(),
                    missing,
                });
            }
        }
        Ok(store)
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The CA's certificate.
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.join("public/ca.cert.pem")
    }

    fn ca_key(&self) -> PathBuf {
        self.dir.join("private/ca.key.pem")
    }

    /// The enclave `name` (e.g. `/robot/driver`) as it is laid out here, whether or not it
    /// exists yet.
    pub fn enclave_at(&self, name: &str) -> Result<Enclave, KeystoreError> {
        check_enclave_name(name)?;
        Ok(Enclave {
            name: name.to_owned(),
            dir: self.dir.join("enclaves").join(&name[1..]),
        })
    }

    /// The existing enclave `name`, every file it needs checked.
    pub fn enclave(&self, name: &str) -> Result<Enclave, KeystoreError> {
        let enclave = self.enclave_at(name)?;
        if let Some(missing) = enclave.files().into_iter().find(|f| !f.exists()) {
            return Err(KeystoreError::NoEnclave {
                name: name.to_owned(),
                dir: self.dir.clone(),
                missing,
            });
        }
        Ok(enclave)
    }

    /// Every enclave of the keystore (a folder under `enclaves/` with a `cert.pem`), by name.
    pub fn enclaves(&self) -> Result<Vec<Enclave>, KeystoreError> {
        let mut found = Vec::new();
        let root = self.dir.join("enclaves");
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(io("cannot read", &dir))?;
            for entry in entries {
                let path = entry.map_err(io("cannot read", &dir))?.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n == "cert.pem") {
                    let dir = path.parent().expect("a file has a folder").to_owned();
                    let relative = dir.strip_prefix(&root).expect("found under the root");
                    let name = format!("/{}", relative.to_string_lossy());
                    found.push(Enclave { name, dir });
                }
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(found)
    }

    /// Issues the enclave `name` an identity signed by this keystore's CA: a new key and a
    /// certificate whose common name is `name`.
    pub fn create_enclave(
        &self,
        name: &str,
        validity: Validity,
        replace: bool,
    ) -> Result<Enclave, KeystoreError> {
        let enclave = self.enclave_at(name)?;
        if enclave.cert().exists() && !replace {
            return Err(KeystoreError::EnclaveExists {
                name: name.to_owned(),
                dir: self.dir.clone(),
            });
        }
        let issuer = self.issuer()?;
        let key = KeyPair::generate().map_err(crypto("generate the enclave's key"))?;
        let mut params = CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyAgreement,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.use_authority_key_identifier_extension = true;
        params.not_before = validity.not_before;
        params.not_after = validity.not_after;
        let cert = params
            .signed_by(&key, &issuer)
            .map_err(crypto(format!("sign {name}'s certificate")))?;
        std::fs::create_dir_all(&enclave.dir).map_err(io("cannot create", &enclave.dir))?;
        write_private(&enclave.key(), &key.serialize_pem())?;
        write(&enclave.cert(), &cert.pem())?;
        let ca = read(&self.ca_cert())?;
        write(&enclave.ca(), &ca)?;
        write(&enclave.dir.join("permissions_ca.cert.pem"), &ca)?;
        Ok(enclave)
    }

    fn issuer(&self) -> Result<Issuer<'static, KeyPair>, KeystoreError> {
        let key_path = self.ca_key();
        let key = KeyPair::from_pem(&read(&key_path)?)
            .map_err(crypto(format!("read the CA's key {}", key_path.display())))?;
        let cert_path = self.ca_cert();
        Issuer::from_ca_cert_pem(&read(&cert_path)?, key).map_err(crypto(format!(
            "read the CA's certificate {}",
            cert_path.display()
        )))
    }
}

fn read(path: &Path) -> Result<String, KeystoreError> {
    std::fs::read_to_string(path).map_err(io("cannot read", path))
}

fn write(path: &Path, text: &str) -> Result<(), KeystoreError> {
    std::fs::write(path, text).map_err(io("cannot write", path))
}

/// Writes a private key readable by its owner only.
fn write_private(path: &Path, text: &str) -> Result<(), KeystoreError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io("cannot write", path))?;
    file.write_all(text.as_bytes())
        .map_err(io("cannot write", path))
}

/// What a certificate says about itself: the facts a refusal names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateFacts {
    /// The subject's common name.
    pub common_name: String,
    /// The issuer's common name.
    pub issuer: String,
    /// Not valid before (Unix seconds).
    pub not_before: i64,
    /// Not valid after (Unix seconds).
    pub not_after: i64,
}

impl CertificateFacts {
    /// Reads the first certificate of a PEM file.
    pub fn read(path: &Path) -> Result<Self, KeystoreError> {
        let text = read(path)?;
        let bad = |reason: String| KeystoreError::Crypto {
            what: format!("read the certificate {}", path.display()),
            reason,
        };
        let (_, pem) = x509_parser::pem::parse_x509_pem(text.as_bytes())
            .map_err(|e| bad(format!("not a PEM certificate: {e}")))?;
        let cert = pem
            .parse_x509()
            .map_err(|e| bad(format!("not an X.509 certificate: {e}")))?;
        let cn = |name: &x509_parser::x509::X509Name| {
            name.iter_common_name()
                .next()
                .and_then(|c| c.as_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        Ok(Self {
            common_name: cn(cert.subject()),
            issuer: cn(cert.issuer()),
            not_before: cert.validity().not_before.timestamp(),
            not_after: cert.validity().not_after.timestamp(),
        })
    }

    /// Whether it is valid at `now` (Unix seconds).
    pub fn valid_at(&self, now: i64) -> bool {
        (self.not_before..=self.not_after).contains(&now)
    }
}

fn parse_der<'a>(
    der: &'a [u8],
    path: &Path,
) -> Result<x509_parser::certificate::X509Certificate<'a>, String> {
    x509_parser::parse_x509_certificate(der)
        .map(|(_, c)| c)
        .map_err(|e| format!("{} is not an X.509 certificate: {e}", path.display()))
}

/// Why peers that trust the CA of `ca` will refuse the certificate `cert` at the TLS
/// handshake: not valid at `now` (Unix seconds), or not signed by that CA. `Ok` when
/// neither holds. A process checks its own identity with it, so it can say why it is
/// refused, which a TLS peer never tells.
pub fn check_identity(cert: &Path, ca: &Path, now: i64) -> Result<(), String> {
    let read_pem = |path: &Path| -> Result<Vec<u8>, String> {
        let text =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let (_, pem) = x509_parser::pem::parse_x509_pem(&text)
            .map_err(|e| format!("{} is not a PEM certificate: {e}", path.display()))?;
        Ok(pem.contents)
    };
    let (cert_der, ca_der) = (read_pem(cert)?, read_pem(ca)?);
    let (leaf, authority) = (parse_der(&cert_der, cert)?, parse_der(&ca_der, ca)?);
    let validity = leaf.validity();
    if !(validity.not_before.timestamp()..=validity.not_after.timestamp()).contains(&now) {
        return Err(format!(
            "the certificate {} is valid from {} to {}, not now: peers refuse it as expired; issue a new one (`kairos security create-enclave KEYSTORE ENCLAVE --replace`)",
            cert.display(),
            validity.not_before,
            validity.not_after
        ));
    }
    if leaf.verify_signature(Some(authority.public_key())).is_err() {
        return Err(format!(
            "the certificate {} is not signed by the CA {} this process trusts (issued by '{}', the CA is '{}'): peers trusting that CA refuse it as from an unknown CA; use an identity of the same keystore",
            cert.display(),
            ca.display(),
            leaf.issuer(),
            authority.subject()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_of_another_ca_or_expired_is_told_apart_from_a_good_one() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (ours, theirs) = (
            Keystore::create(a.path(), Validity::default()).unwrap(),
            Keystore::create(b.path(), Validity::default()).unwrap(),
        );
        let good = ours
            .create_enclave("/good", Validity::default(), false)
            .unwrap();
        let foreign = theirs
            .create_enclave("/good", Validity::default(), false)
            .unwrap();
        let past = Validity {
            not_before: OffsetDateTime::now_utc() - Duration::days(9),
            not_after: OffsetDateTime::now_utc() - Duration::days(1),
        };
        let old = ours.create_enclave("/old", past, false).unwrap();
        let now = OffsetDateTime::now_utc().unix_timestamp();
        check_identity(&good.cert(), &good.ca(), now).unwrap();
        let err = check_identity(&foreign.cert(), &good.ca(), now).unwrap_err();
        assert!(err.contains("unknown CA"), "{err}");
        let err = check_identity(&old.cert(), &old.ca(), now).unwrap_err();
        assert!(err.contains("expired"), "{err}");
    }

    #[test]
    fn a_keystore_and_its_enclaves_are_laid_out_as_sros2s() {
        let dir = tempfile::tempdir().unwrap();
        let store = Keystore::create(dir.path(), Validity::default()).unwrap();
        for file in [
            "public/ca.cert.pem",
            "public/identity_ca.cert.pem",
            "public/permissions_ca.cert.pem",
            "private/ca.key.pem",
        ] {
            assert!(dir.path().join(file).exists(), "{file}");
        }
        let enclave = store
            .create_enclave("/robot/driver", Validity::default(), false)
            .unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(enclave.dir, root.join("enclaves/robot/driver"));
        let facts = CertificateFacts::read(&enclave.cert()).unwrap();
        assert_eq!(facts.common_name, "/robot/driver");
        assert_eq!(facts.issuer, CA_COMMON_NAME);
        assert!(facts.valid_at(OffsetDateTime::now_utc().unix_timestamp()));
        assert_eq!(store.enclaves().unwrap(), vec![enclave.clone()]);
        assert_eq!(store.enclave("/robot/driver").unwrap(), enclave);
    }

    #[test]
    fn nothing_is_overwritten_and_every_refusal_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let store = Keystore::create(dir.path(), Validity::default()).unwrap();
        let err = Keystore::create(dir.path(), Validity::default()).unwrap_err();
        assert!(
            err.to_string().contains("already holds a keystore"),
            "{err}"
        );
        store
            .create_enclave("/a", Validity::default(), false)
            .unwrap();
        let err = store
            .create_enclave("/a", Validity::default(), false)
            .unwrap_err();
        assert!(err.to_string().contains("--replace"), "{err}");
        store
            .create_enclave("/a", Validity::default(), true)
            .unwrap();
        let err = store.enclave("/b").unwrap_err();
        assert!(
            err.to_string().contains("kairos security create-enclave"),
            "{err}"
        );
        for bad in ["a", "/", "/a//b", "/a/1b", "/a-b", ""] {
            assert!(
                matches!(
                    store.create_enclave(bad, Validity::default(), false),
                    Err(KeystoreError::BadEnclaveName(_))
                ),
                "{bad}"
            );
        }
        let err = Keystore::open(&dir.path().join("enclaves")).unwrap_err();
        assert!(err.to_string().contains("create-keystore"), "{err}");
    }
}
