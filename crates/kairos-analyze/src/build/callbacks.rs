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
