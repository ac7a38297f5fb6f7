//! The HTML report as a user sees it: rendered by headless Chromium, it must not be a
//! blank page, must log no script error to the console, and must have every section with
//! something drawn in it; for the pipeline demo, and for real ROS 2 and ROS 1 traces. The
//! multi-process pipeline's timeline rows, as laid out, are named by node and process.

mod cli_support;
use cli_support::{kairos, run_ok};
use kairos_testkit::require_tool;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SECTIONS: [&str; 7] = [
    "summary",
    "timeline",
    "callbacks",
    "queues",
    "timers",
    "chain",
    "clock",
];

/// Headless Chromium with the flags this machine's closed network needs.
fn chromium(profile: &Path) -> Command {
    let mut cmd = Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

fn run_chromium(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("cannot start chromium");
    assert!(out.status.success(), "chromium failed: {out:?}");
    out
}

/// Console messages that say a script failed.
fn console_errors(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .map(str::to_owned)
        .collect()
}

/// Renders `html`, checks the DOM and the pixels, and returns the DOM.
fn render(html: &Path) -> String {
    require_tool("chromium", "chromium");
    let scratch = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.canonicalize().unwrap().display());

    let dom = run_chromium(
        chromium(&scratch.path().join("dom"))
            .arg("--dump-dom")
            .arg(&url),
    );
    let errors = console_errors(&dom.stderr);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let dom_text = String::from_utf8_lossy(&dom.stdout).into_owned();
    for id in SECTIONS {
        let start = dom_text
            .find(&format!("<section id=\"{id}\">"))
            .unwrap_or_else(|| panic!("section {id} missing from {}", html.display()));
        let end = dom_text[start..]
            .find("</section>")
            .map(|e| start + e)
            .unwrap();
        let body = &dom_text[start..end];
        assert!(
            body.contains("<svg") || body.contains("<table") || body.contains("<p>"),
            "section {id} is empty: {body}"
        );
    }

    let png = scratch.path().join("page.png");
    let shot = run_chromium(
        chromium(&scratch.path().join("shot"))
            .arg("--window-size=1300,1600")
            .arg(format!("--screenshot={}", png.display()))
            .arg(&url),
    );
    let errors = console_errors(&shot.stderr);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let (inked, colors) = ink(&png);
    assert!(
        inked > 0.02,
        "the page looks blank: {:.2} % of its pixels are not background",
        inked * 100.0
    );
    assert!(
        colors >= 4,
        "the page has {colors} colors: nothing is drawn"
    );
    dom_text
}

/// The share of pixels that are not white, and how many distinct saturated colors the
/// page shows (charts draw in color; text is grey).
fn ink(png: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let mut inked = 0usize;
    let mut colors = std::collections::HashSet::new();
    let total = pixels.len() / channels;
    for px in pixels.chunks(channels) {
        let (r, g, b) = (px[0], px[1], px[2]);
        if (r, g, b) != (255, 255, 255) {
            inked += 1;
        }
        let (max, min) = (r.max(g).max(b), r.min(g).min(b));
        if max - min > 60 {
            colors.insert((r / 32, g / 32, b / 32));
        }
    }
    (inked as f64 / total as f64, colors.len())
}

#[test]
fn the_pipeline_report_renders_with_every_section() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        kairos()
            .args(["demo", "pipeline", "--quick", "--out"])
            .arg(dir.path()),
    );
    let dom = render(&dir.path().join("pipeline/report.html"));
    assert!(
        dom.contains("class=\"slow\""),
        "the slowest runs are outlined"
    );
    assert!(dom.contains("planner subscription /pipeline/filtered"));
    assert!(
        dom.contains("class=\"stages\""),
        "the dominant chain is drawn"
    );
}

/// One timeline row's label as Chromium laid it out.
#[derive(Debug)]
struct RenderedRow {
    title: String,
    detail: String,
    /// Both lines drawn, each whole inside the label column (not under the plot).
    whole: bool,
    /// Greyed as the runtime's own.
    internal: bool,
}

