//! Trace sessions: start tracing into a directory, flush, stop.

use super::Error;
use super::buffer::{self, Registry};
use super::clock::{self, TraceClock};
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

/// The shortest flush interval a session accepts: a shorter one would keep the writer
/// thread busy waking up.
pub const MIN_FLUSH_INTERVAL: Duration = Duration::from_millis(1);

/// The longest flush interval a session accepts (a day: in effect, write only on
/// [`Session::flush`] and [`Session::stop`]).
pub const MAX_FLUSH_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// How a session buffers and flushes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// Events each thread's queue holds between two drains; more are counted as
    /// discarded. Memory is about 80 bytes per event per traced thread.
    pub buffer_events: usize,
    /// How often the writer drains the queues and appends packets: the most a killed
    /// process can lose. From [`MIN_FLUSH_INTERVAL`] to [`MAX_FLUSH_INTERVAL`].
    pub flush_interval: Duration,
    /// What stamps the events: the monotonic clock, or one of the program's own such as
    /// simulation time.
    pub clock: TraceClock,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            buffer_events: 16 * 1024,
            flush_interval: Duration::from_millis(100),
            clock: TraceClock::Monotonic,
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

    /// Starts tracing when the environment variable `KAIROS_TRACE` names a directory;
    /// `Ok(None)` when it is unset or empty.
    ///
    /// The trace goes into a subdirectory of its own, `<dir>/<procname>-<pid>-<time>`
    /// (UTC, `YYYYMMDD-HHMMSS`), as LTTng names per-process traces: every process that
    /// inherits the variable (the nodes of one launch, a program and its children) is
    /// traced, and `babeltrace2 <dir>` reads them all as one trace.
    pub fn from_env() -> Result<Option<Session>, Error> {
        match std::env::var_os(ENV_VAR) {
            Some(dir) if !dir.is_empty() => {
                let name = format!(
                    "{}-{}-{}",
                    procname(),
                    std::process::id(),
                    utc_timestamp(std::time::SystemTime::now())
                );
                Session::start(Path::new(&dir).join(name)).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Starts tracing into `dir` (created if needed; it must be empty). A relative `dir`
    /// is taken from the current directory now, wherever the program goes next.
    pub fn start_with(dir: impl AsRef<Path>, config: SessionConfig) -> Result<Session, Error> {
        let dir = std::path::absolute(dir.as_ref())
            .map_err(|source| Error::io("find the absolute path of", dir.as_ref(), source))?;
        if config.buffer_events == 0 {
            return Err(Error::InvalidConfig("buffer_events must be at least 1"));
        }
        if config.buffer_events > MAX_BUFFER_EVENTS {
            return Err(Error::InvalidConfig(
                "buffer_events must be at most 16 Mi (about 1.2 GiB per traced thread)",
            ));
        }
        if config.flush_interval < MIN_FLUSH_INTERVAL {
            return Err(Error::InvalidConfig(
                "flush_interval must be at least 1 ms (shorter keeps the writer busy waking up)",
            ));
        }
        if config.flush_interval > MAX_FLUSH_INTERVAL {
            return Err(Error::InvalidConfig(
                "flush_interval must be at most a day (flush and stop write in any case)",
            ));
        }
        if !TraceClock::valid_name(config.clock.name()) {
            return Err(Error::InvalidConfig(
                "a custom trace clock's name must be letters, digits and '_', not starting with a digit",
            ));
        }
        fs::create_dir_all(&dir)
            .map_err(|source| Error::io("create the trace directory", &dir, source))?;
        let metadata_path = dir.join("metadata");
        if metadata_path.exists() {
            return Err(Error::TraceExists { path: dir });
        }
        let mut entries = fs::read_dir(&dir)
            .map_err(|source| Error::io("list the trace directory", &dir, source))?;
        if let Some(entry) = entries.next() {
            let entry = entry
                .map_err(|source| Error::io("list the trace directory", &dir, source))?
                .path();
            return Err(Error::DirectoryNotEmpty { path: dir, entry });
        }
        let procname = procname();
        let info = TraceInfo {
            uuid: random_uuid(),
            clock_uuid: random_uuid(),
            clock_name: config.clock.name().to_owned(),
            clock_description: config.clock.description().to_owned(),
            clock_offset_ns: match config.clock {
                TraceClock::Monotonic => clock::epoch_offset_ns(),
                TraceClock::Custom { .. } => 0,
            },
            hostname: hostname(),
            procname: procname.clone(),
        };
        let registry =
            buffer::activate(config.buffer_events).ok_or_else(|| Error::AlreadyActive {
                dir: ACTIVE_DIR.lock().clone().unwrap_or_default(),
            })?;
        // Only the session that won the activation installs its clock. A thread that
        // traces in the instant between the two may stamp one event on the monotonic
        // clock: a custom clock's session is started before the threads it traces.
        clock::install(&config.clock);
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
                clock::uninstall();
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
        clock::uninstall();
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

/// `YYYYMMDD-HHMMSS` of `time`, in UTC (the epoch for a time before it).
fn utc_timestamp(time: std::time::SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let (days, time) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        time / 3600,
        time / 60 % 60,
        time % 60
    )
}

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

#[cfg(test)]
mod tests {
    use super::utc_timestamp;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn utc_timestamp_gives_the_civil_date_and_time() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "19700101-000000");
        // 2024-02-29 13:05:09 UTC, a leap day.
        let leap_day = UNIX_EPOCH + Duration::from_secs(1_709_211_909);
        assert_eq!(utc_timestamp(leap_day), "20240229-130509");
    }
}
