//! Substitutions in launch file values, as ROS 2's launch frontends read them:
//! `$(var NAME)`, `$(env NAME [DEFAULT])`, `$(optenv NAME [DEFAULT])`, `$(dirname)` and
//! `$(filename)`; they nest (`$(env A $(var b))`). The ones that need a ROS install
//! (`find-pkg-share`, ...) or run code (`eval`, `command`) are errors that say what to
//! write instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What substitutions see: the launch arguments and `let`s in scope, and the file.
#[derive(Debug, Clone)]
pub struct Scope {
    pub vars: BTreeMap<String, String>,
    pub file: PathBuf,
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

/// The index of the `)` that closes the substitution whose body starts `body`.
fn matching_paren(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = body.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' if i > 0 && bytes[i - 1] == b'$' => depth += 1,
            b')' if depth == 0 => return Some(i),
            b')' => depth -= 1,
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
        ("find-pkg-share" | "find-pkg-prefix" | "find-exec" | "exec-in-pkg", _) => Err(format!(
            "$({body}): kairos has no ament index to find packages in; write a path relative \
             to the launch file with $(dirname)"
        )),
        ("eval" | "command" | "anon", _) => Err(format!(
            "$({body}): '{name}' substitutions are not supported by kairos launch"
        )),
        _ => Err(format!(
            "$({body}): unknown substitution '{name}' (kairos launch knows var, env, optenv, \
             dirname, filename)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        Scope {
            vars: BTreeMap::from([("ns".into(), "robot".into()), ("v".into(), "X".into())]),
            file: PathBuf::from("/launch/robot.launch.yaml"),
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
                .contains("$(dirname)")
        );
        assert!(substitute("$(var ns", &s).unwrap_err().contains("without"));
        assert!(substitute("$(bogus)", &s).unwrap_err().contains("unknown"));
    }
}
