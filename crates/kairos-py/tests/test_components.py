"""Composable nodes: a container makes nodes from a package's registered Python
components, names them as the request says, runs them on one executor, and refuses what
it cannot compose with the reason. The launch files that use them run under
``kairos launch`` (crates/kairos-cli/tests/launch.rs)."""

import queue

import pytest

import kairos
from kairos import run
from kairos.components.container import ComponentManager
from kairos.components.plugins import ComponentError
from kairos.composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from kairos.executors import SingleThreadedExecutor
from kairos.parameter import Parameter

from conftest import LIMIT, spin_in_thread, wait_until

TALKER = '''
import os
from rclpy.node import Node
from std_msgs.msg import String


class Talker(Node):
    def __init__(self):
        super().__init__('talker')
        self.declare_parameter('greeting', 'hello')
        self.publisher = self.create_publisher(String, 'chatter', 10)
        self.count = 0
        self.create_timer(0.01, self.tick)

    def tick(self):
        self.count += 1
        greeting = self.get_parameter('greeting').value
        self.publisher.publish(String(data=f'{greeting} {self.count} from {os.getpid()}'))
'''

LISTENER = '''
from rclpy.node import Node
from std_msgs.msg import String

HEARD = []


class Listener(Node):
    def __init__(self):
        super().__init__('listener')
        self.create_subscription(String, 'chatter', lambda m: HEARD.append(m.data), 10)
'''

BROKEN = '''
from rclpy.node import Node


class Broken(Node):
    def __init__(self):
        super().__init__('broken')
        raise RuntimeError('no sensor attached')


def NotANode():
    return 42
'''


def _install_components(prefix, package, files, plugins):
    """A package in ament's layout with Python components registered as
    rclcpp_components' CMake registers C++ ones."""
    index = prefix / "share/ament_index/resource_index"
    (index / "packages").mkdir(parents=True, exist_ok=True)
    (index / "packages" / package).write_text("")
    lib = prefix / "lib" / package
    lib.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (lib / name).write_text(text)
    (index / "rclcpp_components").mkdir(exist_ok=True)
    (index / "rclcpp_components" / package).write_text(
        "".join(f"{plugin};{path}\n" for plugin, path in plugins.items()))


@pytest.fixture
def components(tmp_path, monkeypatch):
    _install_components(tmp_path, "demo_components",
                        {"talker.py": TALKER, "listener.py": LISTENER, "broken.py": BROKEN},
                        {"demo::Talker": "lib/demo_components/talker.py",
                         "demo::Listener": "lib/demo_components/listener.py",
                         "demo::Broken": "lib/demo_components/broken.py",
                         "demo::NotANode": "lib/demo_components/broken.py",
                         "demo::Camera": "lib/libcamera_component.so"})
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    run.install()
    # The container's own name is a global argument, as `--ros-args -r __node:=...` on
    # its command line: a component must not take it.
    kairos.init(args=["--ros-args", "-r", "__node:=my_container"])
    executor = SingleThreadedExecutor()
    manager = ComponentManager(executor)
    yield manager
    kairos.shutdown()


def _request(plugin, **fields):
    return LoadNode.Request(package_name="demo_components", plugin_name=plugin, **fields)


def test_components_are_named_as_the_request_says_and_talk_in_one_process(components):
    manager = components
    assert manager.node.get_fully_qualified_name() == "/my_container"
    talker_id, talker = manager.load(_request(
        "demo::Talker", node_name="front_talker", node_namespace="/robot",
        remap_rules=["chatter:=news"],
        parameters=[Parameter("greeting", value="hey").to_parameter_msg()]))
    assert talker == "/robot/front_talker"
    listener_id, listener = manager.load(_request(
        "demo::Listener", node_namespace="/robot", remap_rules=["chatter:=news"]))
    # No name in the request: the one the component's code gives, not the container's.
    assert listener == "/robot/listener"
    assert (talker_id, listener_id) == (1, 2)
    thread = spin_in_thread(manager.executor)
    import sys
    heard = next(m for name, m in sys.modules.items()
                 if name.startswith("_kairos_component_") and hasattr(m, "HEARD")).HEARD
    assert wait_until(lambda: len(heard) >= 3), "the listener heard nothing of the talker"
    import os
    assert heard[0].startswith("hey ") and heard[0].endswith(f"from {os.getpid()}")
    manager.unload(talker_id)
    assert sorted(manager.loaded) == [listener_id]
    assert "/robot/front_talker" not in [
        ns.rstrip("/") + "/" + n for n, ns in manager.node.get_node_names_and_namespaces()]
    with pytest.raises(ComponentError, match="no node with unique id 1"):
        manager.unload(talker_id)
    manager.executor.shutdown()
    thread.join(LIMIT)


@pytest.mark.parametrize("plugin, fields, reason", [
    ("demo::Camera", {}, "is not a Python file .*libcamera_component.so"),
    ("demo::Lidar", {}, "registers no component 'demo::Lidar' .*demo::Listener"),
    ("demo::Broken", {}, "failed while making its node: RuntimeError: no sensor attached"),
    ("demo::NotANode", {}, "made no node .*int"),
    ("demo::Talker", {"log_level": 7}, "log_level 7 is not one of"),
    # Arguments the node itself refuses: no half-made node is left to destroy.
    ("demo::Talker", {"remap_rules": ["no_separator"]}, "failed while making its node"),
    ("demo::Talker", {"node_name": "my-node"}, "failed while making its node"),
    ("demo::Talker", {"extra_arguments": [
        Parameter("use_intra_process_comms", value="yes").to_parameter_msg()]},
     "'use_intra_process_comms' must be a boolean"),
])
def test_what_cannot_be_composed_is_refused_with_the_reason(components, plugin, fields, reason):
    manager = components
    with pytest.raises(ComponentError, match=reason):
        manager.load(_request(plugin, **fields))
    assert manager.loaded == {}
    # A component that failed after making its node leaves no node behind.
    assert "broken" not in [n for n, _ in manager.node.get_node_names_and_namespaces()]


def test_an_unknown_package_is_refused(components):
    with pytest.raises(ComponentError, match="package 'nope' is not installed"):
        components.load(LoadNode.Request(package_name="nope", plugin_name="x::Y"))


def test_the_container_s_services_load_list_and_unload(components):
    manager = components
    thread = spin_in_thread(manager.executor)
    client_node = kairos.create_node("component_client")
    load = client_node.create_client(LoadNode, "/my_container/_container/load_node")
    listed = client_node.create_client(ListNodes, "/my_container/_container/list_nodes")
    unload = client_node.create_client(UnloadNode, "/my_container/_container/unload_node")

    def call(client, request):
        assert client.wait_for_service(timeout_sec=LIMIT)
        future = client.call_async(request)
        kairos.spin_until_future_complete(client_node, future, timeout_sec=LIMIT)
        assert future.done()
        return future.result()

    loaded = call(load, _request("demo::Talker", node_name="t1"))
    assert (loaded.success, loaded.full_node_name, loaded.unique_id) == (True, "/t1", 1)
    refused = call(load, _request("demo::Camera"))
    assert not refused.success and "not a Python file" in refused.error_message
    listing = call(listed, ListNodes.Request())
    assert (list(listing.full_node_names), list(listing.unique_ids)) == (["/t1"], [1])
    assert call(unload, UnloadNode.Request(unique_id=1)).success
    gone = call(unload, UnloadNode.Request(unique_id=1))
    assert not gone.success and "no node with unique id 1" in gone.error_message
    assert list(call(listed, ListNodes.Request()).full_node_names) == []
    manager.executor.shutdown()
    thread.join(LIMIT)
