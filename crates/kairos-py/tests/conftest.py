"""Shared fixtures: a kairos session per test, the kairos binary, a Zenoh router."""

import os
import pathlib
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


class Router:
    """`kairos router` on a free loopback port, and the environment that points a
    process at it (and only at it)."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [kairos_bin(), "router", "--listen", f"tcp/127.0.0.1:{self.port}"],
            stdout=subprocess.PIPE, text=True)
        first = []
        reader = threading.Thread(target=lambda: first.append(self.process.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(30)
        if not first or "running" not in first[0]:
            self.close()
            pytest.fail(f"kairos router did not start within 30 s: {first!r}")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

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
