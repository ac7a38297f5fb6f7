"""rclpy's ``constants``."""

S_TO_NS = 1000 * 1000 * 1000
"""Nanoseconds in a second."""
