"""What programs and tests reach for in rclpy's C binding (``rclpy.impl``), answered by
kairos."""
