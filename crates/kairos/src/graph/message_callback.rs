//! What a subscription callback may take: the message as `Arc<T>` or as `&T`.
//!
//! Delivery in the process shares one `Arc<T>` among every subscription of a topic. A
//! callback that keeps the message beyond its call takes the `Arc` (no copy); one that only
//! reads it may take `&T`, as rclcpp's `const T &` callbacks do. Either way nothing is
//! copied.

use std::sync::Arc;

/// A closure a subscription runs once per message: `Fn(Arc<T>)` or `Fn(&T)`.
///
/// `Args` only tells the two apart (it is `fn(Arc<T>)` or `fn(&T)`) and is always inferred;
/// annotate the closure's argument (`|m: &String|`, `|m: Arc<String>|`) to choose.
pub trait MessageCallback<T, Args>: Send + Sync + 'static {
    /// The callback in the form the subscription stores.
    fn into_arc_callback(self) -> Box<dyn Fn(Arc<T>) + Send + Sync>;
}

impl<T, F> MessageCallback<T, fn(Arc<T>)> for F
where
    T: 'static,
    F: Fn(Arc<T>) + Send + Sync + 'static,
{
    fn into_arc_callback(self) -> Box<dyn Fn(Arc<T>) + Send + Sync> {
        Box::new(self)
    }
}

impl<T, F> MessageCallback<T, fn(&T)> for F
where
    T: 'static,
    F: Fn(&T) + Send + Sync + 'static,
{
    fn into_arc_callback(self) -> Box<dyn Fn(Arc<T>) + Send + Sync> {
        Box::new(move |message: Arc<T>| self(&message))
    }
}
