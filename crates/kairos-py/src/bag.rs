//! rosbag2 bags for Python: kairos-bag's reader and writer behind `rosbag2_py`
//! (`kairos/rosbag2_py`), so a Python script reads and writes the same bags, by the same
//! rules, as `kairos bag` does.
//!
//! What this module promises:
//! - **One implementation.** Opening (every rosbag2 version, MCAP and sqlite3, compressed
//!   or not), merging files in log-time order, reading from a time, writing, splitting
//!   and compressing are kairos-bag's. Python adds rosbag2_py's shapes: its option
//!   structs, its topic filter and its read position (`rosbag2_py/_reader.py`).
//! - **Errors say what to do.** A kairos-bag error is raised as `kairos.BagError` (a
//!   `RuntimeError`, as rosbag2_py raises its C++ exceptions) with kairos-bag's message
//!   word for word; a writer used after it was closed says so.
//! - **Nothing is held whole.** Messages come one at a time (an indexed MCAP file chunk
//!   by chunk); the GIL is released while files are read or written.
//! - **Metadata crosses as rosbag2's own YAML** (the text rosbag2 stores in storage
//!   files): Python reads rosbag2's documented schema, and what Python writes is parsed
//!   and checked here before it reaches a file.

use kairos_bag::{
    Bag, BagCompression, BagMetadata, BagWriter, Compression, Messages, ReadFilter, StorageId,
    TopicInfo, WriterOptions, info,
};
use parking_lot::Mutex;
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::BTreeMap;
use std::time::Duration;

create_exception!(
    kairos,
    BagError,
    PyRuntimeError,
    "A bag that cannot be opened, read or written: the message names the file and what to do."
);

fn bag_error(e: kairos_bag::Error) -> PyErr {
    BagError::new_err(e.to_string())
}

/// One message as Python gets it: topic, data, receive time, send time, sequence.
type Row = (String, Py<PyBytes>, u64, u64, u32);

/// An open bag and the messages being read from it.
#[pyclass(name = "BagReader", module = "kairos._kairos", frozen)]
pub(crate) struct PyBagReader {
    bag: Bag,
    messages: Mutex<Option<Messages>>,
}

#[pymethods]
impl PyBagReader {
    /// Opens a bag folder, a `.mcap` or `.db3` file, or a bag's `metadata.yaml`.
    #[new]
    fn new(py: Python<'_>, path: &str) -> PyResult<Self> {
        let bag = py.allow_threads(|| Bag::open(path)).map_err(bag_error)?;
        Ok(Self {
            bag,
            messages: Mutex::new(None),
        })
    }

    /// The bag's metadata, as the bare YAML rosbag2 stores in storage files (version 9).
    fn metadata_yaml(&self) -> String {
        self.bag.info().to_yaml()
    }

    /// The storage: `mcap` or `sqlite3`.
    fn storage(&self) -> &'static str {
        self.bag.storage().as_str()
    }

    /// The storage files, in the order the bag lists them.
    fn files(&self) -> Vec<String> {
        self.bag
            .files()
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }

    /// The message definitions the files store: (type, encoding, text, type hash).
    fn message_definitions(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(String, String, String, String)>> {
        let definitions = py
            .allow_threads(|| self.bag.message_definitions())
            .map_err(bag_error)?;
        Ok(definitions
            .into_iter()
            .map(|d| (d.type_name, d.encoding, d.text, d.type_hash))
            .collect())
    }

    /// (Re)starts reading every topic at `start_ns` (receive time, inclusive), up to
    /// `end_ns` (inclusive), in log-time order.
    #[pyo3(signature = (start_ns = None, end_ns = None))]
    fn start(&self, py: Python<'_>, start_ns: Option<u64>, end_ns: Option<u64>) -> PyResult<()> {
        let mut filter = ReadFilter::all();
        filter.start_ns = start_ns;
        filter.end_ns = end_ns;
        let messages = py
            .allow_threads(|| self.bag.read(&filter))
            .map_err(bag_error)?;
        *self.messages.lock() = Some(messages);
        Ok(())
    }

    /// The next message, or None at the end (reading starts at the first message when
    /// `start` was not called).
    fn next(&self, py: Python<'_>) -> PyResult<Option<Row>> {
        let next = py.allow_threads(|| {
            let mut messages = self.messages.lock();
            if messages.is_none() {
                *messages = Some(self.bag.messages()?);
            }
            messages.as_mut().and_then(Iterator::next).transpose()
        });
        Ok(next.map_err(bag_error)?.map(|m| {
            (
                m.topic.to_string(),
                PyBytes::new(py, &m.data).unbind(),
                m.log_time,
                m.publish_time,
                m.sequence,
            )
        }))
    }
}

/// A bag being written; closed by `close` (or when Python drops it).
#[pyclass(name = "BagWriter", module = "kairos._kairos", frozen)]
pub(crate) struct PyBagWriter {
    path: String,
    writer: Mutex<Option<BagWriter>>,
}

