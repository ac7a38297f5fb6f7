//! The `executable` entity, and what every entity that starts a process takes:
//! `output`, `respawn` (with its delay and retries), `on_exit`/`required`, `env`, `cwd`,
//! `launch-prefix`, `emulate_tty`, and the process's own `sigterm_timeout` and
//! `sigkill_timeout`; each checked as it is read, with the entity's file and line.

use super::*;

/// What every entity that starts a process takes, besides its own keys.
const PROCESS_KEYS: &[&str] = &[
    "name",
    "args",
    "output",
    "respawn",
    "respawn_delay",
    "respawn_max_retries",
    "on_exit",
    "required",
    "env",
    "cwd",
    "launch-prefix",
    "emulate_tty",
    "sigterm_timeout",
    "sigkill_timeout",
];

/// An entity's keys: its own, and what every process entity takes.
pub(super) fn process_keys(own: &[&'static str]) -> Vec<&'static str> {
    own.iter().chain(PROCESS_KEYS).copied().collect()
}

impl Reader {
    pub(super) fn executable(&mut self, ctx: &Context, body: &Node) -> Result<(), LaunchError> {
        let f = Fields::of(ctx, "executable", body, &process_keys(&["cmd", "shell"]))?;
        let cmd = ctx.text(f.required(ctx, "cmd")?, "cmd")?;
        let mut words = split_words(ctx, body.line, &cmd)?;
        if words.is_empty() {
            return Err(ctx.error(body.line, "'cmd' is empty"));
        }
        if let Some(text) = f.text(ctx, "args")? {
            words.extend(split_words(ctx, body.line, &text)?);
        }
        let mut name = f.text(ctx, "name")?;
        let shell = f
            .get("shell")
            .map(|n| ctx.bool(n, "shell"))
            .transpose()?
            .unwrap_or(false);
        let (program, words) = if shell {
            // As ROS 2's: the words joined by spaces, for `sh -c`; named after the first.
            name.get_or_insert_with(|| {
                Path::new(&words[0])
                    .file_name()
                    .map_or_else(|| words[0].clone(), |n| n.to_string_lossy().into_owned())
            });
            (
                PathBuf::from("/bin/sh"),
                vec!["-c".to_owned(), words.join(" ")],
            )
        } else {
            let program = find_executable(&words.remove(0), ctx.scope.dir())
                .map_err(|why| ctx.error(body.line, why))?;
            (program, words)
        };
        self.push(ctx, &f, body.line, program, words, name)
    }

    pub(super) fn push(
        &mut self,
        ctx: &Context,
        f: &Fields<'_>,
        line: usize,
        program: PathBuf,
        args: Vec<String>,
        name: Option<String>,
    ) -> Result<(), LaunchError> {
        let output = match f.text(ctx, "output")?.as_deref() {
            None | Some("screen") => Output::Screen,
            Some("log") => Output::Log,
            Some("both") => Output::Both,
            Some(other) => {
                return Err(ctx.error(line, format!("output '{other}': use screen, log or both")));
            }
        };
        let respawn = f
            .get("respawn")
            .map(|n| ctx.bool(n, "respawn"))
            .transpose()?
            .unwrap_or(false);
        let seconds = |key: &str| -> Result<Option<Duration>, LaunchError> {
            f.text(ctx, key)?
                .map(|text| {
                    let value = text.parse::<f64>().map_err(|_| {
                        ctx.error(line, format!("{key} '{text}' is not a number of seconds"))
                    })?;
                    seconds(key, value).map_err(|_| {
                        ctx.error(
                            line,
                            format!(
                                "{key} '{text}' is not seconds from 0 to {MAX_SECONDS} (100 years)"
                            ),
                        )
                    })
                })
                .transpose()
        };
        let respawn_delay = seconds("respawn_delay")?.unwrap_or(Duration::ZERO);
        let sigterm_timeout = seconds("sigterm_timeout")?;
        let sigkill_timeout = seconds("sigkill_timeout")?;
        let respawn_max_retries = match f.text(ctx, "respawn_max_retries")? {
            None => None,
            Some(text) => match text.parse::<i64>() {
                Ok(n) if n < 0 => None,
                Ok(n) => Some(u32::try_from(n).unwrap_or(u32::MAX)),
                Err(_) => {
                    return Err(ctx.error(
                        line,
                        format!("respawn_max_retries '{text}' is not a whole number (-1: always)"),
                    ));
                }
            },
        };
        let flag = |key: &str| -> Result<bool, LaunchError> {
            Ok(f.get(key)
                .map(|n| ctx.bool(n, key))
                .transpose()?
                .unwrap_or(false))
        };
        let emulate_tty = flag("emulate_tty")?;
        let (program, args) = with_prefix(ctx, f, line, program, args)?;
        let mut required = f
            .get("required")
            .map(|n| ctx.bool(n, "required"))
            .transpose()?
            .unwrap_or(false);
        match f.text(ctx, "on_exit")?.as_deref() {
            None => {}
            Some("shutdown") => required = true,
            Some(other) => {
                return Err(ctx.error(
                    line,
                    format!("on_exit '{other}': kairos launch knows 'shutdown'"),
                ));
            }
        }
        let mut env = ctx.env.clone();
        for item in f.list(ctx, "env")? {
            let e = Fields::of(ctx, "env", item, &["name", "value"])?;
            env.push((
                ctx.text(e.required(ctx, "name")?, "name")?,
                ctx.text(e.required(ctx, "value")?, "value")?,
            ));
        }
        // An executable's `name`, else the program's file name, as `ros2 launch` labels.
        let base = name.unwrap_or_else(|| {
            program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "process".into())
        });
        let n = self.counters.entry(base.clone()).or_insert(0);
        *n += 1;
        self.processes.push(ProcessSpec {
            label: format!("{base}-{n}"),
            program,
            args,
            env,
            env_only: false,
            cwd: f.text(ctx, "cwd")?.map(PathBuf::from),
            output,
            respawn,
            respawn_delay,
            respawn_max_retries,
            required,
            origin: format!("{}:{line}", ctx.scope.file.display()),
            sigterm_timeout,
            sigkill_timeout,
            emulate_tty,
        });
        Ok(())
    }
}

/// The command line a process runs: with a `launch-prefix` (a debugger, `valgrind`),
/// the prefix's words first, its program found as any executable is.
fn with_prefix(
    ctx: &Context,
    f: &Fields<'_>,
    line: usize,
    program: PathBuf,
    args: Vec<String>,
) -> Result<(PathBuf, Vec<String>), LaunchError> {
    let (mut program, mut args) = (program, args);
    if let Some(prefix) = f.text(ctx, "launch-prefix")? {
        let mut words = split_words(ctx, line, &prefix)?;
        if !words.is_empty() {
            let first = find_executable(&words.remove(0), ctx.scope.dir())
                .map_err(|why| ctx.error(line, format!("launch-prefix: {why}")))?;
            words.push(program.display().to_string());
            words.extend(args);
            (program, args) = (first, words);
        }
    }
    Ok((program, args))
}
