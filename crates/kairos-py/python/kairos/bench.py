"""``python -m kairos.bench``: kairos from Python beside a pure-Python baseline, in one run.

- timer: wake-up lateness of a periodic timer (kairos ``create_timer`` vs. a Python
  thread sleeping to absolute deadlines with ``time.sleep``);
- latency: publish to callback between two Python nodes in one process, one message in
  flight at a time (kairos topic vs. ``queue.Queue`` handed to a consumer thread);
- throughput: messages per second from one node to the other, all in flight at once.

Every figure is measured on CLOCK_MONOTONIC (``time.monotonic_ns``). ``--quick`` runs fewer
samples. The numbers are a benchmark to compare, not a test.
"""

import argparse
import queue
import statistics
import threading
import time

import kairos
from kairos.executors import SingleThreadedExecutor
from kairos.node import Node
from kairos.std_msgs.msg import String


def summary(samples_ns):
    s = sorted(samples_ns)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] / 1e3  # noqa: E731
    return {"mean_us": statistics.fmean(s) / 1e3, "p50_us": pick(0.5), "p99_us": pick(0.99),
            "max_us": s[-1] / 1e3, "n": len(s)}


def row(name, stats):
    return (f"{name:<34} {stats['n']:>7} {stats['mean_us']:>10.1f} {stats['p50_us']:>10.1f} "
            f"{stats['p99_us']:>10.1f} {stats['max_us']:>10.1f}")


# -- timer lateness ---------------------------------------------------------------------

def kairos_timer(period_s, count):
    node = Node("bench_timer")
    lateness = []
    done = threading.Event()

    def tick():
        # The timer runs on the steady clock (CLOCK_MONOTONIC, as time.monotonic_ns) and
        # says which deadline this tick serves: lateness is measured from it exactly.
        lateness.append(time.monotonic_ns() - timer.scheduled_ns)
        if len(lateness) >= count:
            timer.cancel()
            done.set()

    timer = node.create_timer(period_s, tick, clock=kairos.Clock("steady"))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    done.wait(count * period_s * 10 + 10)
    executor.shutdown()
    node.destroy_node()
    return lateness


def python_timer(period_s, count):
    lateness = []
    period_ns = int(period_s * 1e9)

    def loop():
        deadline = time.monotonic_ns() + period_ns
        while len(lateness) < count:
            remaining = deadline - time.monotonic_ns()
            if remaining > 0:
                time.sleep(remaining / 1e9)
            now = time.monotonic_ns()
            lateness.append(now - deadline)
            deadline += period_ns
            while deadline <= now:  # skip missed periods, as kairos and rcl do
                deadline += period_ns

    thread = threading.Thread(target=loop)
    thread.start()
    thread.join()
    return lateness


# -- latency and throughput -------------------------------------------------------------

class Pair:
    """Two kairos nodes: a publisher node and a subscriber node, spun on one thread."""

    def __init__(self, topic, depth, on_message):
        self.talker = Node("bench_talker")
        self.listener = Node("bench_listener")
        self.publisher = self.talker.create_publisher(String, topic, depth)
        self.listener.create_subscription(String, topic, on_message, depth)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.talker)
        self.executor.add_node(self.listener)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def close(self):
        self.executor.shutdown()
        self.talker.destroy_node()
        self.listener.destroy_node()


def kairos_latency(count):
    samples = []
    got = threading.Event()

    def on_message(msg):
        samples.append(time.monotonic_ns() - int(msg.data))
        got.set()

    pair = Pair("/bench/latency", 10, on_message)
    for _ in range(count):
        got.clear()
        pair.publisher.publish(String(data=str(time.monotonic_ns())))
        if not got.wait(10):
            break
    pair.close()
    return samples


def python_latency(count):
    samples = []
    handoff = queue.Queue()
    got = threading.Event()

    def consumer():
        while True:
            item = handoff.get()
            if item is None:
                return
            samples.append(time.monotonic_ns() - int(item.data))
            got.set()

    thread = threading.Thread(target=consumer)
    thread.start()
    for _ in range(count):
        got.clear()
        handoff.put(String(data=str(time.monotonic_ns())))
        got.wait(10)
    handoff.put(None)
    thread.join()
    return samples


def kairos_throughput(count):
    received = [0]
    done = threading.Event()

    def on_message(_msg):
        received[0] += 1
        if received[0] == count:
            done.set()

    pair = Pair("/bench/throughput", count, on_message)
    message = String(data="x" * 64)
    start = time.monotonic_ns()
    for _ in range(count):
        pair.publisher.publish(message)
    done.wait(60)
    elapsed = time.monotonic_ns() - start
    pair.close()
    return received[0], elapsed


def python_throughput(count):
    handoff = queue.Queue()
    received = [0]

    def consumer():
        while received[0] < count:
            handoff.get()
            received[0] += 1

    thread = threading.Thread(target=consumer)
    message = String(data="x" * 64)
    thread.start()
    start = time.monotonic_ns()
    for _ in range(count):
        handoff.put(message)
    thread.join(60)
    return received[0], time.monotonic_ns() - start


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kairos.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args(argv)
    ticks, pings, burst = (200, 500, 5000) if args.quick else (1000, 5000, 50000)
    period = 0.002
    kairos.init()
    print(f"timer lateness, period {period * 1e3:.0f} ms, {ticks} ticks (us)")
    print(f"{'':<34} {'n':>7} {'mean':>10} {'p50':>10} {'p99':>10} {'max':>10}")
    print(row("kairos create_timer", summary(kairos_timer(period, ticks))))
    print(row("python thread + time.sleep", summary(python_timer(period, ticks))))
    print()
    print(f"publish -> callback latency, one in flight, {pings} messages (us)")
    print(f"{'':<34} {'n':>7} {'mean':>10} {'p50':>10} {'p99':>10} {'max':>10}")
    print(row("kairos topic, two Python nodes", summary(kairos_latency(pings))))
    print(row("queue.Queue + thread", summary(python_latency(pings))))
    print()
    print(f"throughput, {burst} messages published back to back")
    rates = []
    for name, (n, ns) in (("kairos topic, two Python nodes", kairos_throughput(burst)),
                          ("queue.Queue + thread", python_throughput(burst))):
        rates.append(n / (ns / 1e9))
        print(f"{name:<34} {n:>7} received in {ns / 1e6:>8.1f} ms = {rates[-1]:>10.0f} msg/s")
    print(f"{'kairos / baseline':<34} {rates[0] / rates[1]:>7.2f}x")
    kairos.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