impl PyBagWriter {
    fn with<T>(&self, f: impl FnOnce(&mut BagWriter) -> kairos_bag::Result<T>) -> PyResult<T> {
        let mut writer = self.writer.lock();
        let writer = writer.as_mut().ok_or_else(|| {
            BagError::new_err(format!(
                "the writer of bag {} is closed: open a new writer to write another bag",
                self.path
            ))
        })?;
        f(writer).map_err(bag_error)
    }
}

#[pymethods]
impl PyBagWriter {
    /// Creates the bag folder `path` (which must not exist). `storage`: `mcap` or
    /// `sqlite3`; `compression_mode`: ``, `message` or `file` (zstd, as
    /// rosbag2_compression); a maximum size (bytes) or duration (ns) of 0 never splits.
    #[new]
    #[pyo3(signature = (path, storage = "mcap", compression_mode = "", max_file_size = 0, max_file_duration_ns = 0, custom_data = BTreeMap::new()))]
    fn new(
        py: Python<'_>,
        path: &str,
        storage: &str,
        compression_mode: &str,
        max_file_size: u64,
        max_file_duration_ns: u64,
        custom_data: BTreeMap<String, String>,
    ) -> PyResult<Self> {
        let storage = match storage {
            "" | "mcap" => StorageId::Mcap,
            "sqlite3" => StorageId::Sqlite3,
            other => {
                return Err(BagError::new_err(format!(
                    "storage '{other}' is not one kairos writes: use 'mcap' or 'sqlite3'"
                )));
            }
        };
        let bag_compression = match compression_mode.to_ascii_lowercase().as_str() {
            "" | "none" => BagCompression::None,
            "message" => BagCompression::Message,
            "file" => BagCompression::File,
            other => {
                return Err(BagError::new_err(format!(
                    "compression mode '{other}' is not one of none, message, file"
                )));
            }
        };
        let options = WriterOptions {
            storage,
            compression: Compression::None,
            bag_compression,
            max_file_size: (max_file_size > 0).then_some(max_file_size),
            max_file_duration: (max_file_duration_ns > 0)
                .then(|| Duration::from_nanos(max_file_duration_ns)),
            custom_data,
            ..WriterOptions::default()
        };
        let writer = py
            .allow_threads(|| BagWriter::create(path, options))
            .map_err(bag_error)?;
        Ok(Self {
            path: path.to_owned(),
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Adds a topic. `qos_yaml`: its offered QoS profiles as rosbag2 stores them (a YAML
    /// list of profiles; empty for none). `schema_text`: its message definition; None
    /// takes the definition of a type kairos ships, as rosbag2 takes the installed one.
    #[pyo3(signature = (name, type_name, serialization_format = "cdr", qos_yaml = "", type_hash = "", schema_text = None))]
    fn add_topic(
        &self,
        name: &str,
        type_name: &str,
        serialization_format: &str,
        qos_yaml: &str,
        type_hash: &str,
        schema_text: Option<String>,
    ) -> PyResult<()> {
        let qos = if qos_yaml.trim().is_empty() {
            Vec::new()
        } else {
            kairos_bag::qos::profiles_from_yaml(qos_yaml).map_err(|e| {
                BagError::new_err(format!("offered QoS profiles of topic '{name}': {e}"))
            })?
        };
        // As rosbag2's writer: the installed package's files, else kairos's own.
        let schema_text = schema_text.unwrap_or_else(|| {
            kairos_bag::LocalDefinitionSource::from_env()
                .recorded_definition(type_name)
                .unwrap_or_default()
        });
        let mut topic = TopicInfo::new(name, type_name)
            .with_qos(qos)
            .with_type_hash(type_hash)
            .with_schema_text(schema_text);
        topic.serialization_format = serialization_format.to_owned();
        self.with(|writer| writer.add_topic(topic))
    }

    /// Writes one serialized message of `topic`, received at `receive_ns` and sent at
    /// `publish_ns` (ns since the epoch).
    #[pyo3(signature = (topic, data, receive_ns, publish_ns, sequence = 0))]
    fn write(
        &self,
        py: Python<'_>,
        topic: &str,
        data: &[u8],
        receive_ns: u64,
        publish_ns: u64,
        sequence: u32,
    ) -> PyResult<()> {
        py.allow_threads(|| {
            self.with(|writer| writer.write(topic, receive_ns, publish_ns, sequence, data))
        })
    }

    /// Closes the current storage file and starts the next.
    fn split(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.with(BagWriter::split))
    }

    /// Sets one entry of the metadata's `custom_data`.
    fn set_custom_data(&self, key: &str, value: &str) -> PyResult<()> {
        self.with(|writer| {
            writer.set_custom_data(key, value);
            Ok(())
        })
    }

    /// The metadata as it stands (bare YAML, version 9).
    fn metadata_yaml(&self) -> PyResult<String> {
        self.with(|writer| Ok(writer.metadata().to_yaml()))
    }

    /// Whether the writer was closed.
    fn closed(&self) -> bool {
        self.writer.lock().is_none()
    }

    /// Closes the last file and writes `metadata.yaml`; returns the metadata (bare
    /// YAML). Closing again does nothing and returns None.
    fn close(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let Some(writer) = self.writer.lock().take() else {
            return Ok(None);
        };
        let metadata = py.allow_threads(|| writer.finish()).map_err(bag_error)?;
        Ok(Some(metadata.to_yaml()))
    }
}

/// Rebuilds the `metadata.yaml` of bag folder `path` from its storage files (`ros2 bag
/// reindex`); returns the metadata written (bare YAML).
#[pyfunction]
pub(crate) fn bag_reindex(py: Python<'_>, path: &str) -> PyResult<String> {
    let metadata = py.allow_threads(|| Bag::reindex(path)).map_err(bag_error)?;
    Ok(metadata.to_yaml())
}

/// Parses rosbag2 metadata of any version (bare or under `rosbag2_bagfile_information`)
/// and returns it as `metadata.yaml` text (`file_form`) or bare, version 9.
#[pyfunction]
#[pyo3(signature = (text, file_form = false))]
pub(crate) fn bag_metadata_yaml(text: &str, file_form: bool) -> PyResult<String> {
    let metadata = metadata(text)?;
    Ok(if file_form {
        metadata.to_metadata_yaml()
    } else {
        metadata.to_yaml()
    })
}

/// `ros2 bag info`'s text for a bag's metadata (YAML of any version, as
/// `bag_metadata_yaml` reads it), `bag_size` its files' bytes, sorted by `sort` (`name`,
/// `type` or `count`). With `uri`, the verbose text: the bag there is read for each topic's
/// and service's size and each service's requests and responses.
#[pyfunction]
#[pyo3(signature = (metadata_yaml, bag_size, sort = "name", uri = None))]
pub(crate) fn bag_info_text(
    py: Python<'_>,
    metadata_yaml: &str,
    bag_size: u64,
    sort: &str,
    uri: Option<&str>,
) -> PyResult<String> {
    let metadata = metadata(metadata_yaml)?;
    let sort = sort_by(sort)?;
    let Some(uri) = uri else {
        return Ok(info::describe(&metadata, bag_size, sort));
    };
    let contents = py
        .allow_threads(|| info::Contents::of(&Bag::open(uri)?))
        .map_err(bag_error)?;
    Ok(info::describe_verbose(&metadata, bag_size, sort, &contents))
}

/// The names of the topics in a bag's metadata, service events left out, sorted by
/// `sort` (`ros2 bag info --topic-name`).
#[pyfunction]
#[pyo3(signature = (metadata_yaml, sort = "name"))]
pub(crate) fn bag_info_topic_names(metadata_yaml: &str, sort: &str) -> PyResult<Vec<String>> {
    let metadata = metadata(metadata_yaml)?;
    Ok(info::topic_names(&metadata, sort_by(sort)?)
        .into_iter()
        .map(str::to_owned)
        .collect())
}

fn metadata(text: &str) -> PyResult<BagMetadata> {
    BagMetadata::from_yaml(text)
        .map_err(|e| BagError::new_err(format!("not rosbag2 metadata: {e}")))
}

/// rosbag2_py raises RuntimeError for a sorting method it does not know.
fn sort_by(sort: &str) -> PyResult<info::SortBy> {
    sort.parse()
        .map_err(|e: kairos_bag::Error| PyRuntimeError::new_err(e.to_string()))
}

/// The complete definition of `type_name` (`pkg/msg/Type`, `pkg/Type` or `pkg/srv/Type`)
/// as rosbag2's `LocalMessageDefinitionSource` gives it: (encoding, text) from the files
/// of the installed package (`AMENT_PREFIX_PATH`), else (`ros2msg`, text) for a message
/// kairos ships, else (`unknown`, ``).
#[pyfunction]
pub(crate) fn bag_definition(type_name: &str) -> (String, String) {
    let installed = kairos_bag::LocalDefinitionSource::from_env().full_text(type_name);
    if installed.encoding != "unknown" || !installed.text.is_empty() {
        return (installed.encoding, installed.text);
    }
    let parts: Vec<&str> = type_name.split('/').collect();
    let full = match parts[..] {
        [package, name] => format!("{package}/msg/{name}"),
        _ => type_name.to_owned(),
    };
    match kairos_bag::shipped_definition(&full) {
        Ok(text) => (kairos_bag::schema::encoding_of(&text).to_owned(), text),
        Err(_) => ("unknown".to_owned(), String::new()),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BagError", m.py().get_type::<BagError>())?;
    m.add_class::<PyBagReader>()?;
    m.add_class::<PyBagWriter>()?;
    m.add_function(wrap_pyfunction!(bag_reindex, m)?)?;
    m.add_function(wrap_pyfunction!(bag_metadata_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(bag_definition, m)?)?;
    m.add_function(wrap_pyfunction!(bag_info_text, m)?)?;
    m.add_function(wrap_pyfunction!(bag_info_topic_names, m)?)?;
    Ok(())
}