/// Lays `html` out in Chromium and reads each timeline row's label back from the
/// layout: a copy of the page with a script that, once the page is laid out, writes
/// every row's label lines, and whether each is drawn whole left of the plot, into the
/// DOM, which `--dump-dom` prints.
fn rendered_rows(html: &Path) -> Vec<RenderedRow> {
    require_tool("chromium", "chromium");
    const PROBE: &str = r#"<script>
const svg = document.querySelector('#timeline svg');
const box = svg.getBoundingClientRect();
const plot = svg.querySelector('g[transform]');
const column = box.left + parseFloat(plot.getAttribute('transform').match(/translate\(([0-9.]+)/)[1]);
const rows = [...svg.querySelectorAll('g.lane')].map(g => {
  const lines = [...g.querySelectorAll('text')];
  const whole = lines.every(t => {
    const r = t.getBoundingClientRect();
    return r.width > 0 && r.left >= box.left && r.right <= column && r.bottom <= box.bottom;
  });
  return {title: lines[0].textContent, detail: lines[1].textContent, whole,
          internal: g.classList.contains('internal')};
});
const out = document.createElement('pre');
out.id = 'rendered-rows';
out.textContent = JSON.stringify(rows);
document.body.appendChild(out);
</script>"#;
    let scratch = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(html).unwrap();
    let probed = scratch.path().join("probed.html");
    std::fs::write(&probed, page.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let dom = run_chromium(
        chromium(&scratch.path().join("profile"))
            .arg("--window-size=1300,1600")
            .arg("--dump-dom")
            .arg(format!("file://{}", probed.display())),
    );
    let errors = console_errors(&dom.stderr);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let start = dom
        .find("<pre id=\"rendered-rows\">")
        .expect("the probe wrote no rows")
        + "<pre id=\"rendered-rows\">".len();
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    rows.iter()
        .map(|r| RenderedRow {
            title: r["title"].as_str().unwrap().to_owned(),
            detail: r["detail"].as_str().unwrap().to_owned(),
            whole: r["whole"].as_bool().unwrap(),
            internal: r["internal"].as_bool().unwrap(),
        })
        .collect()
}

#[test]
fn the_multi_process_pipeline_report_names_rows_by_process_and_node() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        kairos()
            .args(["demo", "pipeline", "--processes", "--quick", "--out"])
            .arg(dir.path()),
    );
    let html = dir.path().join("pipeline-processes/report.html");
    render(&html);
    let rows = rendered_rows(&html);
    let mut pids = std::collections::BTreeSet::new();
    for node in [
        "/pipeline/source",
        "/pipeline/filter",
        "/pipeline/planner",
        "/pipeline/printer",
    ] {
        let row = rows
            .iter()
            .find(|r| r.title == node)
            .unwrap_or_else(|| panic!("no row named {node}: {rows:#?}"));
        assert!(row.whole, "{node}'s label is cut or hidden: {row:?}");
        assert!(!row.internal, "{row:?}");
        let pid = row
            .detail
            .strip_prefix("kairos pid ")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{node}: no process in {:?}", row.detail));
        assert!(row.detail.contains(" tid "), "{row:?}");
        pids.insert(pid.to_owned());
    }
    assert_eq!(pids.len(), 4, "four processes: {rows:#?}");
    // The runtime's own rows, if any ran, are marked and come after every user row.
    let first_internal = rows.iter().position(|r| r.internal).unwrap_or(rows.len());
    assert!(
        rows[first_internal..]
            .iter()
            .all(|r| r.internal && r.title.starts_with("runtime: ")),
        "{rows:#?}"
    );
}

fn real_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

#[test]
fn reports_of_real_ros_traces_render_with_every_section() {
    for (trace, expect) in [
        ("ros2-sync-one-to-one", "sync_one_to_one"),
        ("ros1-pub-sub-10", "class=\"drop\""),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let html = dir.path().join("report.html");
        run_ok(
            kairos()
                .args(["trace", "report", "--html"])
                .arg(&html)
                .arg(real_trace(trace)),
        );
        let dom = render(&html);
        assert!(dom.contains(expect), "{trace}: {expect} not in the report");
    }
}

#[test]
fn clock_stalls_are_marked_on_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    run_ok(
        kairos()
            .args(["demo", "sim-clock-stall", "--trace"])
            .arg(&trace),
    );
    let html = dir.path().join("report.html");
    run_ok(
        kairos()
            .args(["trace", "report", "--html"])
            .arg(&html)
            .arg(&trace),
    );
    let dom = render(&html);
    assert!(dom.contains("class=\"stall\""), "stalls are drawn");
    assert!(dom.contains("stalled"), "and listed");
}

/// The checks above can fail: a blank page, and a page whose script throws, are caught.
#[test]
fn the_render_check_catches_a_blank_page_and_a_script_error() {
    let dir = tempfile::tempdir().unwrap();
    let sections: String = SECTIONS
        .iter()
        .map(|id| format!("<section id=\"{id}\"><p>x</p></section>"))
        .collect();
    let cases = [
        (
            "blank.html",
            format!("<html><body>{sections}</body></html>"),
            "blank",
        ),
        (
            "throws.html",
            format!("<html><body><script>no_such_function()</script>{sections}</body></html>"),
            "console errors",
        ),
        (
            "missing.html",
            "<html><body><p>x</p></body></html>".to_string(),
            "missing",
        ),
    ];
    for (name, page, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, page).unwrap();
        let failure = std::panic::catch_unwind(|| render(&path))
            .expect_err(&format!("{name} passed the render check"));
        let message = failure
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains(expected), "{name}: {message}");
    }
}
