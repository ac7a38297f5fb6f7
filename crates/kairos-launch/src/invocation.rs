//! What a launch command line names, read as `ros2 launch` reads it: the launch file (a
//! path, or a package and a file in its share folder, `PKG FILE`), the `name:=value`
//! launch arguments after it, and the log folder when none is given. `kairos launch` and
//! `kairos launch-test` share it, so both take the same forms and say the same errors.

use crate::description::{Output, ProcessSpec};
use crate::package::PackageIndex;
use std::fmt;
use std::path::{Path, PathBuf};

/// A command line that names no launch file, or a malformed launch argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvocationError(String);

impl fmt::Display for InvocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvocationError {}

/// The launch file and its `name:=value` arguments, from `FILE args...`, or `PKG FILE
/// args...` when `first` is not a file and a name follows it (found in `packages`).
pub fn file_and_arguments(
    first: &Path,
    args: &[String],
    packages: &PackageIndex,
) -> Result<(PathBuf, Vec<(String, String)>), InvocationError> {
    let (file, rest) = launch_file(first, args, packages)?;
    let mut launch_args = Vec::new();
    for arg in rest {
        let Some((name, value)) = arg.split_once(":=") else {
            return Err(InvocationError(format!(
                "launch argument '{arg}': write name:=value"
            )));
        };
        launch_args.push((name.to_owned(), value.to_owned()));
    }
    Ok((file, launch_args))
}

fn launch_file<'a>(
    first: &Path,
    rest: &'a [String],
    packages: &PackageIndex,
) -> Result<(PathBuf, &'a [String]), InvocationError> {
    if first.exists() {
        return Ok((first.to_path_buf(), rest));
    }
    let package = first.to_string_lossy();
    match rest.split_first() {
        Some((name, rest)) if !name.contains(":=") && !package.contains('/') => {
            let file = packages
                .find_file(&package, name)
                .map_err(|e| InvocationError(format!("kairos launch {package} {name}: {e}")))?;
            Ok((file, rest))
        }
        _ => Err(InvocationError(format!(
            "{}: no such launch file (to launch a package's file, write `kairos launch PKG FILE`)",
            first.display()
        ))),
    }
}

/// Where `output: log` files go when no folder is given: `kairos-launch-PID` under
/// `$ROS_LOG_DIR`, `$ROS_HOME/log` or `~/.ros/log`, as ROS 2 chooses its log folder.
pub fn default_log_dir() -> PathBuf {
    let base = std::env::var_os("ROS_LOG_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("ROS_HOME").map(|h| PathBuf::from(h).join("log")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".ros").join("log")))
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("kairos-launch-{}", std::process::id()))
}

/// One process as a line of JSON, for a Python launch file's driver that includes an XML
/// or YAML file (`kairos launch --print-json`).
pub fn process_json(p: &ProcessSpec) -> serde_json::Value {
    let name = p
        .label
        .rsplit_once('-')
        .map_or(p.label.as_str(), |(base, _)| base);
    let output = match p.output {
        Output::Screen => "screen",
        Output::Log => "log",
        Output::Both => "both",
    };
    serde_json::json!({
        "name": name, "program": p.program, "args": p.args, "env": p.env,
        "cwd": p.cwd, "output": output, "respawn": p.respawn,
        "respawn_delay": p.respawn_delay.as_secs_f64(), "required": p.required,
        "respawn_max_retries": p.respawn_max_retries, "emulate_tty": p.emulate_tty,
        "sigterm_timeout": p.sigterm_timeout.map(|t| t.as_secs_f64()),
        "sigkill_timeout": p.sigkill_timeout.map(|t| t.as_secs_f64()),
        "origin": p.origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_takes_the_arguments_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.launch.yaml");
        std::fs::write(&file, "launch: []\n").unwrap();
        let args = ["rate:=10".to_owned(), "name:=a:=b".to_owned()];
        let (found, parsed) =
            file_and_arguments(&file, &args, &PackageIndex::with_prefixes(vec![])).unwrap();
        assert_eq!(found, file);
        assert_eq!(
            parsed,
            [("rate".into(), "10".into()), ("name".into(), "a:=b".into())]
        );
        let err = file_and_arguments(
            &file,
            &["rate".to_owned()],
            &PackageIndex::with_prefixes(vec![]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("write name:=value"), "{err}");
    }

    #[test]
    fn a_missing_file_says_how_to_name_a_package() {
        let err = file_and_arguments(
            Path::new("/no/such.launch.py"),
            &[],
            &PackageIndex::with_prefixes(vec![]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("kairos launch PKG FILE"), "{err}");
        let err = file_and_arguments(
            Path::new("no_such_pkg"),
            &["a.launch.py".to_owned()],
            &PackageIndex::with_prefixes(vec![]),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("kairos launch no_such_pkg a.launch.py: "),
            "{err}"
        );
    }
}
