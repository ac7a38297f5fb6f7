"""ROS 2's ``rosidl_runtime_py`` on kairos: interface classes by name
(``rosidl_runtime_py.utilities``), for the types kairos ships."""
