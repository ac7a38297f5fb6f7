//! Controlling a playback from any thread, as rosbag2's player control services do:
//! pause, resume, toggle, rate, play next, burst, seek and stop.
//!
//! What a [`PlayerControl`] promises:
//! - **Answers, never hangs.** Pause, resume, toggle and the rate apply at once (a sleeping
//!   send wakes and looks again). Play next, burst and seek need the playing thread, which
//!   holds the next message: they are answered when it next waits for a message to be due
//!   (after [`PlayOptions::delay`] and the wait for subscribers), and at the latest when
//!   playing ends (stopped, or the bag played), then with "nothing played".
//! - **Play next and burst only while paused**, as rosbag2's: the next message(s) go out
//!   at once, in order, and the bag's time (and `/clock`) moves to each one's time; the
//!   playback stays paused. A burst ends at the end of the bag; 0 asks for the rest of it.
//! - **Seek** moves the playback to a bag time (one before the start of playing is the
//!   start), paused or not; the next message is the first at or after it.
//! - **Lock-step replay has no rate and does not seek**: time would go back in every
//!   process. Those requests answer `false`; pause, resume, play next and burst work.

use super::*;
use std::sync::mpsc::{Receiver, Sender, channel};

/// What only the playing thread can do, with whom to answer.
pub(super) enum Request {
    PlayNext(Sender<bool>),
    Burst(u64, Sender<u64>),
    Seek(u64, Sender<bool>),
}

/// A handle to a playback, cloneable and usable from any thread (see the module docs).
/// Got from [`Player::control`].
#[derive(Debug, Clone)]
pub struct PlayerControl {
    pub(super) shared: Arc<Shared>,
}

impl PlayerControl {
    /// Pauses: no message is sent and the bag's time stands still until resumed.
    pub fn pause(&self) {
        self.set_paused(true);
    }

    /// Resumes where the bag's time stood.
    pub fn resume(&self) {
        self.set_paused(false);
    }

    /// Pauses if playing, resumes if paused; returns whether it is paused now.
    pub fn toggle(&self) -> bool {
        let mut t = self.shared.timeline.lock().expect("not poisoned");
        let paused = !t.paused;
        t.set_paused(paused, self.shared.steady.now());
        t.changed(&self.shared.stop);
        paused
    }

    /// Whether it is paused.
    pub fn is_paused(&self) -> bool {
        self.shared.timeline.lock().expect("not poisoned").paused
    }

    /// The rate: bag time per monotonic time.
    pub fn rate(&self) -> f64 {
        self.shared.timeline.lock().expect("not poisoned").rate
    }

    /// Plays at `rate` from now on; false (and nothing changes) unless it is a number > 0,
    /// or in lock-step replay.
    pub fn set_rate(&self, rate: f64) -> bool {
        if !(rate.is_finite() && rate > 0.0) {
            log::warn!("kairos bag play: the rate must be a number > 0, not {rate}");
            return false;
        }
        if self.shared.lockstep {
            log::warn!("kairos bag play: a lock-step replay has no rate");
            return false;
        }
        let mut t = self.shared.timeline.lock().expect("not poisoned");
        t.set_rate(rate, self.shared.steady.now());
        t.changed(&self.shared.stop);
        true
    }

    /// While paused, sends the next message at once; false if not paused, or there is no
    /// next message (the bag played, or stopped).
    pub fn play_next(&self) -> bool {
        if !self.is_paused() {
            log::warn!("kairos bag play: play next while playing; pause first");
            return false;
        }
        let (reply, answer) = channel();
        self.ask(Request::PlayNext(reply), answer).unwrap_or(false)
    }

    /// While paused, sends the next `count` messages at once (0: every message left);
    /// returns how many were sent (0 if not paused).
    pub fn burst(&self, count: u64) -> u64 {
        if !self.is_paused() {
            log::warn!("kairos bag play: burst while playing; pause first");
            return 0;
        }
        let (reply, answer) = channel();
        let sent = self.ask(Request::Burst(count, reply), answer).unwrap_or(0);
        log::info!("kairos bag play: burst {sent} message(s)");
        sent
    }

