//! Installed packages, found as ROS 2 finds them: ament's resource index under each prefix
//! of `AMENT_PREFIX_PATH`.
//!
//! A package `P` is installed in a prefix when the prefix has the marker file
//! `share/ament_index/resource_index/packages/P`; its shared files (launch files,
//! parameters, URDF) are under `share/P`, its executables in `lib/P`. A ROS 2
//! workspace's `install/` folder has that layout (colcon writes it), and so does a kairos
//! package installed by `kairos pkg install`. Prefixes are searched in the order the
//! variable lists them; the first that has a package is the package's, as
//! `ament_index_python` decides (a workspace overlays the ones after it).
//!
//! What this crate promises: every lookup that fails says what was searched and what
//! to do (source the workspace's setup, or set `AMENT_PREFIX_PATH`), and names the
//! packages or executables that do exist when one was misspelt.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where ament's index keeps one marker file per installed package, under a prefix.
pub const PACKAGES_INDEX: &str = "share/ament_index/resource_index/packages";

/// The installed packages of a set of prefixes.
#[derive(Debug, Clone, Default)]
pub struct PackageIndex {
    prefixes: Vec<PathBuf>,
}

/// A lookup in the index that found nothing, with what was searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageError {
    /// `AMENT_PREFIX_PATH` is unset or empty.
    NoPrefixes,
    /// No prefix has the package.
    NotFound {
        /// The package asked for.
        package: String,
        /// The prefixes searched, in order.
        prefixes: Vec<PathBuf>,
        /// Installed packages whose names are close to it.
        similar: Vec<String>,
    },
    /// The package has no such executable in `lib/PACKAGE`.
    NoExecutable {
        /// The package.
        package: String,
        /// The executable asked for.
        executable: String,
        /// The executables it has.
        available: Vec<String>,
    },
    /// The package's `share` folder has no file of that name.
    NoFile {
        /// The package.
        package: String,
        /// The file asked for.
        file: String,
        /// The folder searched (with its subfolders).
        share: PathBuf,
        /// Launch files it has.
        available: Vec<String>,
    },
    /// More than one file of that name in the package's `share` folder.
    Ambiguous {
        /// The file asked for.
        file: String,
        /// Where it was found.
        found: Vec<PathBuf>,
    },
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackageError::NoPrefixes => write!(
                f,
                "AMENT_PREFIX_PATH is not set, so no package can be found: source a \
                 workspace's setup (`. install/setup.sh`) or set AMENT_PREFIX_PATH to the \
                 prefixes that hold packages (e.g. `export AMENT_PREFIX_PATH=$PWD/install`)"
            ),
            PackageError::NotFound {
                package,
                prefixes,
                similar,
            } => {
                let searched: Vec<String> =
                    prefixes.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "package '{package}' not found in AMENT_PREFIX_PATH ({})",
                    searched.join(":")
                )?;
                if !similar.is_empty() {
                    write!(f, "; did you mean {}?", similar.join(", "))?;
                }
                write!(
                    f,
                    " (a package is installed in a prefix when the prefix has \
                     {PACKAGES_INDEX}/{package}; build and install it, or add its prefix)"
                )
            }
            PackageError::NoExecutable {
                package,
                executable,
                available,
            } => {
                write!(f, "package '{package}' has no executable '{executable}'")?;
                if available.is_empty() {
                    write!(f, " (it has no executables in lib/{package})")
                } else {
                    write!(f, " (it has: {})", available.join(", "))
                }
            }
            PackageError::NoFile {
                package,
                file,
                share,
                available,
            } => {
                write!(
                    f,
                    "package '{package}' has no file '{file}' under {}",
                    share.display()
                )?;
                if !available.is_empty() {
                    write!(f, " (its launch files: {})", available.join(", "))?;
                }
                Ok(())
            }
            PackageError::Ambiguous { file, found } => {
                let found: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "'{file}' is in more than one place: {}; give the path instead",
                    found.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for PackageError {}

impl PackageIndex {
    /// The prefixes of `AMENT_PREFIX_PATH`, in order.
    pub fn from_env() -> Self {
        let prefixes = std::env::var_os("AMENT_PREFIX_PATH")
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Self { prefixes }
    }

    /// These prefixes, searched in order.
    pub fn with_prefixes(prefixes: Vec<PathBuf>) -> Self {
        Self { prefixes }
    }

    /// The prefixes searched, in order.
    pub fn prefixes(&self) -> &[PathBuf] {
        &self.prefixes
    }

    /// Every installed package and the prefix it is found in (the first that has it).
    pub fn packages(&self) -> BTreeMap<String, PathBuf> {
        let mut found = BTreeMap::new();
        for prefix in &self.prefixes {
            let Ok(entries) = std::fs::read_dir(prefix.join(PACKAGES_INDEX)) else {
                continue;
            };
            for entry in entries.flatten() {
                if let Some(name) = entry.file_name().to_str() {
                    found
                        .entry(name.to_owned())
                        .or_insert_with(|| prefix.clone());
                }
            }
        }
        found
    }

    /// The prefix `package` is installed in.
    pub fn prefix(&self, package: &str) -> Result<PathBuf, PackageError> {
        if self.prefixes.is_empty() {
            return Err(PackageError::NoPrefixes);
        }
        if !package.is_empty() && !package.contains(['/', '\0']) {
            for prefix in &self.prefixes {
                if prefix.join(PACKAGES_INDEX).join(package).is_file() {
                    return Ok(prefix.clone());
                }
            }
        }
        Err(PackageError::NotFound {
            package: package.to_owned(),
            prefixes: self.prefixes.clone(),
            similar: similar(package, self.packages().keys()),
        })
    }

    /// The components `package` registers (its [`COMPONENTS_INDEX`] resource, in the
    /// prefix it is installed in): each plugin name with its file, in the order listed.
    pub fn components(&self, package: &str) -> Result<Vec<(String, PathBuf)>, PackageError> {
        let prefix = self.prefix(package)?;
        let text = std::fs::read_to_string(prefix.join(COMPONENTS_INDEX).join(package))
            .unwrap_or_default();
        Ok(text
            .lines()
            .filter_map(|line| line.trim().split_once(';'))
            .filter(|(plugin, _)| !plugin.is_empty())
            .map(|(plugin, path)| (plugin.to_owned(), prefix.join(path)))
            .collect())
    }

    /// The package's shared files: `PREFIX/share/PACKAGE`.
    pub fn share(&self, package: &str) -> Result<PathBuf, PackageError> {
        Ok(self.prefix(package)?.join("share").join(package))
    }

    /// The package's executables (files in `PREFIX/lib/PACKAGE` that may be run), by name.
    pub fn executables(&self, package: &str) -> Result<Vec<PathBuf>, PackageError> {
        let lib = self.prefix(package)?.join("lib").join(package);
        let mut found: Vec<PathBuf> = std::fs::read_dir(&lib)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| is_executable(p))
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        Ok(found)
    }

    /// The executable `name` of `package`.
    pub fn executable(&self, package: &str, name: &str) -> Result<PathBuf, PackageError> {
        let all = self.executables(package)?;
        if let Some(path) = all
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n == name))
        {
            return Ok(path.clone());
        }
        Err(PackageError::NoExecutable {
            package: package.to_owned(),
            executable: name.to_owned(),
            available: all.iter().filter_map(|p| file_name(p)).collect(),
        })
    }

    /// The file `name` somewhere under the package's `share` folder (as `ros2 launch PKG
    /// FILE` finds a launch file); a path with a `/` is taken relative to that folder.
    pub fn find_file(&self, package: &str, name: &str) -> Result<PathBuf, PackageError> {
        let share = self.share(package)?;
        if name.contains('/') {
            let path = share.join(name);
            if path.is_file() {
                return Ok(path);
            }
        } else {
            let mut found = Vec::new();
            walk(&share, &mut |p| {
                if p.file_name().is_some_and(|n| n == name) {
                    found.push(p.to_path_buf());
                }
            });
            found.sort();
            match found.len() {
                1 => return Ok(found.remove(0)),
                0 => {}
                _ => {
                    return Err(PackageError::Ambiguous {
                        file: name.to_owned(),
                        found,
                    });
                }
            }
        }
        let mut available = Vec::new();
        walk(&share, &mut |p| {
            if is_launch_file(p)
                && let Ok(rel) = p.strip_prefix(&share)
            {
                available.push(rel.display().to_string());
            }
        });
        available.sort();
        Err(PackageError::NoFile {
            package: package.to_owned(),
            file: name.to_owned(),
            share,
            available,
        })
    }
}

