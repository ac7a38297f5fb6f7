"""What rclpy's test package imports from rpyutils: on Linux, nothing to do."""

import contextlib


@contextlib.contextmanager
def add_dll_directories_from_env(env_name):
    yield
