//! Substitutions in launch file values, as ROS 2's launch frontends read them:
//! `$(var NAME)`, `$(env NAME [DEFAULT])`, `$(optenv NAME [DEFAULT])`, `$(dirname)`,
//! `$(filename)`, `$(anon NAME)`, the package lookups `$(find-pkg-share PKG)`,
//! `$(find-pkg-prefix PKG)`, `$(exec-in-pkg EXE PKG)` and `$(find-exec NAME)`, and the
//! ones that run code, `$(command CMD [fail|warn|ignore])` and `$(eval EXPR)` (Python, as
//! ROS 2 evaluates it). They nest (`$(env A $(var b))`).
//!
//! A substitution that runs a program runs while the file is read, before anything
//! starts; it is bounded by [`COMMAND_TIMEOUT`] and its failure is the launch's error.

use crate::package::PackageIndex;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use wait_timeout::ChildExt;

/// How long `$(command ...)` and `$(eval ...)` may run before the launch fails.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// What substitutions see: the launch arguments and `let`s in scope, the file, and the
/// installed packages.
#[derive(Debug, Clone)]
pub struct Scope {
    pub vars: BTreeMap<String, String>,
    pub file: PathBuf,
    pub packages: Arc<PackageIndex>,
}

impl Scope {
    /// The folder of the launch file (`$(dirname)`).
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }
}

/// `text` with every substitution replaced; the error says which one failed and why.
pub fn substitute(text: &str, scope: &Scope) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("$(") {
        out.push_str(&rest[..start]);
        let body_start = start + 2;
        let end = matching_paren(&rest[body_start..])
            .ok_or_else(|| format!("'{text}' has a '$(' without its ')'"))?;
        let body = substitute(&rest[body_start..body_start + end], scope)?;
        out.push_str(&evaluate(&body, scope)?);
        rest = &rest[body_start + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The index of the `)` that closes the substitution whose body starts `body`; a
/// parenthesis inside quotes (`$(eval 'floor(2.5)')`) is text.
fn matching_paren(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    let bytes = body.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'(') if i > 0 && bytes[i - 1] == b'$' => depth += 1,
            (None, b')') if depth == 0 => return Some(i),
            (None, b')') => depth -= 1,
            _ => {}
        }
    }
    None
}

fn unquote(word: &str) -> &str {
    word.strip_prefix('\'')
        .and_then(|w| w.strip_suffix('\''))
        .or_else(|| word.strip_prefix('"').and_then(|w| w.strip_suffix('"')))
        .unwrap_or(word)
}

fn evaluate(body: &str, scope: &Scope) -> Result<String, String> {
    // The code of `command` and `eval` is the whole rest of the body, quotes and spaces kept.
    if let Some(rest) = body.strip_prefix("eval ") {
        return eval_python(unquote(rest.trim()));
    }
    if let Some(rest) = body.strip_prefix("command ") {
        return command(rest.trim());
    }
    let mut words = body.split_whitespace();
    let name = words.next().unwrap_or("");
    let args: Vec<&str> = words.map(unquote).collect();
    match (name, args.as_slice()) {
        ("var", [var]) => scope.vars.get(*var).cloned().ok_or_else(|| {
            format!(
                "$(var {var}): no launch argument or let named '{var}' (declare it with \
                 `- arg: {{name: {var}}}` or pass {var}:=VALUE)"
            )
        }),
        ("env", [var]) => std::env::var(var).map_err(|_| {
            format!(
                "$(env {var}): the environment has no {var} (give a default: $(env {var} DEFAULT))"
            )
        }),
        ("env" | "optenv", [var, default @ ..]) => {
            Ok(std::env::var(var).unwrap_or_else(|_| default.join(" ")))
        }
        ("optenv", []) | ("env", []) | ("var", _) => Err(format!("$({body}): {name} takes a name")),
        ("dirname", []) => Ok(scope.dir().display().to_string()),
        ("filename", []) => Ok(scope
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()),
        ("find-pkg-share", [pkg]) => scope
            .packages
            .share(pkg)
            .map(|p| p.display().to_string())
            .map_err(|e| format!("$({body}): {e}")),
        ("find-pkg-prefix", [pkg]) => scope
            .packages
            .prefix(pkg)
            .map(|p| p.display().to_string())
            .map_err(|e| format!("$({body}): {e}")),
        ("exec-in-pkg", [exe, pkg]) => scope
            .packages
            .executable(pkg, exe)
            .map(|p| p.display().to_string())
            .map_err(|e| format!("$({body}): {e}")),
        ("find-exec", [exe]) => find_on_path(exe)
            .map(|p| p.display().to_string())
            .ok_or_else(|| format!("$({body}): no executable '{exe}' on PATH")),
        ("anon", [name]) => Ok(anonymous(name)),
        ("find-pkg-share" | "find-pkg-prefix" | "find-exec" | "anon", _) => {
            Err(format!("$({body}): {name} takes one name"))
        }
        ("exec-in-pkg", _) => Err(format!(
            "$({body}): write $(exec-in-pkg EXECUTABLE PACKAGE)"
        )),
        ("eval" | "command", _) => Err(format!("$({body}): {name} needs its code")),
        _ => Err(format!(
            "$({body}): unknown substitution '{name}' (kairos launch knows var, env, optenv, \
             dirname, filename, anon, find-pkg-share, find-pkg-prefix, exec-in-pkg, find-exec, \
             command, eval)"
        )),
    }
}

