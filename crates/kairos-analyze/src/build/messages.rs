//! Message linking: a message from its publish through each stage to every delivery,
//! recognized again at each stage by a key (kairos's publisher handle and sequence
//! number, DDS source timestamps, ROS 1 buffer addresses), and, where a trace carries no
//! key, linked to the nearest publish (counted as such).

use super::*;

impl Builder {
    /// A new message, published now on this thread by `publisher`.
    pub(super) fn publish(
        &mut self,
        at: At,
        publisher: Option<PublisherId>,
        topic: Topic,
    ) -> Option<MessageId> {
        let frame = self.thread(at).stack.last().copied();
        if let Some(p) = publisher {
            let endpoint = &mut self.m.publishers[p];
            endpoint.published += 1;
            if let Some(f) = frame
                && !endpoint.publishing_callbacks.contains(&f.callback)
            {
                endpoint.publishing_callbacks.push(f.callback);
            }
        }
        if !self.follow {
            return None;
        }
        let mut cause = frame.and_then(|f| f.consumed);
        let mut cause_link = None;
        if let Some((kind, subs)) = publisher.and_then(|p| self.message_links.get(&p))
            && cause.is_none_or(|c| {
                self.live
                    .get(c.message)
                    .and_then(|m| m.deliveries.get(c.delivery))
                    .is_none_or(|d| d.subscription.is_none_or(|s| !subs.contains(&s)))
            })
        {
            // The latest message any linked subscription took carries on here.
            let latest = subs
                .iter()
                .filter_map(|s| self.latest_taken.get(s))
                .filter_map(|&d| {
                    let started = self.live.get(d.message)?.deliveries[d.delivery].callback_start?;
                    Some((started, d))
                })
                .max();
            if let Some((_, d)) = latest {
                cause = Some(d);
                cause_link = Some(*kind);
            }
        }
        let msg = Message {
            topic,
            publisher,
            published: Some(at.ts),
            sent: None,
            source_timestamp: None,
            publish_tid: Some(at.tid),
            dropped_by_publisher: None,
            cause,
            cause_link,
            deliveries: Vec::new(),
            bag: None,
        };
        let i = self.live.push(msg, at.ts);
        if let Some(d) = &mut self.digest {
            d.published(i, self.live.get(i).expect("just pushed"));
        }
        self.thread(at).publishing = Some(i);
        Some(i)
    }

    /// A message whose publication is not in the trace.
    pub(super) fn orphan(&mut self, at: i64, topic: Topic) -> MessageId {
        self.m.unmatched_takes += 1;
        let msg = Message {
            topic,
            publisher: None,
            published: None,
            sent: None,
            source_timestamp: None,
            publish_tid: None,
            dropped_by_publisher: None,
            cause: None,
            cause_link: None,
            deliveries: Vec::new(),
            bag: None,
        };
        self.live.push(msg, at)
    }

    /// Files `key` as naming `msg`, until the message retires.
    pub(super) fn key(&mut self, key: MsgKey, msg: MessageId) {
        if let Some((_, pending)) = &mut self.clock_pairs
            && let Some((pid, recv)) = pending.remove(&key)
        {
            self.clock_sample(msg, pid, recv);
        }
        if let Some(slot) = self.live.slot_mut(msg) {
            slot.keys.push(Key::Msg(key.clone()));
            self.messages.insert(key, msg);
        }
    }

    /// A take at `recv` in process `pid` of a message whose publication is not read
    /// yet: kept, when estimating clocks, for the publication that may follow.
    pub(super) fn take_before_publish(&mut self, key: MsgKey, pid: i64, recv: i64) {
        if let Some((_, pending)) = &mut self.clock_pairs {
            if pending.len() >= 1 << 16 {
                pending.clear();
            }
            pending.insert(key, (pid, recv));
        }
    }

    /// Message `msg`, exactly linked, taken in process `pid` at `recv`: a send/receive
    /// pair when its publisher ran on another host.
    pub(super) fn clock_sample(&mut self, msg: MessageId, pid: i64, recv: i64) {
        let Some((pairs, _)) = &mut self.clock_pairs else {
            return;
        };
        let Some(m) = self.live.get(msg) else { return };
        let (Some(p), Some(send)) = (m.publisher, m.sent.or(m.published)) else {
            return;
        };
        let from = self.hosts.get(&self.m.publishers[p].pid);
        let to = self.hosts.get(&pid);
        if let (Some(from), Some(to)) = (from, to) {
            pairs.sample(from, to, send, recv);
        }
    }

