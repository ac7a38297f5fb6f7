//! Callbacks as they run: the per-thread stack of callbacks started and ended, and the
//! delivery each one consumed.

use super::*;

impl Builder {
    pub(super) fn callback_start(&mut self, at: At, cb: CallbackId, consumed: Option<DeliveryRef>) {
        if let Some(d) = consumed
            && let Some(del) = self.delivery_mut(d, at.ts)
        {
            del.callback = Some(cb);
            del.callback_start = Some(at.ts);
            del.tid = Some(at.tid);
            if let Some(s) = del.subscription {
                self.latest_taken.insert(s, d);
            }
        }
        self.m.callbacks[cb].tid = at.tid;
        if let Owner::Timer(t) = self.m.callbacks[cb].owner {
            if self.opts.messages {
                self.m.timers[t].fired.push(at.ts);
            }
            if let Some(d) = &mut self.digest {
                d.timer_fired(t, at.ts, self.m.timers[t].period_ns);
            }
        }
        self.thread(at).stack.push(Frame {
            callback: cb,
            start: at.ts,
            consumed,
        });
    }

    pub(super) fn callback_end(&mut self, at: At, cb: CallbackId) {
        let th = self.thread(at);
        let Some(pos) = th.stack.iter().rposition(|f| f.callback == cb) else {
            return;
        };
        let frame = th.stack.remove(pos);
        th.stack.truncate(pos);
        if let Some(d) = frame.consumed
            && let Some(del) = self.delivery_mut(d, at.ts)
        {
            del.callback_end = Some(at.ts);
        }
        if self.opts.messages {
            self.m.callbacks[cb]
                .runs
                .push((frame.start, at.ts - frame.start));
        }
        if let Some(d) = &mut self.digest {
            d.callback_run(cb, frame.start, at.ts - frame.start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PID: i64 = 1;

    fn at(ts: i64, tid: i64) -> At {
        At { ts, pid: PID, tid }
    }

    #[test]
    fn a_run_is_its_start_and_length_on_the_thread_that_ran_it() {
        let mut b = Builder::new(Options::default());
        let cb = b.callback(PID, 10);
        b.callback_start(at(100, 7), cb, None);
        b.callback_end(at(130, 7), cb);
        assert_eq!(b.m.callbacks[cb].runs, vec![(100, 30)]);
        assert_eq!(b.m.callbacks[cb].tid, 7);
    }

    #[test]
    fn nested_runs_end_inner_first_and_an_outer_end_closes_what_it_holds() {
        let mut b = Builder::new(Options::default());
        let (outer, inner, lost) = (b.callback(PID, 1), b.callback(PID, 2), b.callback(PID, 3));
        b.callback_start(at(0, 7), outer, None);
        b.callback_start(at(10, 7), inner, None);
        b.callback_end(at(20, 7), inner);
        // A callback whose end the trace lost: the outer end takes it off the stack.
        b.callback_start(at(30, 7), lost, None);
        b.callback_end(at(50, 7), outer);
        assert_eq!(b.m.callbacks[inner].runs, vec![(10, 10)]);
        assert_eq!(b.m.callbacks[outer].runs, vec![(0, 50)]);
        assert!(
            b.m.callbacks[lost].runs.is_empty(),
            "a run never ended is not made up"
        );
        assert!(b.thread(at(60, 7)).stack.is_empty());
        // Its late end, with nothing of it on the stack, is ignored.
        b.callback_end(at(70, 7), lost);
        assert!(b.m.callbacks[lost].runs.is_empty());
    }

    #[test]
    fn each_thread_has_its_own_stack() {
        let mut b = Builder::new(Options::default());
        let cb = b.callback(PID, 1);
        b.callback_start(at(0, 7), cb, None);
        b.callback_start(at(5, 8), cb, None);
        b.callback_end(at(10, 8), cb);
        b.callback_end(at(20, 7), cb);
        assert_eq!(b.m.callbacks[cb].runs, vec![(5, 5), (0, 20)]);
    }

    #[test]
    fn a_timers_callback_start_is_a_firing_of_that_timer() {
        let mut b = Builder::new(Options::default());
        let (t, cb) = (b.timer(PID, 5), b.callback(PID, 6));
        b.set_owner(cb, Owner::Timer(t));
        for ts in [1_000, 2_000] {
            b.callback_start(at(ts, 7), cb, None);
            b.callback_end(at(ts + 10, 7), cb);
        }
        assert_eq!(b.m.timers[t].fired, vec![1_000, 2_000]);
        assert_eq!(b.m.timers[t].callback, Some(cb));
    }

    #[test]
    fn without_message_records_no_run_or_firing_is_kept() {
        let mut b = Builder::new(Options { messages: false });
        let (t, cb) = (b.timer(PID, 5), b.callback(PID, 6));
        b.set_owner(cb, Owner::Timer(t));
        b.callback_start(at(0, 7), cb, None);
        b.callback_end(at(10, 7), cb);
        assert!(b.m.callbacks[cb].runs.is_empty() && b.m.timers[t].fired.is_empty());
        assert!(b.thread(at(20, 7)).stack.is_empty());
    }
}
