//! Launching a kairos system (`kairos launch FILE`): a system of processes started from
//! one ROS 2 launch file (YAML, XML, or Python through [`driver`]), and stopped on time.
//!
//! The file is read whole first ([`description`]): arguments, substitutions, groups and
//! includes are resolved, every executable is found and every node's ROS arguments
//! (remaps, parameters, parameter files) are checked with the reader the node will use.
//! Any error names the file and line, and nothing starts. Then a Zenoh router is started
//! if none is reachable where the processes will look for one, the processes start in
//! file order, and [`supervise`] runs and stops them: Ctrl-C, or the exit of a process
//! marked `on_exit: shutdown`, stops all within `--sigterm-timeout + --sigkill-timeout`,
//! with a stop report. The exit status is one of [`supervise::status`].
//!
//! The modules:
//! - [`description`]: the launch file read whole into [`description::ProcessSpec`]s, or a
//!   [`description::LaunchError`] naming the file and line;
//! - [`supervise`]: starting, watching and stopping the processes, with the stop report;
//! - [`driver`]: a Python launch file's driver process, which asks the supervisor to start
//!   processes and hears what they did (its event handlers), never able to delay a stop;
//!   or the Python process that started the launcher (ROS 2's `LaunchService`);
//! - [`launch_test`]: launch tests (`kairos launch-test`, ROS 2's `launch_test`), the
//!   driver running the tests during and after the launch, every run bounded;
//! - [`invocation`]: what a command line names: the file (or `PKG FILE`), its
//!   `name:=value` arguments, the default log folder;
//! - [`router`]: the Zenoh router the processes meet at, started when none answers;
//! - [`process`]: children killed when dropped, signals, bounded waits for their lines
//!   (the multi-process demos use them too);
//! - [`package`] (the `kairos-ament` crate): installed packages in ament's index
//!   (`AMENT_PREFIX_PATH`), for
//!   `pkg:` of a node, `$(find-pkg-share ...)`, `kairos run` and `kairos launch PKG FILE`;
//! - `composition`: composable nodes of XML and YAML files, loaded into kairos's container;
//! - `python`: rclpy nodes of XML and YAML files under `kairos.run`, and the `python3` for it;
//! - `substitute`: substitutions (`$(var ...)`, `$(env ...)`, `$(find-pkg-share ...)`, ...);
//! - `tree`, `yaml`, `xml`: the entity tree every format reads into, with line numbers,
//!   and the YAML and XML frontends.

#![warn(missing_docs)]

mod composition;
pub mod description;
pub mod driver;
pub mod invocation;
pub mod launch_test;
pub use kairos_ament as package;
pub mod process;
mod python;
pub mod router;
mod substitute;
pub mod supervise;
mod tree;
mod xml;
mod yaml;
