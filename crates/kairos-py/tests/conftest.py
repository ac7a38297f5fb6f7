"""Shared fixtures: a kairos session per test, the kairos binary, a Zenoh router."""

import os
import pathlib
import random
import socket
import subprocess
import sys
import threading
import time

import pytest

import kairos

ROOT = pathlib.Path(__file__).resolve().parents[3]
#: Every wait in these tests is bounded; this is the bound for one that must succeed.
LIMIT = 60.0


@pytest.fixture
def session():
    kairos.init()
    yield
    kairos.shutdown()


def kairos_bin():
    """The `kairos` binary cargo built (scripts/test builds it before pytest runs)."""
    target = ROOT / os.environ.get("CARGO_TARGET_DIR", "target")  # relative: to the root
    path = target / "release" / "kairos"
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with `cargo build --release -p kairos-cli` "
                    "(scripts/test does)")
    return str(path)


def free_loopback_port():
    """A loopback port no one listens on now, from just below the kernel's ephemeral
    range: no connection's local port and no bind to port 0 can take it before the router
    binds it (kairos_testkit::router::free_loopback_port picks the same way)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    candidates = range(max(10000, low - 12000), low)
    for _ in range(1000 if len(candidates) >= 1024 else 0):
        port = random.choice(candidates)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Router:
    """`kairos router` on a free loopback port, and the environment that points a
    process at it (and only at it). A router that exits before it runs (its port was
    taken after all) is started again on another port, up to 20 times."""

    def __init__(self):
        for _ in range(20):
            self.port = free_loopback_port()
            self.process = subprocess.Popen(
                [kairos_bin(), "router", "--listen", f"tcp/127.0.0.1:{self.port}"],
                stdout=subprocess.PIPE, text=True)
            first = []
            reader = threading.Thread(
                target=lambda: first.append(self.process.stdout.readline()), daemon=True)
            reader.start()
            reader.join(30)
            if first and "running" in first[0]:
                threading.Thread(target=self.process.stdout.read, daemon=True).start()
                return
            self.close()
        pytest.fail(f"kairos router did not start within 30 s, 20 times: {first!r}")

    def env(self, **extra):
        env = dict(os.environ)
        env.pop("ROS_DOMAIN_ID", None)
        env.update(
            KAIROS_TRANSPORT="zenoh",
            ZENOH_CONFIG_OVERRIDE=f'connect/endpoints=["tcp/127.0.0.1:{self.port}"];'
                                  'listen/endpoints=["tcp/127.0.0.1:0"]',
            ROUTER_PORT=str(self.port),
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env

    def close(self):
        self.process.kill()
        self.process.wait(10)


@pytest.fixture
def router():
    r = Router()
    yield r
    r.close()


def run(args, env, timeout=LIMIT, **kw):
    """Runs a process to its end, killed after `timeout`; its CompletedProcess."""
    try:
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                              **kw)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{args[:3]} did not finish within {timeout} s\nstdout:\n{err.stdout}\n"
                    f"stderr:\n{err.stderr}")


def python(script, env, timeout=LIMIT):
    return run([sys.executable, "-c", script], env, timeout)


def spin_in_thread(executor):
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    return thread


def wait_until(predicate, seconds=LIMIT):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
