//! The constants of the shipped interface packages (`uint8 INFO=20` in `Log.msg`), read
//! from the `.msg`/`.srv` files kairos-msgs generates its types from, with the same
//! parser: Rust's generated types keep them as associated consts, which no trait
//! exposes, so the Python classes get them from this table.

use kairos_msgs_gen::parse::{Constant, Value};
use std::fmt::Write as _;
use std::path::PathBuf;

fn literal(value: &Value) -> String {
    match value {
        Value::Bool(b) => format!("Const::Bool({b})"),
        Value::Int(i) => format!("Const::Int({i})"),
        Value::Float(f) => format!("Const::Float({f:?})"),
        Value::Str(s) => format!("Const::Str({s:?})"),
        // Constants are scalars (rosidl allows no array constants).
        Value::List(_) => "Const::Bool(false)".to_owned(),
    }
}

fn entry(out: &mut String, type_name: &str, constants: &[Constant]) {
    if constants.is_empty() {
        return;
    }
    let _ = write!(out, "    ({type_name:?}, &[");
    for constant in constants {
        let _ = write!(out, "({:?}, {}), ", constant.name, literal(&constant.value));
    }
    out.push_str("]),\n");
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let interfaces = manifest.join("../kairos-msgs/interfaces");
    println!("cargo:rerun-if-changed={}", interfaces.display());
    let mut out = String::from("&[\n");
    for package in kairos_msgs_gen::SHIPPED_PACKAGES {
        let loaded = kairos_msgs_gen::Package::load(package, &interfaces.join(package))
            .unwrap_or_else(|e| panic!("{e}"));
        for message in &loaded.messages {
            let name = format!("{package}/msg/{}", message.name);
            entry(&mut out, &name, &message.spec.constants);
        }
        for service in &loaded.services {
            let name = format!("{package}/srv/{}", service.name);
            entry(
                &mut out,
                &format!("{name}_Request"),
                &service.request.constants,
            );
            entry(
                &mut out,
                &format!("{name}_Response"),
                &service.response.constants,
            );
        }
    }
    out.push(']');
    let path = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("constants.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