    /// Moves playing to bag time `time_ns` (ns since the epoch); false in lock-step
    /// replay or when playing has ended.
    pub fn seek(&self, time_ns: u64) -> bool {
        let (reply, answer) = channel();
        self.ask(Request::Seek(time_ns, reply), answer)
            .unwrap_or(false)
    }

    /// Stops playing at once (a waiting sleep is cancelled).
    pub fn stop(&self) {
        self.shared.stop.cancel();
    }

    /// The bag's time now (ns since the epoch): what `/clock` carries.
    pub fn bag_time_ns(&self) -> u64 {
        let now = self.shared.steady.now();
        self.shared
            .timeline
            .lock()
            .expect("not poisoned")
            .bag_time_ns(now)
    }

    /// Messages sent so far (every topic, every loop).
    pub fn sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Acquire)
    }

    fn set_paused(&self, paused: bool) {
        let mut t = self.shared.timeline.lock().expect("not poisoned");
        t.set_paused(paused, self.shared.steady.now());
        t.changed(&self.shared.stop);
    }

    /// Hands `request` to the playing thread and waits for its answer; `None` once playing
    /// has ended (the thread drops the requests it did not answer).
    fn ask<T>(&self, request: Request, answer: Receiver<T>) -> Option<T> {
        self.shared
            .requests
            .lock()
            .expect("not poisoned")
            .send(request)
            .ok()?;
        // Wakes the playing thread if it sleeps until a message is due or while paused.
        self.shared
            .timeline
            .lock()
            .expect("not poisoned")
            .changed(&self.shared.stop);
        answer.recv().ok()
    }
}

/// The playing thread's side: the requests it has taken and not yet answered.
pub(super) struct Requests {
    incoming: Receiver<Request>,
    next: Option<Sender<bool>>,
    burst: Option<Burst>,
}

struct Burst {
    left: u64,
    done: u64,
    reply: Sender<u64>,
}

impl Requests {
    pub(super) fn new(incoming: Receiver<Request>) -> Self {
        Self {
            incoming,
            next: None,
            burst: None,
        }
    }

    /// Takes what came in; returns the bag time of a seek (answered at once). Play next
    /// and burst are taken while `paused`, refused otherwise; a seek is refused in
    /// `lockstep`.
    pub(super) fn take(&mut self, paused: bool, lockstep: bool) -> Option<u64> {
        while let Ok(request) = self.incoming.try_recv() {
            match request {
                Request::PlayNext(reply) if paused => {
                    if let Some(old) = self.next.replace(reply) {
                        let _ = old.send(false);
                    }
                }
                Request::PlayNext(reply) => {
                    let _ = reply.send(false);
                }
                Request::Burst(count, reply) if paused => {
                    self.end_burst();
                    self.burst = Some(Burst {
                        left: if count == 0 { u64::MAX } else { count },
                        done: 0,
                        reply,
                    });
                }
                Request::Burst(_, reply) => {
                    let _ = reply.send(0);
                }
                Request::Seek(_, reply) if lockstep => {
                    log::warn!("kairos bag play: a lock-step replay does not seek");
                    let _ = reply.send(false);
                }
                Request::Seek(time_ns, reply) => {
                    let _ = reply.send(true);
                    return Some(time_ns);
                }
            }
        }
        None
    }

    /// Whether the next message is to go out now, asked for.
    pub(super) fn asked(&self) -> bool {
        self.next.is_some() || self.burst.is_some()
    }

    /// The message asked for was sent.
    pub(super) fn played(&mut self) {
        if let Some(reply) = self.next.take() {
            let _ = reply.send(true);
        } else if let Some(burst) = &mut self.burst {
            burst.done += 1;
            burst.left -= 1;
            if burst.left == 0 {
                self.end_burst();
            }
        }
    }

    /// No message is left to send: what was asked for is answered with what was done.
    pub(super) fn end_of_bag(&mut self) {
        if let Some(reply) = self.next.take() {
            let _ = reply.send(false);
        }
        self.end_burst();
    }

    fn end_burst(&mut self) {
        if let Some(burst) = self.burst.take() {
            let _ = burst.reply.send(burst.done);
        }
    }
}

impl Drop for Requests {
    fn drop(&mut self) {
        self.end_of_bag();
    }
}
