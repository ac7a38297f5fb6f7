//! What the runtime says about itself on stderr (a trace that cannot be written, a
//! shutdown under way), in a way that never panics: `eprintln!` panics when stderr cannot
//! be written (a closed pipe: the launcher died, `| head` ended), and these lines are said
//! from signal handling and exit paths, where a panic would leave a program deaf to
//! Ctrl-C or abort its exit.

/// Writes `line` and a newline to stderr, or nothing when stderr cannot take it.
pub(crate) fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
