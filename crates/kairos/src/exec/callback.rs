//! The user callback an entity runs for each unit of its work, plain or `async`: one type
//! for timers (`Callback<Tick>`) and subscriptions (`Callback<Arc<T>>`), so both start,
//! trace and hand over an async callback's future the same way.

use super::entity::{BoxFuture, CallbackScope, EntityCore, Execution};

pub(crate) enum Callback<A> {
    /// Runs to its end on the worker, between `callback_start` and `callback_end`.
    Sync(Box<dyn Fn(A) + Send + Sync>),
    /// Returns a future the executor polls; its end is traced when the future completes.
    Async(Box<dyn Fn(A) -> BoxFuture + Send + Sync>),
}

impl<A> Callback<A> {
    /// Runs the callback of the entity with `core` on `argument`.
    #[inline]
    pub(crate) fn run(&self, core: &EntityCore, argument: A) -> Execution {
        match self {
            Callback::Sync(callback) => {
                let _scope = CallbackScope::enter(core);
                callback(argument);
                Execution::Done
            }
            Callback::Async(callback) => {
                CallbackScope::start_async(core);
                Execution::Pending(Box::new(callback(argument)))
            }
        }
    }
}
