//! Finding traces: a folder holding a `metadata` file is a trace and its other regular
//! files are its streams; any other folder is searched (an LTTng session folder holds
//! `ust/uid/1000/64-bit/` and `kernel/` traces). Everything found is read as one set.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::ReadError;
use super::event::Trace;
use super::merge::Events;
use super::metadata::{Metadata, read_metadata_text};
use super::select::Selection;
use super::stream::StreamReader;

/// Folders nested deeper than this below the given path are not searched.
const MAX_DEPTH: usize = 8;
/// A metadata file larger than this is refused.
const MAX_METADATA_BYTES: u64 = 64 << 20;

/// The traces found under one path.
///
/// # Examples
///
/// ```
/// use kairos_trace::read::TraceSet;
/// use kairos_trace::{Session, tp};
///
/// let dir = tempfile::tempdir()?;
/// let session = Session::start(dir.path().join("trace"))?;
/// tp::rcl_publish(0x1, 0x2, 7); // publisher 0x1, message 0x2, sequence number 7
/// session.stop()?;
///
/// let set = TraceSet::open(dir.path())?;
/// let mut names = Vec::new();
/// for event in set.events()? {
///     // A damaged stream yields its events up to the damage, then a `ReadError`.
///     names.push(event?.name().to_owned());
/// }
/// assert_eq!(names, ["ros2:rcl_publish"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct TraceSet {
    /// The traces found, in path order.
    pub traces: Vec<Arc<Trace>>,
    streams: Vec<Vec<PathBuf>>,
}

impl TraceSet {
    /// Finds and parses every trace under `path` (a trace folder, a folder of traces,
    /// or a `metadata` file).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ReadError> {
        let path = path.as_ref();
        if let Err(cause) = fs::metadata(path) {
            return Err(ReadError::Io {
                path: path.to_path_buf(),
                cause,
            });
        }
        let root = if path.is_file() && path.file_name().is_some_and(|n| n == "metadata") {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        let mut dirs = Vec::new();
        find_trace_dirs(&root, 0, &mut dirs)?;
        if dirs.is_empty() {
            return Err(ReadError::NoTrace {
                path: path.to_path_buf(),
            });
        }
        let mut set = TraceSet {
            traces: Vec::new(),
            streams: Vec::new(),
        };
        for dir in dirs {
            let (trace, streams) = open_trace(&dir)?;
            set.traces.push(Arc::new(trace));
            set.streams.push(streams);
        }
        Ok(set)
    }

    /// Every stream file of every trace.
    pub fn stream_files(&self) -> impl Iterator<Item = &Path> {
        self.streams.iter().flatten().map(PathBuf::as_path)
    }

    /// Moves every timestamp of each trace by `shift(trace)` nanoseconds (the trace's
    /// clocks' offsets change), before its events are read: how the clocks of traces
    /// recorded on different hosts are brought onto one time line. Call it before
    /// [`TraceSet::events`]; traces whose events are being read keep their clocks.
    pub fn shift_clocks(&mut self, shift: impl Fn(&Trace) -> i64) {
        for trace in &mut self.traces {
            let ns = shift(trace);
            if ns == 0 {
                continue;
            }
            let Some(t) = Arc::get_mut(trace) else {
                continue;
            };
            for clock in &mut t.metadata.clocks {
                let freq = i128::from(clock.freq.max(1));
                let cycles = i128::from(ns) * freq / 1_000_000_000;
                let total = i128::from(clock.offset_s) * freq + i128::from(clock.offset) + cycles;
                clock.offset_s = i64::try_from(total.div_euclid(freq)).unwrap_or(clock.offset_s);
                clock.offset = i64::try_from(total.rem_euclid(freq)).unwrap_or(clock.offset);
            }
        }
    }

    /// The total size of the stream files in bytes, for progress reporting.
    pub fn stream_bytes(&self) -> u64 {
        self.stream_files()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// All events of all traces, merged by timestamp, every field decoded.
    pub fn events(&self) -> Result<Events, ReadError> {
        self.events_with(Selection::all())
    }

    /// All events of all traces, merged by timestamp, with the fields `select` asks for.
    pub fn events_with(&self, select: Selection) -> Result<Events, ReadError> {
        let mut readers = Vec::new();
        for (trace, files) in self.traces.iter().zip(&self.streams) {
            for f in files {
                readers.push(StreamReader::open(f, trace.clone(), select.clone())?);
            }
        }
        Ok(Events::new(readers, select.threads(), select.batch()))
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReadError + '_ {
    move |cause| ReadError::Io {
        path: path.to_path_buf(),
        cause,
    }
}

/// Collects every trace folder under `dir`. Symbolic links are followed (a session
/// folder often links its traces in); a trace reached twice is kept once.
fn find_trace_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    if dir.join("metadata").is_file() {
        let real = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let seen = out
            .iter()
            .any(|d| fs::canonicalize(d).unwrap_or_else(|_| d.clone()) == real);
        if !seen {
            out.push(dir.to_path_buf());
        }
        return Ok(());
    }
    if depth >= MAX_DEPTH || !dir.is_dir() {
        return Ok(());
    }
    let mut subdirs: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        find_trace_dirs(&sub, depth + 1, out)?;
    }
    Ok(())
}

fn open_trace(dir: &Path) -> Result<(Trace, Vec<PathBuf>), ReadError> {
    let md_path = dir.join("metadata");
    let len = fs::metadata(&md_path).map_err(io(&md_path))?.len();
    if len > MAX_METADATA_BYTES {
        return Err(ReadError::Metadata {
            path: md_path,
            cause: super::metadata::MetadataError::whole(format!(
                "{len} bytes is larger than the {MAX_METADATA_BYTES}-byte limit"
            )),
        });
    }
    let bytes = fs::read(&md_path).map_err(io(&md_path))?;
    let text = read_metadata_text(&bytes).map_err(|cause| ReadError::Metadata {
        path: md_path.clone(),
        cause,
    })?;
    let metadata = Metadata::parse(&text.text).map_err(|cause| ReadError::Metadata {
        path: md_path.clone(),
        cause,
    })?;
    let mut streams: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n != "metadata" && !n.starts_with('.'))
        })
        .collect();
    streams.sort();
    Ok((Trace::new(dir.to_path_buf(), metadata), streams))
}
