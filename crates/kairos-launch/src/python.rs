//! Python in XML and YAML launch files: an rclpy node (a `#!...python` executable) runs
//! under `python3 -m kairos.run`, so its `import rclpy` is kairos, as a Python launch file
//! runs it; composable nodes run in kairos's Python container. Both need a `python3` that
//! imports kairos for Python, checked once, before anything starts.

use crate::description::{Context, LaunchError, find_executable};
use crate::substitute::run_bounded;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `python3` that runs kairos for Python, checked once to import it: a file that
/// needs it without it fails before anything starts.
pub(crate) fn python(ctx: &Context, line: usize) -> Result<PathBuf, LaunchError> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let python = find_executable("python3", std::path::Path::new("."))?;
        match run_bounded(Command::new(&python).args(["-c", "import kairos.components.load"])) {
            Ok((status, _, _)) if status.success() => Ok(python),
            Ok((_, _, stderr)) => Err(format!(
                "{} cannot import kairos for Python ({}), which runs rclpy nodes \
                 (under kairos.run) and composable nodes (in its container): install kairos for Python (pip install ./crates/kairos-py) or put \
                 it on PYTHONPATH",
                python.display(),
                stderr.lines().last().unwrap_or("no error printed")
            )),
            Err(why) => Err(format!("{}: {why}", python.display())),
        }
    });
    found.clone().map_err(|why| ctx.error(line, why))
}

/// The program and first arguments that run `program`: an rclpy node under
/// `python3 -m kairos.run`, anything else as it is.
pub(crate) fn command_for(
    ctx: &Context,
    line: usize,
    program: PathBuf,
) -> Result<(PathBuf, Vec<String>), LaunchError> {
    if !is_python_script(&program) {
        return Ok((program, Vec::new()));
    }
    let args = vec![
        "-m".to_owned(),
        "kairos.run".to_owned(),
        program.display().to_string(),
    ];
    Ok((python(ctx, line)?, args))
}

/// Whether `path` starts with a `#!` line naming python.
fn is_python_script(path: &Path) -> bool {
    use std::io::Read;
    let mut first = [0u8; 256];
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let n = file.read(&mut first).unwrap_or(0);
    let line = first[..n].split(|&b| b == b'\n').next().unwrap_or(&[]);
    line.starts_with(b"#!") && line.windows(6).any(|w| w == b"python")
}
