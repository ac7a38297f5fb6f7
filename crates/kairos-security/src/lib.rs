//! Security for kairos on Zenoh, with ROS 2's files: SROS2 keystores and policies turned
//! into the Zenoh configurations rmw_zenoh's generator writes (mutual TLS and access
//! control), and what a process needs to use them.
//!
//! - [`keystore`]: the certificate authority and one identity per enclave, in SROS2's
//!   layout (`kairos security create-keystore`, `create-enclave`);
//! - [`policy`]: SROS2 policy XML, read and written (`generate-policy`);
//! - [`configs`]: a policy and a keystore to one Zenoh configuration per enclave and one
//!   for the router (`generate-configs`);
//! - [`environment`]: ROS 2's security variables (`ROS_SECURITY_ENABLE`,
//!   `ROS_SECURITY_STRATEGY`, `ROS_SECURITY_KEYSTORE`, the enclave), checked before a
//!   process joins: under `Enforce` a process without its files refuses to start and names
//!   the file.
//!
//! Zenoh itself enforces what the configurations say (TLS in its links, access control in
//! its interceptors); kairos adds that a denial is never a silent nothing: see
//! `kairos_zenoh::access`.

#![warn(missing_docs)]

pub mod configs;
pub mod environment;
pub mod keystore;
pub mod policy;

pub use configs::{Generated, Options, generate};
pub use keystore::{Enclave, Keystore, KeystoreError, Validity};
pub use policy::{Access, Grant, Permission, Policy, PolicyError};
