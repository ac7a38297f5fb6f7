//! The console line, in rcutils' format.
//!
//! The default is rcutils': `[{severity}] [{time}] [{name}]: {message}`. The environment
//! variable `RCUTILS_CONSOLE_OUTPUT_FORMAT` replaces it with the same tokens rcutils
//! reads: `{severity}`, `{name}`, `{message}`, `{function_name}`, `{file_name}`,
//! `{line_number}`, `{time}` (seconds with 9 decimals), `{time_as_nanoseconds}` and
//! `{date_time_with_ms}` (UTC); anything else is written as it is.
//! `RCUTILS_LOGGING_USE_STDOUT=1` writes to stdout instead of stderr.

use super::Record;
use std::io::Write;
use std::sync::OnceLock;

/// rcutils' default console format.
pub const DEFAULT_FORMAT: &str = "[{severity}] [{time}] [{name}]: {message}";

struct Console {
    format: String,
    stdout: bool,
}

fn console() -> &'static Console {
    static CONSOLE: OnceLock<Console> = OnceLock::new();
    CONSOLE.get_or_init(|| Console {
        format: std::env::var("RCUTILS_CONSOLE_OUTPUT_FORMAT")
            .ok()
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| DEFAULT_FORMAT.to_owned()),
        stdout: std::env::var("RCUTILS_LOGGING_USE_STDOUT").is_ok_and(|v| v == "1"),
    })
}

/// `record` as `format` lays it out.
pub fn render(format: &str, record: &Record<'_>) -> String {
    let mut out = String::with_capacity(format.len() + record.message.len() + 32);
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let Some(close) = after.find('}') else {
            rest = after;
            break;
        };
        let token = &after[1..close];
        match token {
            "severity" => out.push_str(record.severity.label()),
            "name" => out.push_str(record.name),
            "message" => out.push_str(record.message),
            "function_name" => out.push_str(record.function),
            "file_name" => out.push_str(record.file),
            "line_number" => out.push_str(&record.line.to_string()),
            "time" => out.push_str(&format!(
                "{}.{:09}",
                record.stamp_ns.div_euclid(1_000_000_000),
                record.stamp_ns.rem_euclid(1_000_000_000)
            )),
            "time_as_nanoseconds" => out.push_str(&record.stamp_ns.to_string()),
            "date_time_with_ms" => out.push_str(&date_time_with_ms(record.stamp_ns)),
            _ => out.push_str(&after[..=close]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Writes `record` to the console (a failed write is dropped: there is nowhere else to
/// say so).
pub(crate) fn write_console(record: &Record<'_>) {
    let console = console();
    let mut line = render(&console.format, record);
    line.push('\n');
    let _ = if console.stdout {
        std::io::stdout().lock().write_all(line.as_bytes())
    } else {
        std::io::stderr().lock().write_all(line.as_bytes())
    };
}

/// `YYYY-MM-DD HH:MM:SS.mmm` in UTC.
fn date_time_with_ms(stamp_ns: i64) -> String {
    let secs = stamp_ns.div_euclid(1_000_000_000);
    let ms = stamp_ns.rem_euclid(1_000_000_000) / 1_000_000;
    let (days, day_secs) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{ms:03}",
        day_secs / 3_600,
        day_secs % 3_600 / 60,
        day_secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::Severity;

    fn record() -> Record<'static> {
        Record {
            severity: Severity::Warn,
            name: "ns.talker",
            message: "low battery",
            file: "src/main.rs",
            function: "main",
            line: 42,
            stamp_ns: 1_700_000_000_012_345_678,
        }
    }

    #[test]
    fn the_default_is_rcutils_format() {
        assert_eq!(
            render(DEFAULT_FORMAT, &record()),
            "[WARN] [1700000000.012345678] [ns.talker]: low battery"
        );
    }

    #[test]
    fn every_rcutils_token_is_replaced_and_others_kept() {
        let line = render(
            "{severity}|{name}|{message}|{function_name}|{file_name}|{line_number}|{time_as_nanoseconds}|{date_time_with_ms}|{unknown}|{",
            &record(),
        );
        assert_eq!(
            line,
            "WARN|ns.talker|low battery|main|src/main.rs|42|1700000000012345678|2023-11-14 22:13:20.012|{unknown}|{"
        );
    }
}
