"""Composable nodes: many nodes in one process, loaded at run time, as ROS 2's
``rclcpp_components`` composes them.

- A **component** is a Python callable (usually an rclpy ``Node`` subclass) that makes one
  node when called without arguments. A package registers its components in ament's
  index as C++ packages do (``rclcpp_components_register_nodes``): the resource
  ``share/ament_index/resource_index/rclcpp_components/PACKAGE`` has one line per
  component, ``PLUGIN;PATH``, where ``PATH`` (relative to the prefix) is a Python file
  and the plugin's last part (after ``::`` or ``.``) names the callable in it.
  ``kairos pkg install --component PLUGIN=FILE.py`` writes both.
- A **container** (:mod:`kairos.components.container`, which ``kairos launch`` runs for
  ``rclcpp_components``' ``component_container`` and ``component_container_mt``) is one
  process with one executor. It serves ``~/_container/load_node``, ``unload_node`` and
  ``list_nodes`` with ``composition_interfaces``' types, so ``ros2 component load`` and
  launch_ros' ``LoadComposableNodes`` work on it. Its nodes share one context, so what
  they publish to each other is delivered in the process, never through the network.
- The node a component makes gets the name, namespace, remappings and parameters of the
  request, as an rclcpp component gets them through its ``NodeOptions``: the first node
  the callable creates (in the loading thread) is given them, whatever names its code
  passes to ``Node.__init__``.

What cannot be composed is an error naming it: a C++ plugin (a ``.so``), a plugin the
package does not register (the error lists those it does), a callable that makes no node.
"""
