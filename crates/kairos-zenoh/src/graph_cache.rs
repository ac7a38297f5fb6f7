//! What this process sees of the ROS graph: every liveliness token alive in its domain.
//!
//! Ground rules: zenoh's liveliness callback adds and removes tokens under `tokens`' lock
//! and then notifies `changed`; readers take snapshots under the lock and never call out
//! while holding it.

use crate::graph_key::{EntityKind, Token};
use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;
use std::time::Instant;

#[derive(Debug, Default)]
pub struct GraphCache {
    tokens: Mutex<HashSet<Token>>,
    changed: Condvar,
}

impl GraphCache {
    /// A token appeared (`alive`) or went away.
    pub(crate) fn update(&self, key: &str, alive: bool) {
        // Tokens of another shape (other tools, newer formats) are not ours to show.
        let Ok(token) = Token::parse(key) else { return };
        let mut tokens = self.tokens.lock();
        if alive {
            tokens.insert(token);
        } else {
            tokens.remove(&token);
        }
        drop(tokens);
        self.changed.notify_all();
    }

    /// Every token now.
    pub fn tokens(&self) -> Vec<Token> {
        self.tokens.lock().iter().cloned().collect()
    }

    fn has_server(tokens: &HashSet<Token>, name: &str, hash: &str) -> bool {
        tokens.iter().any(|t| {
            t.kind == EntityKind::Service
                && t.endpoint
                    .as_ref()
                    .is_some_and(|e| e.name == name && e.hash == hash)
        })
    }

    /// Whether a server of service `name` with type hash `hash` is alive.
    pub fn server_alive(&self, name: &str, hash: &str) -> bool {
        Self::has_server(&self.tokens.lock(), name, hash)
    }

    /// Waits for such a server until `deadline` (none: no deadline).
    pub fn wait_server(&self, name: &str, hash: &str, deadline: Option<Instant>) -> bool {
        let mut tokens = self.tokens.lock();
        loop {
            if Self::has_server(&tokens, name, hash) {
                return true;
            }
            match deadline {
                Some(deadline) => {
                    if self.changed.wait_until(&mut tokens, deadline).timed_out() {
                        return Self::has_server(&tokens, name, hash);
                    }
                }
                None => self.changed.wait(&mut tokens),
            }
        }
    }

    /// Waits until `ready` holds of the tokens or `deadline` passes; true if it holds.
    pub fn wait_until(&self, deadline: Instant, ready: impl Fn(&[Token]) -> bool) -> bool {
        let mut tokens = self.tokens.lock();
        loop {
            let snapshot: Vec<Token> = tokens.iter().cloned().collect();
            if ready(&snapshot) {
                return true;
            }
            if self.changed.wait_until(&mut tokens, deadline).timed_out() {
                let snapshot: Vec<Token> = tokens.iter().cloned().collect();
                return ready(&snapshot);
            }
        }
    }
}
