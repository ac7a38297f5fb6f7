//! The first built-in types under the names kairos gave them before `kairos-msgs`; each is
//! the generated type of its ROS package.

/// `std_msgs/msg/String` (named so beside Rust's `String`).
pub type StringMsg = kairos_msgs::std_msgs::msg::String;
pub use kairos_msgs::builtin_interfaces::msg::Time;
pub use kairos_msgs::cdr::Bytes;
pub use kairos_msgs::example_interfaces::srv::{AddTwoInts, AddTwoIntsRequest, AddTwoIntsResponse};
pub use kairos_msgs::rosgraph_msgs::msg::Clock;
