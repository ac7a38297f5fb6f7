//! The services a bag tool serves under its node (the player's and the recorder's
//! control services), kept together: they are withdrawn when dropped.

use kairos::graph::{GraphError, Service};
use std::any::Any;

/// Services kept alive until dropped.
#[derive(Default)]
pub struct ControlServices {
    services: Vec<Box<dyn Any + Send>>,
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