/// What [`install`] put where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Installed {
    /// Every file written, under the prefix.
    pub files: Vec<PathBuf>,
}

/// The resource type under which packages register their components (nodes a component
/// container can load): `rclcpp_components`' CMake writes it for C++ components, [`install`]
/// for Python ones. Each line of a package's resource is `PLUGIN;PATH`, `PATH` relative to
/// the prefix.
pub const COMPONENTS_INDEX: &str = "share/ament_index/resource_index/rclcpp_components";

/// What a package holds, for [`install`].
#[derive(Debug, Clone, Default)]
pub struct Contents {
    /// Into `lib/PACKAGE/`: Rust binaries, or Python nodes with their `#!` line.
    pub executables: Vec<PathBuf>,
    /// Into `share/PACKAGE/`: files, or folders with what they hold (`launch/`, `config/`).
    pub shared: Vec<PathBuf>,
    /// Components, by plugin name: each Python file into `lib/PACKAGE/`, registered in
    /// [`COMPONENTS_INDEX`] (what a kairos component container loads).
    pub components: Vec<(String, PathBuf)>,
}

/// Installs `package` into `prefix` in ament's layout: each of `executables` into
/// `lib/PACKAGE/` (a Rust binary, or a Python node with its `#!` line), each of `shared`
/// (files, or folders with what they hold, such as `launch/` and `config/`) into
/// `share/PACKAGE/`, and the index's marker. Installing again replaces what was there;
/// an executable that cannot be run is refused, as `kairos run` could not start it; so is
/// a component that is not a Python file, or a plugin name that is empty or has a `;`.
pub fn install(prefix: &Path, package: &str, contents: &Contents) -> std::io::Result<Installed> {
    use std::io::{Error, ErrorKind};
    if package.is_empty() || package.contains(['/', '\0']) || package.starts_with('.') {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("'{package}' is not a package name (letters, digits and _)"),
        ));
    }
    for (plugin, file) in &contents.components {
        if plugin.is_empty() || plugin.contains([';', '\n']) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("'{plugin}' is not a plugin name (e.g. my_package::Talker)"),
            ));
        }
        if file.extension().is_none_or(|e| e != "py") || !file.is_file() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "component {plugin}: {} is not a Python file (a component is a Python \
                     file whose callable named after the plugin's last part makes a node)",
                    file.display()
                ),
            ));
        }
    }
    let mut installed = Installed::default();
    let lib = prefix.join("lib").join(package);
    std::fs::create_dir_all(&lib)?;
    for exe in &contents.executables {
        if !is_executable(exe) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{} is not an executable file (chmod +x it; a Python node needs a \
                     `#!/usr/bin/env python3` first line)",
                    exe.display()
                ),
            ));
        }
        let to = lib.join(exe.file_name().unwrap_or_default());
        std::fs::copy(exe, &to)?;
        installed.files.push(to);
    }
    let share = prefix.join("share").join(package);
    std::fs::create_dir_all(&share)?;
    for item in &contents.shared {
        let to = share.join(item.file_name().unwrap_or_default());
        copy_tree(item, &to, &mut installed.files)?;
    }
    if !contents.components.is_empty() {
        let mut lines = String::new();
        for (plugin, file) in &contents.components {
            let name = file.file_name().unwrap_or_default();
            let to = lib.join(name);
            std::fs::copy(file, &to)?;
            installed.files.push(to);
            let relative = Path::new("lib").join(package).join(name);
            lines.push_str(&format!("{plugin};{}\n", relative.display()));
        }
        let resource = prefix.join(COMPONENTS_INDEX);
        std::fs::create_dir_all(&resource)?;
        std::fs::write(resource.join(package), lines)?;
        installed.files.push(resource.join(package));
    }
    let marker = prefix.join(PACKAGES_INDEX).join(package);
    std::fs::create_dir_all(prefix.join(PACKAGES_INDEX))?;
    std::fs::write(&marker, "")?;
    installed.files.push(marker);
    Ok(installed)
}

