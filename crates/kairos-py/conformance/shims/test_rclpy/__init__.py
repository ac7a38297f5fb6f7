"""The package rclpy's CMake makes for its C test helpers; none are used here."""