/// `name` made unique to this launch, the same every time it is asked for in it (ROS 2's
/// `$(anon name)`).
fn anonymous(name: &str) -> String {
    static SALT: OnceLock<u64> = OnceLock::new();
    let salt = SALT.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        (u64::from(std::process::id()) << 32) ^ u64::from(nanos)
    });
    format!("{name}_{salt:x}")
}

fn find_on_path(exe: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(exe))
        .find(|p| crate::package::is_executable(p))
}

/// `$(command CMD [fail|warn|ignore])`: the command's standard output, as ROS 2's
/// substitution gives it. Its failure (or a word on standard error, with `fail`, the
/// default) fails the launch; `warn` prints it; `ignore` does neither.
fn command(rest: &str) -> Result<String, String> {
    let mut words =
        shlex::split(rest).ok_or_else(|| format!("$(command {rest}): an unclosed quote"))?;
    let mode = match words.last().map(String::as_str) {
        Some(m @ ("fail" | "warn" | "ignore")) if words.len() > 1 => {
            let m = m.to_owned();
            words.pop();
            m
        }
        _ => "fail".to_owned(),
    };
    // `$(command 'xacro robot.xacro')`: one quoted word holds the command line.
    if words.len() == 1 {
        words = shlex::split(&words[0])
            .ok_or_else(|| format!("$(command {rest}): an unclosed quote"))?;
    }
    let Some((program, args)) = words.split_first() else {
        return Err("$(command): no command given".into());
    };
    let mut cmd = Command::new(program);
    cmd.args(args);
    let (status, stdout, stderr) =
        run_bounded(&mut cmd).map_err(|why| format!("$(command {rest}): {why}"))?;
    let failed = !status.success() || (mode == "fail" && !stderr.trim().is_empty());
    if failed && mode != "ignore" {
        let why = format!(
            "$(command {rest}): {} (stderr: {})",
            if status.success() {
                "it wrote to standard error".to_owned()
            } else {
                format!("it exited with {status}")
            },
            stderr.trim()
        );
        if mode == "fail" {
            return Err(why);
        }
        eprintln!("kairos launch: warning: {why}");
    }
    Ok(stdout)
}

/// `$(eval EXPR)`: the Python expression's value, with `math`'s names in scope as ROS 2
/// gives them.
fn eval_python(expr: &str) -> Result<String, String> {
    let mut cmd = Command::new("python3");
    cmd.args([
        "-c",
        "import math, sys\nfrom math import *\nprint(eval(sys.argv[1]), end='')",
        expr,
    ]);
    let (status, stdout, stderr) = run_bounded(&mut cmd)
        .map_err(|why| format!("$(eval {expr}): {why} (eval needs python3 on PATH)"))?;
    if !status.success() {
        let last = stderr.lines().last().unwrap_or("").trim().to_owned();
        return Err(format!("$(eval {expr}): {last}"));
    }
    Ok(stdout)
}

