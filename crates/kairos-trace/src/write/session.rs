//! Trace sessions: start tracing into a directory, flush, stop.

use super::Error;
use super::buffer::{self, Registry};
use super::clock;
use super::metadata::{self, TraceInfo};
use super::writer::{Command, Writer};
use crossbeam_channel::Sender;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use super::writer::Stats;

/// The environment variable naming a directory to trace into: see [`Session::from_env`].
pub const ENV_VAR: &str = "KAIROS_TRACE";

/// The largest per-thread queue a session accepts.
pub const MAX_BUFFER_EVENTS: usize = 16 << 20;

/// How a session buffers and flushes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// Events each thread's queue holds between two drains; more are counted as
    /// discarded. Memory is about 80 bytes per event per traced thread.
    pub buffer_events: usize,
    /// How often the writer drains the queues and appends packets: the most a killed
    /// process can lose.
    pub flush_interval: Duration,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            buffer_events: 16 * 1024,
            flush_interval: Duration::from_millis(100),
        }
    }
}

/// A running trace session: while it lives, every tracepoint in the process records into
/// its directory. Only one runs at a time. Dropping it stops it, like [`Session::stop`]
/// (an error is then printed on stderr, since it cannot be returned). Keep it where the
/// program ends normally (e.g. in `main`): Rust does not drop statics at exit, and a
/// session that is never stopped loses its last flush interval.
///
/// ```
/// use kairos_trace::{Session, tp};
///
/// let dir = tempfile::tempdir()?;
/// let session = Session::start(dir.path().join("trace"))?;
/// tp::rcl_publish(0x1, 0x2, 0); // publisher 0x1, message 0x2, sequence number 0
/// let stats = session.stop()?;
/// assert_eq!(stats.events_written, 1);
/// // `babeltrace2 <dir>/trace` now prints the event.
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Session {
    dir: PathBuf,
    registry: Arc<Registry>,
    commands: Sender<Command>,
    writer: Option<JoinHandle<Result<Stats, Error>>>,
}

impl Session {
    /// Starts tracing into `dir` (created if needed) with the default configuration.
    pub fn start(dir: impl AsRef<Path>) -> Result<Session, Error> {
        Session::start_with(dir, SessionConfig::default())
    }

    /// Starts tracing into `dir` when the environment variable `KAIROS_TRACE` names one;
    /// `Ok(None)` when it is unset or empty.
    pub fn from_env() -> Result<Option<Session>, Error> {
        match std::env::var_os(ENV_VAR) {
            Some(dir) if !dir.is_empty() => Session::start(PathBuf::from(dir)).map(Some),
            _ => Ok(None),
        }
    }

    /// Starts tracing into `dir` (created if needed; it must not already hold a trace).
    pub fn start_with(dir: impl AsRef<Path>, config: SessionConfig) -> Result<Session, Error> {
        let dir = dir.as_ref().to_path_buf();
        if config.buffer_events == 0 {
            return Err(Error::InvalidConfig("buffer_events must be at least 1"));
        }
        if config.buffer_events > MAX_BUFFER_EVENTS {
            return Err(Error::InvalidConfig(
                "buffer_events must be at most 16 Mi (about 1.2 GiB per traced thread)",
            ));
        }
        if config.flush_interval.is_zero() {
            return Err(Error::InvalidConfig(
                "flush_interval must be longer than zero",
            ));
        }
        fs::create_dir_all(&dir)
            .map_err(|source| Error::io("create the trace directory", &dir, source))?;
        let metadata_path = dir.join("metadata");
        if metadata_path.exists() {
            return Err(Error::TraceExists { path: dir });
        }
        let procname = procname();
        let info = TraceInfo {
            uuid: random_uuid(),
            clock_uuid: random_uuid(),
            clock_offset_ns: clock::epoch_offset_ns(),
            hostname: hostname(),
            procname: procname.clone(),
        };
        let registry =
            buffer::activate(config.buffer_events).ok_or_else(|| Error::AlreadyActive {
                dir: ACTIVE_DIR.lock().clone().unwrap_or_default(),
            })?;
        // From here on, failing must deactivate again.
        let started = (|| {
            fs::write(&metadata_path, metadata::tsdl(&info))
                .map_err(|source| Error::io("write the metadata file", &metadata_path, source))?;
            let writer = Writer::new(
                dir.clone(),
                info.uuid,
                procname,
                Arc::clone(&registry),
                config.flush_interval,
            );
            let (commands, receiver) = crossbeam_channel::unbounded();
            let handle = std::thread::Builder::new()
                .name("kairos-trace".into())
                .spawn(move || writer.run(receiver))
                .map_err(|source| Error::io("start the writer thread for", &dir, source))?;
            Ok((commands, handle))
        })();
        match started {
            Ok((commands, handle)) => {
                *ACTIVE_DIR.lock() = Some(dir.clone());
                Ok(Session {
                    dir,
                    registry,
                    commands,
                    writer: Some(handle),
                })
            }
            Err(error) => {
                buffer::deactivate(&registry);
                Err(error)
            }
        }
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes every event recorded so far (by tracepoints that have returned) to the
    /// trace, and returns once it is written.
    pub fn flush(&self) -> Result<(), Error> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.commands
            .send(Command::Flush(reply))
            .map_err(|_| Error::WriterGone)?;
        answer.recv().map_err(|_| Error::WriterGone)?
    }

    /// Stops tracing, writes everything recorded, and says what was written.
    pub fn stop(mut self) -> Result<Stats, Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<Stats, Error> {
        let Some(writer) = self.writer.take() else {
            return Err(Error::WriterGone);
        };
        buffer::deactivate(&self.registry);
        *ACTIVE_DIR.lock() = None;
        // A send error means the writer already ended; `join` tells how.
        let _ = self.commands.send(Command::Stop);
        writer.join().map_err(|_| Error::WriterGone)?
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.writer.is_some()
            && let Err(error) = self.finish()
        {
            eprintln!("kairos-trace: stopping the trace session failed: {error}");
        }
    }
}

/// Where the active session writes, for the error a second `start` returns.
static ACTIVE_DIR: parking_lot::Mutex<Option<PathBuf>> = parking_lot::Mutex::new(None);

fn random_uuid() -> [u8; 16] {
    let mut uuid = [0u8; 16];
    if rustix::rand::getrandom(&mut uuid, rustix::rand::GetRandomFlags::empty()).is_err() {
        // No entropy source (very early boot): time and pid are unique enough per trace.
        let seed = u128::from(clock::now_ns()) << 32 | u128::from(std::process::id());
        uuid = seed.to_le_bytes();
    }
    uuid[6] = (uuid[6] & 0x0f) | 0x40; // version 4
    uuid[8] = (uuid[8] & 0x3f) | 0x80; // RFC 4122 variant
    uuid
}

fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// The process name as the kernel knows it (what LTTng records as `procname`).
fn procname() -> String {
    fs::read_to_string("/proc/self/comm")
        .map(|name| name.trim_end().to_owned())
        .ok()
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
        })
        .unwrap_or_default()
}
