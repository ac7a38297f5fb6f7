//! rosbag2's control services for a [`Player`](crate::play::Player) and a
//! [`Recorder`](crate::record::Recorder), served under the node that plays or records, with
//! `rosbag2_interfaces`' types, so `ros2 service call` and rosbag2's own tools drive a
//! kairos player or recorder as they drive rosbag2's (`kairos bag play` and `record` serve
//! them; so can any program that embeds a player or a recorder).
//!
//! - [`player::serve`]: `~/pause`, `~/resume`, `~/toggle_paused`, `~/play_next`, ...
//! - [`recorder::serve`]: `~/pause`, `~/resume`, `~/is_paused`, `~/split_bagfile`,
//!   `~/snapshot`; [`recorder::split_events`] publishes each split as rosbag2 does.
//!
//! The services are withdrawn when the returned [`ControlServices`] is dropped.

pub mod player;
pub mod recorder;

use kairos::graph::{GraphError, Service};
use std::any::Any;

/// Services kept alive until dropped.
#[derive(Default)]
pub struct ControlServices {
    services: Vec<Box<dyn Any + Send>>,
}

impl std::fmt::Debug for ControlServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlServices")
            .field("services", &self.services.len())
            .finish()
    }
}

impl ControlServices {
    /// Keeps `service` once it is created, or returns why it could not be.
    pub fn keep<Req: Send + 'static, Resp: Send + 'static>(
        &mut self,
        service: Result<Service<Req, Resp>, GraphError>,
    ) -> Result<(), GraphError>
    where
        Service<Req, Resp>: Send,
    {
        self.services.push(Box::new(service?));
        Ok(())
    }
}
