//! `kairos pkg list|prefix|executables|install` and `kairos run PKG EXE`: installed packages
//! (ament's index under `AMENT_PREFIX_PATH`, as `ros2 pkg` and `ros2 run` find them), a thin
//! mapping onto `kairos_launch::package`.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use kairos_launch::package::{Contents, PackageIndex, install};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum PkgCmd {
    /// Every installed package, with its prefix.
    List,
    /// The prefix a package is installed in (`--share`: its share folder).
    Prefix {
        package: String,
        /// Print `PREFIX/share/PACKAGE` instead.
        #[arg(long)]
        share: bool,
    },
    /// The executables of a package (of every package when none is named).
    Executables {
        package: Option<String>,
        /// Print each executable's full path.
        #[arg(long)]
        full_path: bool,
    },
    /// Install a package into a prefix in ament's layout, where `kairos run`, `kairos
    /// launch PKG FILE`, `$(find-pkg-share ...)` and ROS 2's own tools find it.
    Install(InstallArgs),
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The package's name.
    package: String,
    /// The prefix (a workspace's `install/`); add it to AMENT_PREFIX_PATH.
    #[arg(long, default_value = "install")]
    prefix: PathBuf,
    /// An executable (a Rust binary, or a Python node with a `#!` line); repeat for more.
    #[arg(long = "exe")]
    executables: Vec<PathBuf>,
    /// A file or folder for the package's share folder (launch/, config/, ...); repeat.
    #[arg(long = "share")]
    shared: Vec<PathBuf>,
    /// A component as PLUGIN=FILE.py (e.g. `my_pkg::Talker=talker.py`, whose `Talker`
    /// makes the node), registered where a component container finds it; repeat.
    #[arg(long = "component", value_parser = parse_component)]
    components: Vec<(String, PathBuf)>,
}

fn parse_component(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((plugin, file)) if !plugin.is_empty() && !file.is_empty() => {
            Ok((plugin.to_string(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "'{text}' is not PLUGIN=FILE.py (e.g. my_pkg::Talker=talker.py)"
        )),
    }
}

/// `kairos run PKG EXE [ARGS...]`, as `ros2 run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The package.
    package: String,
    /// Its executable.
    executable: String,
    /// Arguments for it (`--ros-args ...` included), passed as they are.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
    /// A command to run it under, as `ros2 run --prefix` (e.g. 'gdb -ex run --args').
    #[arg(long)]
    prefix: Option<String>,
}

pub fn run(cmd: PkgCmd) -> anyhow::Result<ExitCode> {
    let index = PackageIndex::from_env();
    match cmd {
        PkgCmd::List => {
            for (name, prefix) in index.packages() {
                println!("{name}  {}", prefix.display());
            }
        }
        PkgCmd::Prefix { package, share } => {
            let path = if share {
                index.share(&package)?
            } else {
                index.prefix(&package)?
            };
            println!("{}", path.display());
        }
        PkgCmd::Executables { package, full_path } => {
            let packages = match package {
                Some(p) => vec![p],
                None => index.packages().into_keys().collect(),
            };
            for package in packages {
                for exe in index.executables(&package)? {
                    if full_path {
                        println!("{}", exe.display());
                    } else if let Some(name) = exe.file_name() {
                        println!("{package} {}", name.to_string_lossy());
                    }
                }
            }
        }
        PkgCmd::Install(args) => {
            let contents = Contents {
                executables: args.executables,
                shared: args.shared,
                components: args.components,
            };
            let installed = install(&args.prefix, &args.package, &contents).with_context(|| {
                format!("installing {} into {}", args.package, args.prefix.display())
            })?;
            println!(
                "installed {} into {} ({} files); run it with AMENT_PREFIX_PATH={}",
                args.package,
                args.prefix.display(),
                installed.files.len(),
                std::path::absolute(&args.prefix)
                    .unwrap_or(args.prefix.clone())
                    .display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Replaces this process with the package's executable, so that signals, the exit
/// status and the terminal are the program's own.
pub fn run_executable(args: RunArgs) -> anyhow::Result<ExitCode> {
    let index = PackageIndex::from_env();
    let exe = index.executable(&args.package, &args.executable)?;
    let mut words = match &args.prefix {
        Some(prefix) => shlex::split(prefix)
            .with_context(|| format!("--prefix '{prefix}' has an unclosed quote"))?,
        None => Vec::new(),
    };
    words.push(exe.display().to_string());
    words.extend(args.args);
    let err = std::process::Command::new(&words[0])
        .args(&words[1..])
        .exec();
    Err(anyhow::Error::new(err).context(format!("cannot run {}", words[0])))
}
