//! Prints the ROS type name and RIHS01 hash of every shipped message and service type:
//! `cargo run --release -p kairos-msgs --example type_hashes`.

use kairos_msgs::{InterfaceVisitor, Message, ServiceType};

struct Print;

impl InterfaceVisitor for Print {
    fn message<M: Message>(&mut self) {
        println!("{} {}", M::TYPE_NAME, M::type_hash());
    }
    fn service<S: ServiceType>(&mut self) {
        println!("{} {}", S::TYPE_NAME, S::type_hash());
    }
}

fn main() {
    kairos_msgs::visit_interfaces(&mut Print);
}