fn copy_tree(from: &Path, to: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()), written)?;
        }
    } else {
        std::fs::copy(from, to)?;
        written.push(to.to_path_buf());
    }
    Ok(())
}

/// Whether `path` names a launch file by its name (`*.launch.py`, `*_launch.xml`,
/// `*.launch.yaml`, ..., as `ros2 launch` completes them).
pub fn is_launch_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    ["py", "xml", "yaml", "yml"].iter().any(|ext| {
        name.ends_with(&format!(".launch.{ext}")) || name.ends_with(&format!("_launch.{ext}"))
    })
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Every file under `dir`, depth first, without following links to folders (a link
/// cycle cannot make it loop).
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, visit),
            Ok(_) if path.is_file() => visit(&path),
            _ => {}
        }
    }
}

/// Whether `path` is a file someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Names in `names` within two edits of `name`, or that contain it.
fn similar<'a>(name: &str, names: impl Iterator<Item = &'a String>) -> Vec<String> {
    names
        .filter(|n| {
            (!name.is_empty() && (n.contains(name) || name.contains(n.as_str())))
                || edit_distance(n, name) <= 2
        })
        .take(5)
        .cloned()
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn lay_out(prefix: &Path, package: &str, executables: &[&str], files: &[&str]) {
        std::fs::create_dir_all(prefix.join(PACKAGES_INDEX)).unwrap();
        std::fs::write(prefix.join(PACKAGES_INDEX).join(package), "").unwrap();
        let lib = prefix.join("lib").join(package);
        std::fs::create_dir_all(&lib).unwrap();
        for exe in executables {
            std::fs::write(lib.join(exe), "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(lib.join(exe), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        for file in files {
            let path = prefix.join("share").join(package).join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
    }

    #[test]
    fn the_first_prefix_that_has_a_package_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (overlay, underlay) = (dir.path().join("overlay"), dir.path().join("underlay"));
        lay_out(
            &overlay,
            "robot",
            &["driver"],
            &["launch/bringup.launch.py"],
        );
        lay_out(&underlay, "robot", &["old_driver"], &[]);
        lay_out(&underlay, "base", &[], &[]);
        let index = PackageIndex::with_prefixes(vec![overlay.clone(), underlay.clone()]);
        assert_eq!(index.prefix("robot").unwrap(), overlay);
        assert_eq!(index.prefix("base").unwrap(), underlay);
        let packages: Vec<_> = index.packages().into_keys().collect();
        assert_eq!(packages, ["base", "robot"]);
        assert_eq!(
            index.executable("robot", "driver").unwrap(),
            overlay.join("lib/robot/driver")
        );
        assert_eq!(
            index.find_file("robot", "bringup.launch.py").unwrap(),
            overlay.join("share/robot/launch/bringup.launch.py")
        );
    }

    #[test]
    fn an_installed_package_is_found_where_ros_2_looks() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("launch")).unwrap();
        std::fs::write(src.join("launch/robot.launch.xml"), "<launch/>").unwrap();
        std::fs::write(src.join("node.py"), "#!/usr/bin/env python3\n").unwrap();
        std::fs::set_permissions(src.join("node.py"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let prefix = dir.path().join("install");
        std::fs::write(src.join("camera.py"), "class Camera: pass\n").unwrap();
        let contents = Contents {
            executables: vec![src.join("node.py")],
            shared: vec![src.join("launch")],
            components: vec![("robot::Camera".into(), src.join("camera.py"))],
        };
        install(&prefix, "robot", &contents).unwrap();
        let index = PackageIndex::with_prefixes(vec![prefix.clone()]);
        assert_eq!(
            index.executable("robot", "node.py").unwrap(),
            prefix.join("lib/robot/node.py")
        );
        assert_eq!(
            index.find_file("robot", "robot.launch.xml").unwrap(),
            prefix.join("share/robot/launch/robot.launch.xml")
        );
        assert_eq!(
            std::fs::read_to_string(prefix.join(COMPONENTS_INDEX).join("robot")).unwrap(),
            "robot::Camera;lib/robot/camera.py\n"
        );
        assert!(prefix.join("lib/robot/camera.py").is_file());
        assert_eq!(
            index.components("robot").unwrap(),
            [("robot::Camera".into(), prefix.join("lib/robot/camera.py"))]
        );
        std::fs::write(src.join("data.txt"), "").unwrap();
        let refused = |contents: Contents| install(&prefix, "robot", &contents).unwrap_err();
        let err = refused(Contents {
            executables: vec![src.join("data.txt")],
            ..Contents::default()
        });
        assert!(err.to_string().contains("chmod +x"), "{err}");
        let err = refused(Contents {
            components: vec![("robot::Data".into(), src.join("data.txt"))],
            ..Contents::default()
        });
        assert!(err.to_string().contains("is not a Python file"), "{err}");
        let err = refused(Contents {
            components: vec![("a;b".into(), src.join("camera.py"))],
            ..Contents::default()
        });
        assert!(err.to_string().contains("not a plugin name"), "{err}");
        assert!(install(&prefix, "../x", &Contents::default()).is_err());
    }

    #[test]
    fn a_failed_lookup_says_what_exists_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        lay_out(dir.path(), "robot_driver", &["driver"], &["a.launch.xml"]);
        let index = PackageIndex::with_prefixes(vec![dir.path().to_path_buf()]);
        let err = index.prefix("robot_drivr").unwrap_err().to_string();
        assert!(err.contains("did you mean robot_driver?"), "{err}");
        assert!(err.contains(&dir.path().display().to_string()), "{err}");
        let err = index.executable("robot_driver", "drive").unwrap_err();
        assert!(err.to_string().contains("(it has: driver)"), "{err}");
        let err = index.find_file("robot_driver", "b.launch.xml").unwrap_err();
        assert!(err.to_string().contains("a.launch.xml"), "{err}");
        let err = PackageIndex::default().prefix("robot").unwrap_err();
        assert_eq!(err, PackageError::NoPrefixes);
        assert!(err.to_string().contains("AMENT_PREFIX_PATH"), "{err}");
        // A name that could escape the index is not found, never looked up as a path.
        assert!(index.prefix("../robot_driver").is_err());
    }
}
