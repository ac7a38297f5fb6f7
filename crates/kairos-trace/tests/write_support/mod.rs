//! Shared by the writer's integration tests: run the real babeltrace2 on a trace and parse
//! what it prints; serialize sessions (one per process) between tests of one binary.

#![allow(dead_code)] // each test binary uses its own part

use std::collections::HashMap;
use std::path::Path;

/// One event as babeltrace2 printed it.
#[derive(Debug, Clone)]
pub struct Line {
    /// Timestamp in ns since the Unix epoch (the clock's offset applied).
    pub time_ns: u64,
    /// `provider:event`.
    pub name: String,
    pub cpu_id: u32,
    pub vtid: i64,
    pub vpid: i64,
    pub procname: String,
    /// Payload fields as printed (strings keep their quotes).
    pub fields: HashMap<String, String>,
}

impl Line {
    pub fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("{} has no field {name}: {:?}", self.name, self.fields))
    }

    pub fn u64(&self, name: &str) -> u64 {
        let text = self.field(name);
        match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).expect("hex field"),
            None => text.parse().expect("decimal field"),
        }
    }
}

/// What babeltrace2 made of a trace.
#[derive(Debug)]
pub struct Reading {
    pub success: bool,
    pub stderr: String,
    pub events: Vec<Line>,
}

impl Reading {
    /// Events discarded as babeltrace2's warnings count them.
    pub fn discarded(&self) -> u64 {
        self.stderr
            .lines()
            .filter_map(|line| {
                let rest = line.split("Tracer discarded ").nth(1)?;
                rest.split_whitespace().next()?.parse::<u64>().ok()
            })
            .sum()
    }
}

/// Runs babeltrace2 on `dir`, failing the test with the fix if it is not installed.
pub fn read(dir: &Path) -> Reading {
    let output = kairos_testkit::babeltrace2_output(&["--clock-seconds", "--no-delta"], dir);
    let stdout = String::from_utf8(output.stdout).expect("babeltrace2 prints UTF-8");
    Reading {
        success: output.status.success(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        events: stdout.lines().map(parse_line).collect(),
    }
}

/// Reads a trace that must be clean: exit code 0 and nothing on stderr.
pub fn read_clean(dir: &Path) -> Vec<Line> {
    let reading = read(dir);
    assert!(
        reading.success && reading.stderr.is_empty(),
        "babeltrace2 did not read {} cleanly (success: {}):\n{}",
        dir.display(),
        reading.success,
        reading.stderr
    );
    reading.events
}

/// Parses `[seconds.nanoseconds] host:proc provider:event: { packet }, { context }, { payload }`.
fn parse_line(line: &str) -> Line {
    let rest = line.strip_prefix('[').unwrap_or_else(|| bad_line(line));
    let (time, rest) = rest.split_once("] ").unwrap_or_else(|| bad_line(line));
    let (seconds, nanos) = time.split_once('.').unwrap_or_else(|| bad_line(line));
    let mut words = rest.splitn(3, ' ');
    let _host = words.next().unwrap_or_else(|| bad_line(line));
    let name = words
        .next()
        .unwrap_or_else(|| bad_line(line))
        .trim_end_matches(':');
    let groups = brace_groups(words.next().unwrap_or_else(|| bad_line(line)));
    let [packet, context, payload] = groups.as_slice() else {
        bad_line(line)
    };
    let context = fields(context);
    Line {
        time_ns: seconds.parse::<u64>().unwrap_or_else(|_| bad_line(line)) * 1_000_000_000
            + nanos.parse::<u64>().unwrap_or_else(|_| bad_line(line)),
        name: name.to_owned(),
        cpu_id: fields(packet)["cpu_id"]
            .parse()
            .unwrap_or_else(|_| bad_line(line)),
        vtid: context["vtid"].parse().unwrap_or_else(|_| bad_line(line)),
        vpid: context["vpid"].parse().unwrap_or_else(|_| bad_line(line)),
        procname: context["procname"].trim_matches('"').to_owned(),
        fields: fields(payload),
    }
}

fn bad_line<T>(line: &str) -> T {
    panic!("unexpected babeltrace2 line: {line}")
}

/// The contents of the top-level `{ ... }` groups, quotes respected.
fn brace_groups(text: &str) -> Vec<String> {
    let mut groups = Vec::new();
    let (mut depth, mut quoted, mut current) = (0, false, String::new());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if quoted => {
                current.push(c);
                current.extend(chars.next());
                continue;
            }
            '"' => quoted = !quoted,
            '{' if !quoted => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    groups.push(std::mem::take(&mut current));
                    continue;
                }
            }
            _ => {}
        }
        if depth > 0 {
            current.push(c);
        }
    }
    groups
}

/// `a = 1, b = "x, y"` as a map, quotes respected.
fn fields(group: &str) -> HashMap<String, String> {
    let mut parts = Vec::new();
    let (mut quoted, mut depth, mut current) = (false, 0, String::new());
    for c in group.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
        .iter()
        .filter_map(|part| part.split_once(" = "))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect()
}

/// Tests of one binary share the process's single trace session: take this first.
pub fn exclusive() -> parking_lot::MutexGuard<'static, ()> {
    static LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    LOCK.lock()
}

/// Runs test `test` of this binary again as a child under the shell `limits` (e.g.
/// `ulimit -n 40`), told by the variable `child_dir_var` to write its trace in `dir`;
/// asserts it exited 0 and returns what it printed.
pub fn run_child_under(limits: &str, test: &str, child_dir_var: &str, dir: &Path) -> String {
    let output = kairos_testkit::rerun_self_under(limits, test)
        .env(child_dir_var, dir)
        .output()
        .unwrap();
    let child_out = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "child failed:\n{child_out}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    child_out
}
