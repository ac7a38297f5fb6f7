//! The process's kairos session for Python: its shutdown token (cancelled by
//! `kairos.shutdown()`) and its transport (opened once, as the environment asks).

use kairos::time::CancelToken;
use parking_lot::Mutex;
use pyo3::prelude::*;
use std::sync::Arc;

/// Cancelled by `kairos.shutdown()`: wakes every sleep made outside a callback.
static SHUTDOWN: Mutex<Option<CancelToken>> = Mutex::new(None);
/// The Zenoh transport, once the environment asked for it (kept for the process).
static TRANSPORT: Mutex<Option<Option<Arc<kairos_zenoh::ZenohTransport>>>> = Mutex::new(None);

pub(crate) fn shutdown_token() -> CancelToken {
    SHUTDOWN.lock().get_or_insert_with(CancelToken::new).clone()
}

/// Puts the process on Zenoh when `KAIROS_TRANSPORT=zenoh` (or `RMW_IMPLEMENTATION=rmw_zenoh_cpp`), once.
pub(crate) fn init_transport() -> PyResult<()> {
    let mut transport = TRANSPORT.lock();
    if transport.is_none() {
        let opened = kairos_zenoh::init()
            .map_err(|err| pyo3::exceptions::PyRuntimeError::new_err(err.to_string()))?;
        *transport = Some(opened);
    }
    Ok(())
}

/// The process's transport, once opened and if the environment asked for one.
pub(crate) fn transport() -> Option<Arc<kairos_zenoh::ZenohTransport>> {
    TRANSPORT.lock().clone().flatten()
}

/// A fresh shutdown token if the last one was cancelled (`kairos.init()` after
/// `kairos.shutdown()`).
pub(crate) fn renew_shutdown_token() {
    let mut token = SHUTDOWN.lock();
    if token.as_ref().is_none_or(CancelToken::is_cancelled) {
        *token = Some(CancelToken::new());
    }
}