/// Runs `cmd` to its end, within [`COMMAND_TIMEOUT`] (killed after it): its status,
/// standard output and standard error.
pub(crate) fn run_bounded(
    cmd: &mut Command,
) -> Result<(std::process::ExitStatus, String, String), String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    let read = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stream.read_to_string(&mut text);
            text
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped stdout")));
    let err = read(Box::new(child.stderr.take().expect("piped stderr")));
    let status = match child.wait_timeout(COMMAND_TIMEOUT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "it did not finish within {} s and was killed",
                COMMAND_TIMEOUT.as_secs()
            ));
        }
        Err(e) => return Err(format!("waiting for it: {e}")),
    };
    Ok((
        status,
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        Scope {
            vars: BTreeMap::from([("ns".into(), "robot".into()), ("v".into(), "X".into())]),
            file: PathBuf::from("/launch/robot.launch.yaml"),
            packages: Arc::default(),
        }
    }

    #[test]
    fn substitutions_nest_and_fall_back() {
        let s = scope();
        assert_eq!(substitute("/$(var ns)/cmd", &s).unwrap(), "/robot/cmd");
        assert_eq!(
            substitute("$(optenv KAIROS_NO_SUCH_VAR_1 $(var v))", &s).unwrap(),
            "X"
        );
        assert_eq!(
            substitute("$(dirname)/p.yaml", &s).unwrap(),
            "/launch/p.yaml"
        );
        assert_eq!(substitute("plain", &s).unwrap(), "plain");
    }

    #[test]
    fn what_cannot_be_substituted_says_what_to_do() {
        let s = scope();
        assert!(substitute("$(var nope)", &s).unwrap_err().contains("arg"));
        assert!(
            substitute("$(env KAIROS_NO_SUCH_VAR_2)", &s)
                .unwrap_err()
                .contains("default")
        );
        assert!(
            substitute("$(find-pkg-share x)/a", &s)
                .unwrap_err()
                .contains("AMENT_PREFIX_PATH")
        );
        assert!(substitute("$(var ns", &s).unwrap_err().contains("without"));
        assert!(substitute("$(bogus)", &s).unwrap_err().contains("unknown"));
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;

    fn scope() -> Scope {
        Scope {
            vars: BTreeMap::new(),
            file: PathBuf::from("/launch/robot.launch.xml"),
            packages: Arc::default(),
        }
    }

    #[test]
    fn command_and_eval_give_their_output_or_the_launch_s_error() {
        let s = scope();
        assert_eq!(substitute("$(command 'echo -n hi')", &s).unwrap(), "hi");
        assert_eq!(substitute("$(eval '2 * 21')", &s).unwrap(), "42");
        assert_eq!(substitute("$(eval 'floor(2.5)')", &s).unwrap(), "2");
        let err = substitute("$(command 'sh -c \"exit 4\"')", &s).unwrap_err();
        assert!(err.contains("exited"), "{err}");
        let err = substitute("$(eval '1 +')", &s).unwrap_err();
        assert!(err.contains("SyntaxError"), "{err}");
        // `ignore` keeps the output of a failing command.
        assert_eq!(
            substitute("$(command 'sh -c \"echo -n x; exit 1\"' ignore)", &s).unwrap(),
            "x"
        );
    }

    #[test]
    fn an_anonymous_name_is_the_same_within_a_launch_and_new_to_it() {
        let s = scope();
        let a = substitute("$(anon talker)", &s).unwrap();
        assert_eq!(a, substitute("$(anon talker)", &s).unwrap());
        assert!(a.starts_with("talker_") && a.len() > "talker_".len(), "{a}");
        assert_ne!(a, substitute("$(anon listener)", &s).unwrap());
    }
}
