//! Launching a kairos system (`kairos launch FILE`): a system of processes started from
//! one ROS 2 YAML launch file, and stopped on time.
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
//! - [`router`]: the Zenoh router the processes meet at, started when none answers;
//! - [`process`]: children killed when dropped, signals, bounded waits for their lines
//!   (the multi-process demos use them too);
//! - `substitute`, `yaml`: substitutions (`$(var ...)`, `$(env ...)`, ...) and the YAML
//!   reader with line numbers.

#![warn(missing_docs)]

pub mod description;
pub mod process;
pub mod router;
mod substitute;
pub mod supervise;
mod yaml;