    /// Records `stamp` as message `msg`'s DDS source timestamp: a take that reports it
    /// is then linked exactly, and the offset between stamps and trace time is learned.
    pub(super) fn stamp(&mut self, msg: MessageId, stamp: i64, at: i64) {
        let Some(m) = self.msg_mut(msg, at) else {
            return;
        };
        m.source_timestamp = Some(stamp);
        let topic = m.topic.clone();
        if let Some(published) = m.published {
            self.learn_offset(stamp.saturating_sub(published));
        }
        self.key(MsgKey::SourceTs(topic, stamp), msg);
    }

    /// Follows the offset of source timestamps from publish times (a few microseconds
    /// of publish path plus the error of the trace clock's offset from the wall clock,
    /// which drifts as NTP slews the wall clock).
    pub(super) fn learn_offset(&mut self, delta: i64) {
        self.stamp_offset = Some(match self.stamp_offset {
            Some(o) => o.saturating_add(delta.saturating_sub(o) / 8),
            None => delta,
        });
    }

    /// A message published without a source timestamp: a candidate for
    /// [`Link::NearestPublish`] while it is recent.
    pub(super) fn unstamped(&mut self, msg: MessageId, topic: Topic, at: i64) {
        let pool = self.unstamped.entry(topic).or_default();
        pool.push_back(msg);
        while let Some(&front) = pool.front() {
            let stale = self
                .live
                .get(front)
                .and_then(|m| m.published)
                .is_none_or(|p| p < at.saturating_sub(1_000_000_000));
            if !stale {
                break;
            }
            pool.pop_front();
        }
    }

    /// The message a take with source timestamp `stamp` on `topic` most likely carries,
    /// when the publisher side recorded no stamp: the unstamped publish whose time is
    /// nearest `stamp` (less the learned offset), within
    /// [`NEAREST_PUBLISH_BOUND_NS`](crate::model::NEAREST_PUBLISH_BOUND_NS), that
    /// subscription `s` has not taken yet.
    pub(super) fn nearest_publish(
        &mut self,
        topic: &Topic,
        s: SubscriptionId,
        stamp: i64,
    ) -> Option<MessageId> {
        let expected = stamp.saturating_sub(self.stamp_offset.unwrap_or(0));
        let bound = crate::model::NEAREST_PUBLISH_BOUND_NS;
        let pool = self.unstamped.get(topic)?;
        let (_, best, published) = pool
            .iter()
            .filter_map(|&id| {
                let m = self.live.get(id)?;
                let published = m.published?;
                let free = m.source_timestamp.is_none()
                    && !m.deliveries.iter().any(|d| d.subscription == Some(s));
                let distance = published.saturating_sub(expected).saturating_abs();
                (free && distance <= bound).then_some((distance, id, published))
            })
            .min()?;
        self.learn_offset(stamp.saturating_sub(published));
        Some(best)
    }

    /// The message `id` while it is followed, marked as changed at `at`.
    pub(super) fn msg_mut(&mut self, id: MessageId, at: i64) -> Option<&mut Message> {
        self.live.get_mut(id, at)
    }

    pub(super) fn delivery_mut(&mut self, d: DeliveryRef, at: i64) -> Option<&mut Delivery> {
        self.live
            .get_mut(d.message, at)?
            .deliveries
            .get_mut(d.delivery)
    }

    /// `link`, when message `msg` is one whose publication the trace shows.
    pub(super) fn link_if_published(&self, msg: MessageId, link: Link) -> Option<Link> {
        self.live
            .get(msg)
            .filter(|m| m.published.is_some())
            .map(|_| link)
    }

    /// Counts how a delivery to subscription `s` was linked to its publication.
    pub(super) fn count_link(&mut self, s: SubscriptionId, link: Option<Link>) {
        let takes = &mut self.m.subscriptions[s].takes;
        match link {
            Some(l) if l.is_exact() => takes.exact += 1,
            Some(_) => takes.inferred += 1,
            None => takes.unlinked += 1,
        }
        if let Some(l) = link {
            *self.m.links.entry(l).or_default() += 1;
        }
    }

