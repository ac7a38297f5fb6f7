//! rosbag2 bags, read and written as rosbag2 reads and writes them, for kairos.
//!
//! A bag is a folder holding a `metadata.yaml` and storage files `<name>_0.mcap`,
//! `<name>_1.mcap`, ... (or `.db3` for the older sqlite3 storage). This crate writes MCAP
//! bags the way rosbag2_cpp and its MCAP plugin write them, so `ros2 bag`, Foxglove,
//! rosbags and the `mcap` tools read them, and reads the bags of every rosbag2 version in
//! both storages.
//!
//! - [`writer`]: [`BagWriter`], [`WriterOptions`], [`TopicInfo`]: writing a bag.
//! - [`reader`]: [`Bag`], [`BagMessage`], [`ReadFilter`]: opening a bag (folder or single
//!   file), its description, its messages in log-time order, typed reads.
//! - [`metadata`]: [`BagMetadata`], `metadata.yaml` of every version.
//! - [`qos`]: [`QosProfile`], the offered QoS profiles rosbag2 records per topic.
//! - [`schema`]: [`ros2msg_definition`], the message definition text of MCAP schemas.
//! - [`definition_source`]: [`LocalDefinitionSource`], definitions from the `.msg`,
//!   `.srv` and `.idl` files of installed packages, as rosbag2's recorder stores them.
//! - [`info`]: what `ros2 bag info` says of a bag, in its layout.
//! - [`error`]: [`Error`], what went wrong and what to do about it.
//! - `record` (feature `zenoh`): `Recorder`, recording a running system's topics
//!   through kairos's Zenoh transport, losses counted.
//! - `play` (feature `zenoh`): `Player`, playing a bag back to a running system through
//!   kairos's Zenoh transport at its recorded pace, never early, lateness measured.
//! - `services` (feature `zenoh`): rosbag2's control services of a player and a recorder.
//!
//! ```no_run
//! let bag = kairos_bag::Bag::open("my_bag")?;
//! for topic in &bag.info().topics {
//!     println!("{}: {} ({} messages)", topic.name, topic.type_name, topic.message_count);
//! }
//! for message in bag.messages()? {
//!     let message = message?;
//!     println!("{} {} {} bytes", message.log_time, message.topic, message.data.len());
//! }
//! # Ok::<(), kairos_bag::Error>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

pub mod definition_source;
pub mod error;
pub mod info;
mod mcap_file;
pub mod metadata;
#[cfg(feature = "zenoh")]
pub mod play;
pub mod qos;
pub mod reader;
#[cfg(feature = "zenoh")]
pub mod record;
pub mod schema;
#[cfg(feature = "zenoh")]
pub mod services;
mod sqlite;
mod sqlite_writer;
pub mod writer;

pub use definition_source::LocalDefinitionSource;
pub use error::{Error, Result};
pub use metadata::{BagMetadata, FileInformation, TopicInformation};
pub use qos::QosProfile;
pub use reader::{Bag, BagMessage, Messages, ReadFilter, Typed};
#[cfg(feature = "zenoh")]
pub use schema::shipped_definition;
pub use schema::{MessageDefinition, ros2msg_definition};
pub use writer::{
    BagCompression, BagWriter, Compression, FileSplit, SplitReason, StorageId, TopicInfo,
    WriterOptions,
};

#[cfg(test)]
mod tests {
    /// Bags are written and read from any thread.
    #[test]
    fn types_cross_threads() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        send::<crate::BagWriter>();
        send::<crate::Bag>();
        sync::<crate::Bag>();
        send::<crate::Messages>();
        send::<crate::Typed<crate::tests::Dummy>>();
        send::<crate::Error>();
        sync::<crate::Error>();
    }

    #[derive(Debug, serde::Serialize, serde::Deserialize)]
    struct Dummy;

    impl kairos_interface::Message for Dummy {
        const TYPE_NAME: &'static str = "test_msgs/msg/Empty";
        fn description() -> kairos_interface::TypeDescription {
            kairos_interface::TypeDescription::new(Self::TYPE_NAME, Vec::new())
        }
    }
}
