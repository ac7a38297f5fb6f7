//! Generates the Rust types of the interface packages in `interfaces/`.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let mut generator = kairos_msgs_gen::Generator::new().runtime_crate("crate");
    for package in kairos_msgs_gen::SHIPPED_PACKAGES {
        generator = generator.package(root.join("interfaces").join(package));
    }
    if let Err(e) = generator.write(out.join("interfaces.rs")) {
        panic!("{e}");
    }
}
