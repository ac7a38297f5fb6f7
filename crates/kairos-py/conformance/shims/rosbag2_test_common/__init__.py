"""What rosbag2_py's tests import from rosbag2_test_common (a test package of rosbag2):
the storages its tests run with."""

TESTED_STORAGE_IDS = ["sqlite3", "mcap"]
