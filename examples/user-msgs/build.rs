//! Generates the Rust types of my_robot_msgs/ (msg/*.msg, srv/*.srv).

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    if let Err(e) = kairos_msgs_gen::Generator::new()
        .package("my_robot_msgs")
        .write(out.join("my_robot_msgs.rs"))
    {
        panic!("{e}");
    }
}