    pub(super) fn deliver(&mut self, msg: MessageId, at: i64, d: Delivery) -> Option<DeliveryRef> {
        if let Some(s) = d.subscription {
            self.count_link(s, d.link);
            if d.link.is_some_and(Link::is_exact) {
                self.clock_sample(msg, self.m.subscriptions[s].pid, at);
            }
        }
        let list = &mut self.msg_mut(msg, at)?.deliveries;
        list.push(d);
        Some(DeliveryRef {
            message: msg,
            delivery: list.len() - 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ts: i64) -> At {
        At { ts, pid: 1, tid: 1 }
    }

    fn builder() -> (Builder, PublisherId, SubscriptionId) {
        let mut b = Builder::new(Options::default());
        let p = b.publisher(1, 10, None, Topic::from("/chatter"), None);
        let s = b.subscription(2, 20, None, Topic::from("/chatter"), None);
        (b, p, s)
    }

    #[test]
    fn a_stamped_publish_is_found_by_its_stamp_and_teaches_the_offset() {
        let (mut b, p, _) = builder();
        let m = b
            .publish(at(1_000), Some(p), Topic::from("/chatter"))
            .expect("followed");
        b.stamp(m, 1_300, 1_000);
        assert_eq!(b.m.publishers[p].published, 1);
        assert_eq!(
            b.messages
                .get(&MsgKey::SourceTs(Topic::from("/chatter"), 1_300)),
            Some(&m)
        );
        assert_eq!(b.live.get(m).and_then(|m| m.source_timestamp), Some(1_300));
        assert_eq!(b.stamp_offset, Some(300));
        // Later stamps move the offset an eighth of the way, not all of it.
        b.learn_offset(1_100);
        assert_eq!(b.stamp_offset, Some(300 + 800 / 8));
    }

    #[test]
    fn an_unkeyed_take_gets_the_nearest_unstamped_publish_once_per_subscription() {
        let (mut b, p, s) = builder();
        let topic = Topic::from("/chatter");
        let first = b.publish(at(1_000_000), Some(p), topic.clone()).unwrap();
        b.unstamped(first, topic.clone(), 1_000_000);
        let second = b.publish(at(1_400_000), Some(p), topic.clone()).unwrap();
        b.unstamped(second, topic.clone(), 1_400_000);
        assert_eq!(b.nearest_publish(&topic, s, 1_350_000), Some(second));
        let delivery = Delivery {
            subscription: Some(s),
            link: Some(Link::NearestPublish),
            ..Delivery::default()
        };
        b.deliver(second, 1_350_000, delivery);
        assert_eq!(
            b.nearest_publish(&topic, s, 1_350_000),
            Some(first),
            "the subscription took the nearer one already"
        );
        let bound = crate::model::NEAREST_PUBLISH_BOUND_NS;
        assert_eq!(
            b.nearest_publish(&topic, s, 1_000_000 + 3 * bound),
            None,
            "nothing within the bound"
        );
        // Publishes older than a second leave the pool as newer ones come.
        let late = 1_400_000 + 2_000_000_000;
        let third = b.publish(at(late), Some(p), topic.clone()).unwrap();
        b.unstamped(third, topic.clone(), late);
        assert_eq!(
            b.unstamped[&topic].iter().copied().collect::<Vec<_>>(),
            [third]
        );
    }

    #[test]
    fn every_delivery_is_counted_as_exact_inferred_or_unlinked() {
        let (mut b, p, s) = builder();
        let m = b.publish(at(5), Some(p), Topic::from("/chatter")).unwrap();
        for link in [Some(Link::Sequence), Some(Link::NearestPublish), None] {
            let d = Delivery {
                subscription: Some(s),
                link,
                ..Delivery::default()
            };
            b.deliver(m, 6, d).expect("a followed message");
        }
        let takes = &b.m.subscriptions[s].takes;
        assert_eq!((takes.exact, takes.inferred, takes.unlinked), (1, 1, 1));
        assert_eq!(b.m.links[&Link::Sequence], 1);
        assert_eq!(b.m.links[&Link::NearestPublish], 1);
        assert_eq!(b.live.get(m).unwrap().deliveries.len(), 3);
        assert_eq!(b.link_if_published(m, Link::Sequence), Some(Link::Sequence));
        let orphan = b.orphan(7, Topic::from("/chatter"));
        assert_eq!(b.link_if_published(orphan, Link::Sequence), None);
        assert_eq!(b.m.unmatched_takes, 1);
    }

    #[test]
    fn without_messages_kept_a_publish_is_counted_not_followed() {
        let mut b = Builder::new(Options { messages: false });
        let p = b.publisher(1, 10, None, Topic::from("/chatter"), None);
        assert_eq!(b.publish(at(1), Some(p), Topic::from("/chatter")), None);
        assert_eq!(b.m.publishers[p].published, 1);
    }
}
