"""ROS 2's ``sensor_msgs_py`` helpers for kairos: ``point_cloud2`` reads and makes
``sensor_msgs/msg/PointCloud2`` messages with numpy (``python -m kairos.run`` maps
``sensor_msgs_py`` here)."""
