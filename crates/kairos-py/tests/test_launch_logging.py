"""``launch.logging`` as ROS 2 has it, and one log folder per launch: under ``kairos
launch`` (and a ``LaunchService``), a launch file's ``launch.logging`` loggers, its
``LaunchLogDir`` and its processes' ``output='log'`` files are in the launcher's folder.
ROS 2's own tests of the module are in its suite (CONFORMANCE.md)."""

import os
import subprocess
import textwrap

import pytest

from conftest import kairos_bin
from kairos import run

LIMIT = 60


@pytest.fixture
def launch(monkeypatch, tmp_path):
    monkeypatch.setenv("ROS_LOG_DIR", str(tmp_path / "ros_log"))
    monkeypatch.setenv("KAIROS_BIN", kairos_bin())
    monkeypatch.delenv("OVERRIDE_LAUNCH_SCREEN_FORMAT", raising=False)
    monkeypatch.delenv("OVERRIDE_LAUNCH_LOG_FORMAT", raising=False)
    run.install()
    import launch
    launch.logging.reset()
    yield launch
    launch.logging.reset()


def test_a_bad_output_word_or_format_style_is_an_error_naming_it(launch):
    with pytest.raises(ValueError, match="screan"):
        launch.logging.get_output_loggers("cam", "screan")
    with pytest.raises(ValueError, match="logg"):
        launch.logging.get_output_loggers("cam", {"stdout": "logg"})
    with pytest.raises(ValueError, match="default"):
        launch.logging.launch_config.set_screen_format("default", screen_style="%")
    with pytest.raises(ValueError, match="is not a directory"):
        launch.logging.launch_config.log_dir = "/no/such/folder"


def test_the_log_folder_is_made_once_under_ros_log_dir_with_latest_linked(launch, tmp_path):
    folder = launch.logging.launch_config.log_dir
    assert os.path.isdir(folder)
    assert os.path.dirname(folder) == str(tmp_path / "ros_log")
    assert os.path.realpath(tmp_path / "ros_log" / "latest") == os.path.realpath(folder)
    assert launch.logging.launch_config.log_dir == folder


def test_a_launch_logger_writes_the_screen_and_the_launch_log(launch, capsys):
    logger = launch.logging.get_logger("camera")
    logger.info("first frame")
    logger.debug("not at INFO")
    assert capsys.readouterr().out == "[INFO] [camera]: first frame\n"
    launch.logging.launch_config.get_log_file_handler().flush()
    with open(launch.logging.launch_config.get_log_file_path()) as f:
        lines = f.read().splitlines()
    assert len(lines) == 1 and lines[0].endswith(" [INFO] [camera]: first frame"), lines
    assert float(lines[0].split()[0]) > 0


def test_a_launch_service_s_processes_and_loggers_share_the_launch_s_folder(launch):
    from launch.actions import ExecuteProcess, OpaqueFunction, LogInfo
    from launch.substitutions import LaunchLogDir

    def note(context):
        launch.logging.get_logger("file").info("from the launch file")

    said = []
    ld = launch.LaunchDescription([
        LogInfo(msg=["log folder: ", LaunchLogDir()]),
        OpaqueFunction(function=lambda context: said.append(
            LaunchLogDir().perform(context))),
        OpaqueFunction(function=note),
        ExecuteProcess(cmd=["sh", "-c", "echo into the log"], name="quiet", output="log"),
    ])
    service = launch.LaunchService()
    service.include_launch_description(ld)
    assert service.run() == 0
    folder = launch.logging.launch_config.log_dir
    assert said == [folder]
    with open(os.path.join(folder, "quiet-1.log")) as f:
        assert "into the log" in f.read()
    launch.logging.launch_config.get_log_file_handler().flush()
    with open(os.path.join(folder, "launch.log")) as f:
        assert "[INFO] [file]: from the launch file" in f.read()


def test_kairos_launch_gives_a_python_file_its_log_folder(tmp_path):
    folder = tmp_path / "this_launch"
    file = tmp_path / "logs.launch.py"
    file.write_text(textwrap.dedent("""\
        import launch
        import launch.logging
        from launch.actions import ExecuteProcess, OpaqueFunction
        from launch.substitutions import LaunchLogDir

        def note(context):
            launch.logging.get_logger('file').warning(
                'folder is ' + LaunchLogDir().perform(context))

        def generate_launch_description():
            return launch.LaunchDescription([
                OpaqueFunction(function=note),
                ExecuteProcess(cmd=['sh', '-c', 'echo into the log'], name='quiet',
                               output='log'),
            ])
        """))
    env = dict(os.environ, ROS_LOG_DIR=str(tmp_path / "ros_log"))
    result = subprocess.run(
        [kairos_bin(), "launch", "--no-router", "--log-dir", str(folder), str(file)],
        env=env, capture_output=True, text=True, timeout=LIMIT)
    assert result.returncode == 0, result.stderr
    # The driver's screen is its standard error (its standard output is the launcher's).
    assert f"[WARNING] [file]: folder is {folder}" in result.stderr
    with open(folder / "launch.log") as f:
        assert f"[WARNING] [file]: folder is {folder}" in f.read()
    with open(folder / "quiet-1.log") as f:
        assert "into the log" in f.read()
    assert not (tmp_path / "ros_log").exists(), "a second folder was made"


def test_launch_loggers_keep_to_their_own_handlers(launch):
    logger = launch.logging.get_logger("own")
    assert logger.propagate is False
    assert isinstance(logger, launch.logging.LaunchLogger)
    launch.logging.reset()
    assert logger.handlers == []
