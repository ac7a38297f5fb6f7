//! A node's clock, timers and guard conditions.

use super::{Node, payload_type};
use crate::exec::callback::Callback;
use crate::exec::entity::{BoxFuture, Entity};
use crate::exec::{CallbackTimer, GuardCondition, GuardInner, TimerCallback, TimerInner};
use crate::graph::error::GraphError;
use crate::graph::qos::Qos;
use crate::graph::view::EntityKind;
use crate::time::{Clock, Duration, RosClock, Tick, Timer};
use std::future::Future;

impl Node {
    /// A guard condition named `name` whose `callback` runs once per trigger.
    pub fn create_guard_condition<F>(&self, name: &str, callback: F) -> GuardCondition
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.guard(name, Callback::Sync(Box::new(move |()| callback())))
    }

    /// A guard condition named `name` whose `async` `callback` starts once per trigger;
    /// the node's group is held until the future it returns completes (as an async timer).
    pub fn create_guard_condition_async<F, Fut>(&self, name: &str, callback: F) -> GuardCondition
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.guard(
            name,
            Callback::Async(Box::new(move |()| -> BoxFuture { Box::pin(callback()) })),
        )
    }

    fn guard(&self, name: &str, callback: Callback<()>) -> GuardCondition {
        let inner = self
            .add_entity(
                format_args!("guard condition {name}"),
                |core| GuardInner::new(core, callback),
                |_, _| Ok(()),
            )
            .expect("announcing a guard condition cannot fail");
        let node = self.clone();
        let id = inner.core().id();
        GuardCondition {
            inner,
            on_drop: Some(Box::new(move || node.forget(id))),
        }
    }

    /// The node's clock: ROS time, i.e. system time, or the context's simulation time
    /// after [`set_use_sim_time(true)`](Self::set_use_sim_time); or whatever clock
    /// [`set_clock`](Self::set_clock) chose.
    pub fn clock(&self) -> Clock {
        self.shared.clock.lock().clone()
    }

    /// Switches the node between simulation time (its context's `/clock`) and system time,
    /// as ROS's `use_sim_time` parameter does: the node's clock becomes a
    /// [`RosClock`](crate::time::RosClock) over the context's simulated clock (made on the
    /// first call), and switching it tells its jump handlers, ends waits in progress with
    /// `ClockChanged`, and restarts its timers' periods.
    pub fn set_use_sim_time(&self, on: bool) -> Result<(), GraphError> {
        let mut clock = self.shared.clock.lock();
        let ros = match clock.as_ros() {
            Some(ros) => ros.clone(),
            None => {
                let sim = self.shared.context.sim_clock_with(self.shared.sim_stall)?;
                let ros = RosClock::new(sim);
                *clock = ros.clock();
                ros
            }
        };
        drop(clock);
        ros.set_use_sim_time(on);
        self.show_clock_subscription(on)
    }

    /// Shows, while `on`, the `/clock` subscription of a node on simulation time, in this
    /// process's graph and to other processes, as rclcpp's time source subscribes
    /// (`ClockQoS`: best effort, the last 1): a simulator sees who follows its clock.
    /// Nothing is delivered through it: the context's simulated clock hears `/clock`
    /// once for all its nodes.
    pub(crate) fn show_clock_subscription(&self, on: bool) -> Result<(), GraphError> {
        use crate::graph::clock_msg::{CLOCK_TOPIC, ClockMsg};
        let mut shown = self.shared.clock_subscription.lock();
        if !on {
            *shown = None;
        } else if shown.is_none() {
            let qos = Qos::keep_last(1).best_effort();
            let remote = crate::graph::transport::announced_subscription::<ClockMsg>(
                self,
                CLOCK_TOPIC,
                qos,
            )?;
            let local = self.in_graph(
                EntityKind::Subscription,
                CLOCK_TOPIC,
                payload_type::<ClockMsg>(),
                Some(qos),
            );
            *shown = Some((local, remote));
        }
        Ok(())
    }

    /// Sets the clock that timers created from now on use.
    pub fn set_clock(&self, clock: Clock) {
        *self.shared.clock.lock() = clock;
    }

    /// Runs `callback` every `period` (a `kairos` or `std` duration) of the node's clock.
    ///
    /// ```
    /// use kairos::graph::{Context, Node};
    ///
    /// let node = Node::new_in(&Context::new(), "talker", "/")?;
    /// let _timer = node.create_timer(std::time::Duration::from_millis(100), |tick| {
    ///     println!("tick at {}", tick.actual);
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn create_timer<F>(
        &self,
        period: impl Into<Duration>,
        callback: F,
    ) -> Result<CallbackTimer, GraphError>
    where
        F: Fn(Tick) + Send + Sync + 'static,
    {
        self.create_timer_on(self.clock(), period, callback)
    }

    /// Runs `callback` every `period` of `clock`.
    pub fn create_timer_on<F>(
        &self,
        clock: Clock,
        period: impl Into<Duration>,
        callback: F,
    ) -> Result<CallbackTimer, GraphError>
    where
        F: Fn(Tick) + Send + Sync + 'static,
    {
        self.timer(
            clock,
            period.into(),
            TimerCallback::Sync(Box::new(callback)),
        )
    }

    /// Like [`create_timer`](Self::create_timer) with an `async` callback, polled by the
    /// executor; the group stays held until its future completes.
    ///
    /// The callback is cloned for each tick and called once, so an async closure that
    /// captures state works as it is; its captures must be `Clone` (wrap what is not in
    /// an `Arc`):
    ///
    /// ```
    /// use kairos::graph::{Context, Node};
    ///
    /// let context = Context::new();
    /// let server = Node::new_in(&context, "server", "/")?;
    /// let _service = server.create_service("add", |(a, b): (i64, i64)| a + b)?;
    /// let node = Node::new_in(&context, "caller", "/")?;
    /// let client = node.create_client::<fn((i64, i64)) -> i64>("add")?;
    /// let _timer = node.create_timer_async(std::time::Duration::from_secs(1), async move |_| {
    ///     let sum = client.call_async((2, 3)).await;
    ///     println!("{sum:?}");
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn create_timer_async<F, Fut>(
        &self,
        period: impl Into<Duration>,
        callback: F,
    ) -> Result<CallbackTimer, GraphError>
    where
        F: FnOnce(Tick) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = move |tick| -> BoxFuture { Box::pin(callback.clone()(tick)) };
        self.timer(
            self.clock(),
            period.into(),
            TimerCallback::Async(Box::new(callback)),
        )
    }

    fn timer(
        &self,
        clock: Clock,
        period: Duration,
        callback: TimerCallback,
    ) -> Result<CallbackTimer, GraphError> {
        let timer = Timer::new(clock, period)?;
        let timer_handle = timer.trace_handle();
        let inner = self.add_entity(
            format_args!("timer {period}"),
            |core| TimerInner::new(core, timer, callback),
            |_, id| {
                crate::trace::tp::rclcpp_timer_callback_added(timer_handle, id);
                crate::trace::tp::rclcpp_timer_link_node(timer_handle, self.shared.handle);
                Ok(())
            },
        )?;
        let id = inner.core().id();
        let node = self.clone();
        Ok(CallbackTimer {
            inner,
            on_drop: Some(Box::new(move || node.forget(id))),
        })
    }
}
