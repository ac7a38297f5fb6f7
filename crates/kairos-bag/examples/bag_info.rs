//! Prints what kairos-bag reads from a bag: `cargo run --example bag_info -- <path>`.

use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let bag = kairos_bag::Bag::open(&path)?;
        let info = bag.info();
        println!(
            "{path}: {} v{} distro '{}' compression '{}'/'{}'",
            info.storage_identifier,
            info.version,
            info.ros_distro,
            info.compression_format,
            info.compression_mode
        );
        println!(
            "  start {} duration {} end {} messages {}",
            info.starting_time_ns,
            info.duration_ns,
            info.end_time_ns(),
            info.message_count
        );
        for file in &info.files {
            println!("  file {file:?}");
        }
        for topic in &info.topics {
            println!(
                "  topic {} {} {} count {} hash '{}' qos {}",
                topic.name,
                topic.type_name,
                topic.serialization_format,
                topic.message_count,
                topic.type_description_hash,
                topic.offered_qos_profiles.len()
            );
        }
        let mut counts = BTreeMap::new();
        let (mut first, mut last, mut previous) = (None, 0, 0);
        for message in bag.messages()? {
            let message = message?;
            assert!(message.log_time >= previous, "out of order");
            previous = message.log_time;
            first.get_or_insert(message.log_time);
            last = message.log_time;
            *counts.entry(message.topic.to_string()).or_insert(0u64) += 1;
        }
        println!("  read {counts:?} first {first:?} last {last}");
    }
    Ok(())
}
