//! A node's services and clients.

use super::Node;
use crate::graph::client::{Client, ClientInner};
use crate::graph::error::GraphError;
use crate::graph::name::NameKind;
use crate::graph::service::{ResponseFuture, Service, ServiceCallback, ServiceInner};
use crate::graph::view::EntityKind;
use kairos_interface::{Payload, ServiceCall};
use std::future::Future;
use std::sync::Arc;

impl Node {
    /// Serves `service` with `callback`, run once per request on the node's executor.
    ///
    /// The request and response types are [`Payload`]s: generated request and response
    /// messages (`AddTwoIntsRequest`, `AddTwoIntsResponse`) serve their service to other
    /// processes too; Rust values serve this process.
    pub fn create_service<Req, Resp, F>(
        &self,
        service: &str,
        callback: F,
    ) -> Result<Service<Req, Resp>, GraphError>
    where
        Req: Payload,
        Resp: Payload,
        F: Fn(Req) -> Resp + Send + Sync + 'static,
    {
        self.serve(service, ServiceCallback::Sync(Box::new(callback)))
    }

    /// Like [`create_service`](Self::create_service) with an `async` callback, polled by
    /// the executor until it gives the response; the group stays held until then (as for
    /// an async timer). So a service can await a sleep or another service before it
    /// answers:
    ///
    /// ```
    /// use kairos::graph::{Context, Node};
    ///
    /// let context = Context::new();
    /// let adder = Node::new_in(&context, "adder", "/")?;
    /// let _add = adder.create_service("add", |(a, b): (i64, i64)| a + b)?;
    /// let node = Node::new_in(&context, "doubler", "/")?;
    /// let client = node.create_client::<fn((i64, i64)) -> i64>("add")?;
    /// let _double = node.create_service_async("double", move |x: i64| {
    ///     let sum = client.call_async((x, x));
    ///     async move { sum.await.unwrap_or(0) }
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    ///
    /// A panic of the future answers the caller `ServicePanicked`; an executor shut down
    /// while the future is suspended fails the call with `ExecutorShutDown`.
    pub fn create_service_async<Req, Resp, F, Fut>(
        &self,
        service: &str,
        callback: F,
    ) -> Result<Service<Req, Resp>, GraphError>
    where
        Req: Payload,
        Resp: Payload,
        F: Fn(Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Resp> + Send + 'static,
    {
        let callback = move |request| -> ResponseFuture<Resp> { Box::pin(callback(request)) };
        self.serve(service, ServiceCallback::Async(Box::new(callback)))
    }

    fn serve<Req, Resp>(
        &self,
        service: &str,
        callback: ServiceCallback<Req, Resp>,
    ) -> Result<Service<Req, Resp>, GraphError>
    where
        Req: Payload,
        Resp: Payload,
    {
        let name: Arc<str> = self.resolve_name(NameKind::Service, service)?.into();
        let inner = self.add_entity(
            format_args!("service {name}"),
            |core| ServiceInner::new(core, name.clone(), callback),
            |inner, id| {
                self.shared.context.register_server(&name, inner)?;
                crate::trace::tp::rcl_service_init(id, self.shared.handle, id, &name);
                crate::trace::tp::rclcpp_service_callback_added(id, id);
                Ok(())
            },
        )?;
        let remote = crate::graph::transport::service::<Req, Resp>(self, &name);
        let mut service = Service {
            _in_graph: self.in_graph(
                EntityKind::Service,
                &name,
                (service_type::<fn(Req) -> Resp>(), String::new()),
                None,
            ),
            _remote: None,
            inner,
            node: self.clone(),
        };
        // On failure the service drops here, which takes it off its node and context.
        service._remote = remote?;
        Ok(service)
    }

    /// A client of `service` (resolved against the node's namespace); see [`Client`].
    ///
    /// `S` names the service: a generated service type (`AddTwoInts`), which calls servers
    /// in other processes too, or `fn(Request) -> Response`:
    ///
    /// ```
    /// use kairos::graph::{Client, Context, Node};
    ///
    /// let node = Node::new_in(&Context::new(), "caller", "/")?;
    /// let _double: Client<fn(i64) -> i64> = node.create_client("double")?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    ///
    /// Fails when the name is invalid, the service already has other types, or the
    /// process's transport cannot carry the client.
    pub fn create_client<S: ServiceCall>(&self, service: &str) -> Result<Client<S>, GraphError> {
        let name: Arc<str> = self.resolve_name(NameKind::Service, service)?.into();
        self.shared
            .context
            .check_service_types::<S::Request, S::Response>(&name)?;
        let context = self.shared.context.clone();
        let remote = crate::graph::transport::client::<S>(self, &name)?;
        let inner = self.add_entity(
            format_args!("client {name}"),
            |core| ClientInner::new(core, name.clone(), context, remote),
            |_, id| {
                crate::trace::tp::rcl_client_init(id, self.shared.handle, id, &name);
                Ok(())
            },
        )?;
        let in_graph = self.in_graph(
            EntityKind::Client,
            &name,
            (service_type::<S>(), String::new()),
            None,
        );
        Ok(Client::new(inner, self.clone(), in_graph))
    }
}

/// The ROS type of a service, or its Rust signature for one that stays in the process.
fn service_type<S: ServiceCall>() -> String {
    S::wire().map_or_else(
        || {
            format!(
                "fn({}) -> {}",
                std::any::type_name::<S::Request>(),
                std::any::type_name::<S::Response>()
            )
        },
        |wire| wire.type_name().to_owned(),
    )
}
