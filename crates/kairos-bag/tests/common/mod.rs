//! Helpers shared by the integration tests: paths of the rosbag2 test bags, hand-declared
//! kairos message types with their `.msg` texts, and running the Python interop scripts.

#![allow(dead_code)] // each test binary uses its own part

use kairos_interface::type_hash::{Field, TypeDescription, type_id};
use kairos_interface::{Message, builtin};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A bag (or file) under `tests/data/rosbag2/`.
pub fn rosbag2_data(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rosbag2")
        .join(relative)
}

/// `std_msgs/msg/String`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StringMsg {
    pub data: String,
}

impl Message for StringMsg {
    const TYPE_NAME: &'static str = "std_msgs/msg/String";
    fn description() -> TypeDescription {
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![Field::primitive("data", type_id::STRING)],
        )
    }
}

/// `builtin_interfaces/msg/Time`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Time {
    pub sec: i32,
    pub nanosec: u32,
}

/// `std_msgs/msg/Header`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub stamp: Time,
    pub frame_id: String,
}

/// `geometry_msgs/msg/Vector3`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// `geometry_msgs/msg/Quaternion`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quaternion {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    pub w: f64,
}

/// `geometry_msgs/msg/Transform`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    pub translation: Vector3,
    pub rotation: Quaternion,
}

/// `geometry_msgs/msg/TransformStamped`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransformStamped {
    pub header: Header,
    pub child_frame_id: String,
    pub transform: Transform,
}

fn doubles(type_name: &str, names: &[&str]) -> TypeDescription {
    TypeDescription::new(
        type_name,
        names
            .iter()
            .map(|n| Field::primitive(n, type_id::DOUBLE))
            .collect(),
    )
}

impl Message for TransformStamped {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/TransformStamped";
    fn description() -> TypeDescription {
        let header = TypeDescription::new(
            "std_msgs/msg/Header",
            vec![
                Field::nested("stamp", builtin::time()),
                Field::primitive("frame_id", type_id::STRING),
            ],
        );
        let transform = TypeDescription::new(
            "geometry_msgs/msg/Transform",
            vec![
                Field::nested(
                    "translation",
                    doubles("geometry_msgs/msg/Vector3", &["x", "y", "z"]),
                ),
                Field::nested(
                    "rotation",
                    doubles("geometry_msgs/msg/Quaternion", &["x", "y", "z", "w"]),
                ),
            ],
        );
        TypeDescription::new(
            Self::TYPE_NAME,
            vec![
                Field::nested("header", header),
                Field::primitive("child_frame_id", type_id::STRING),
                Field::nested("transform", transform),
            ],
        )
    }
}

/// The `.msg` texts of the types above (as in ros2/common_interfaces, comments shortened).
pub fn msg_text(type_name: &str) -> Option<String> {
    let text = match type_name {
        "std_msgs/msg/String" => "# A string.\nstring data\n",
        "std_msgs/msg/Header" => {
            "# Standard metadata for higher-level stamped data types.\n\
             builtin_interfaces/Time stamp\n\n# Transform frame with which this data is associated.\nstring frame_id\n"
        }
        "builtin_interfaces/msg/Time" => {
            "int32 sec\n\n# The nanoseconds component.\nuint32 nanosec\n"
        }
        "geometry_msgs/msg/TransformStamped" => {
            "# This expresses a transform from coordinate frame header.frame_id\n\
             # to the coordinate frame child_frame_id at the time of header.stamp\n\n\
             std_msgs/Header header\nstring child_frame_id # the frame id of the child frame\n\
             Transform transform\n"
        }
        "geometry_msgs/msg/Transform" => {
            "# This represents the transform between two coordinate frames in free space.\n\n\
             Vector3 translation\nQuaternion rotation\n"
        }
        "geometry_msgs/msg/Vector3" => "float64 x\nfloat64 y\nfloat64 z\n",
        "geometry_msgs/msg/Quaternion" => "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n",
        _ => return None,
    };
    Some(text.to_owned())
}

/// Runs `tests/py/<script>` with `args` and parses the JSON it prints.
///
/// Fails the test, never skips it, when Python or one of the packages is missing: the
/// message says what to install. `KAIROS_BAG_PYTHON` names the interpreter (default
/// `python3`).
pub fn python(script: &str, args: &[&Path]) -> serde_json::Value {
    let interpreter = std::env::var("KAIROS_BAG_PYTHON").unwrap_or_else(|_| "python3".into());
    let script_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(script);
    let output = Command::new(&interpreter)
        .arg(&script_path)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {interpreter} ({e}): these tests need Python 3 with \
                 `pip install rosbags mcap mcap-ros2-support`"
            )
        });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} {args:?} failed ({}):\n{stderr}\n(these tests need \
         `pip install rosbags mcap mcap-ros2-support`)",
        output.status
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON ({e}):\n{}\n{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}
