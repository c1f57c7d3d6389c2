//! `neardup dedup --html` in a real browser: headless Chromium (Debian's `chromium`,
//! which `.ci/run` installs) loads the page with no console message (no script error,
//! no blocked request: the page's policy forbids every request), the figures marked
//! with their `report.json` path equal the file's, the diff of a planted variant marks
//! exactly the words that differ, and a screenshot at 1280 px is not blank.

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("which").arg(name).output() {
            if out.status.success() {
                return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            }
        }
    }
    panic!("no chromium on PATH: install it (apt-get install -y chromium; .ci/run does)");
}

fn browser(page: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn unescape(s: &str) -> String {
    s.replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Checks every figure the page marks with a path (`data-key`) against the JSON report:
/// its `data-value` is the file's value, and the number shown is that value (to three
/// places for a fraction). Returns how many were checked.
fn figures_match(dom: &str, rep: &serde_json::Value) -> usize {
    let mut checked = 0;
    for piece in dom.split("data-key=\"").skip(1) {
        let (path, rest) = piece.split_once('"').unwrap();
        let value = unescape(
            rest.split("data-value=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap(),
        );
        let shown = unescape(rest.split_once('>').unwrap().1.split('<').next().unwrap());
        let mut v = rep;
        for k in path.split('.') {
            v = match k.parse::<usize>() {
                Ok(i) => &v[i],
                Err(_) => &v[k],
            };
        }
        let want = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_eq!(value, want, "{path}");
        match v.as_f64() {
            Some(f) if v.is_f64() => assert_eq!(shown, format!("{f:.3}"), "{path}"),
            _ => assert_eq!(shown, want, "{path}"),
        }
        checked += 1;
    }
    checked
}

/// The texts of the elements `<TAG ...>` directly after `from` up to `to`.
fn tag_texts(html: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    html.split(&open)
        .skip(1)
        .map(|s| s.split(&close).next().unwrap_or("").trim().to_string())
        .collect()
}

fn words(n: usize, seed: u64) -> Vec<String> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!("w{}", (x >> 33) % 5000)
        })
        .collect()
}

#[test]
fn the_html_report_in_headless_chromium() {
    check_report(false);
}

/// The same from a gzip input: the sample's texts come from a second pass over the
/// input, not from the places the first pass noted in a plain file.
#[test]
fn the_html_report_of_a_compressed_input() {
    check_report(true);
}

fn check_report(gzip: bool) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join(if gzip {
        "corpus.jsonl.gz"
    } else {
        "corpus.jsonl"
    });
    let base = words(1000, 1);
    let mut variant = base.clone();
    variant[60] = "plantedone".into();
    variant[700] = "plantedtwo".into();
    let mut lines = vec![
        serde_json::json!({"id": "base", "text": base.join(" "), "url": "http://a.example/1"}),
        serde_json::json!({"id": "variant", "text": variant.join(" "), "url": "http://b.example/1"}),
        serde_json::json!({"id": "copy", "text": base.join(" "), "url": "http://a.example/2"}),
        serde_json::json!({"id": "empty", "text": ""}),
    ]
    .into_iter()
    .map(|v| v.to_string())
    .collect::<Vec<_>>();
    lines.push("{not json".into());
    for i in 0..40 {
        lines.push(
            serde_json::json!({"id": format!("other{i}"), "text": words(150, 100 + i).join(" ")})
                .to_string(),
        );
    }
    let bytes = lines.join("\n") + "\n";
    if gzip {
        use std::io::Write;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(bytes.as_bytes()).unwrap();
        std::fs::write(&corpus, z.finish().unwrap()).unwrap();
    } else {
        std::fs::write(&corpus, bytes).unwrap();
    }
    let page = dir.path().join("report.html");
    let report = dir.path().join("report.json");
    let out = |name: &str| dir.path().join(name);
    let saved = [
        ("--clusters", out("clusters.jsonl")),
        ("--pairs", out("pairs.jsonl")),
        ("--rejects", out("rejects.jsonl")),
        ("--mirrors", out("mirrors.jsonl")),
        ("--report", report.clone()),
    ];
    // Settings other than the defaults on one of the two runs: `neardup report` must
    // take them from the report.
    let settings: &[&str] = if gzip {
        &[]
    } else {
        &[
            "--strategy",
            "henzinger",
            "--shingle",
            "6",
            "--text-field",
            "body",
        ]
    };
    if !gzip {
        let text = std::fs::read_to_string(&corpus).unwrap();
        std::fs::write(&corpus, text.replace("\"text\":", "\"body\":")).unwrap();
    }
    let mut dedup = Command::new(env!("CARGO_BIN_EXE_neardup"));
    dedup
        .args(["dedup", "-q", "--html"])
        .arg(&page)
        .arg(&corpus)
        .args(settings);
    for (flag, path) in &saved {
        dedup.arg(flag).arg(path);
    }
    assert!(dedup.status().unwrap().success());

    // `neardup report` makes the same page from the saved outputs and the input.
    let again = out("again.html");
    let mut report_cmd = Command::new(env!("CARGO_BIN_EXE_neardup"));
    report_cmd
        .arg("report")
        .arg(&corpus)
        .arg("--html")
        .arg(&again);
    for (flag, path) in &saved {
        report_cmd.arg(flag).arg(path);
    }
    let o = report_cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read(&again).unwrap() == std::fs::read(&page).unwrap(),
        "neardup report made another page"
    );

    let (dom, log) = browser(&page, &["--dump-dom"]);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not finish"
    );

    // Every figure marked with its report.json path holds the file's value.
    let rep: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let checked = figures_match(&dom, &rep);
    assert!(checked >= 15, "{checked} figures checked");
    assert_eq!(rep["accounting"]["read"], 45);
    assert!(
        dom.contains("data-code=\"malformed_json\">1<"),
        "the malformed line's code"
    );

    // Shared supershingles read as min-hash estimates of resemblance: k of 6
    // supershingles of 14 min-values (the defaults) estimate (k/6)^(1/14).
    let mut scales = 0;
    for piece in dom.split("data-resemblance=\"").skip(1) {
        let (k, rest) = piece.split_once('"').unwrap();
        let shown = rest[1..].split('<').next().unwrap();
        let k: f64 = k.parse().unwrap();
        assert_eq!(
            shown,
            format!("{:.3}", (k / 6.0).powf(1.0 / 14.0)),
            "k = {k}"
        );
        scales += 1;
    }
    assert!(scales > 0, "no resemblance scale on the page");

    // The planted variant: its diff against the representative marks the two words.
    let member = dom
        .split("data-member=\"variant\"")
        .nth(1)
        .expect("the variant is in the sample")
        .split("</div></div>")
        .next()
        .unwrap();
    assert_eq!(tag_texts(member, "ins"), ["plantedone", "plantedtwo"]);
    assert_eq!(
        tag_texts(member, "del"),
        [base[60].clone(), base[700].clone()]
    );
    // The exact copy: which rule merged it, and its measures.
    let copy = dom
        .split("data-member=\"copy\"")
        .nth(1)
        .expect("the copy is in the sample")
        .split("</div>")
        .next()
        .unwrap();
    assert!(copy.contains("exact copy · Charikar agreement"), "{copy}");
    assert!(
        copy.contains("estimated resemblance 1.000 · Jaccard 1.000"),
        "{copy}"
    );
    if !gzip {
        assert!(
            dom.contains("same-site: charikar(agreement&gt;=380)"),
            "the run's strategy shown"
        );
    }

    // A screenshot at 1280 px: decoded, many colours (text, charts), not a blank page.
    let shot = dir.path().join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    browser(
        &page,
        &[&arg, "--window-size=1280,2000", "--hide-scrollbars"],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.width, 1280);
    let px = info.line_size / info.width as usize;
    let colours: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    assert!(
        colours.len() > 50,
        "{} colours: a blank page",
        colours.len()
    );
}

/// `neardup eval --pairs --html`: the same checks on the eval page of labelled pairs
/// written here (planted near-duplicates, unrelated pages, and pairs labelled against
/// what the measures say, so that every algorithm has errors to show).
#[test]
fn the_eval_page_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.jsonl");
    let mut lines = Vec::new();
    for i in 0..30u64 {
        let a = words(600, 1000 + i);
        let mut b = a.clone();
        let near = i % 3 != 0;
        if near {
            b[100] = format!("changed{i}");
        } else {
            b = words(600, 5000 + i);
        }
        // Every fifth label contradicts the texts.
        let label = if (i % 5 == 0) != near { 1.0 } else { 0.0 };
        lines.push(
            serde_json::json!({"id": format!("p{i}"), "text_a": a.join(" "), "text_b": b.join(" "), "label": label})
                .to_string(),
        );
    }
    std::fs::write(&pairs, lines.join("\n") + "\n").unwrap();
    let (page, json) = (dir.path().join("eval.html"), dir.path().join("eval.json"));
    let status = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["eval", "--pairs"])
        .arg(&pairs)
        .arg("--html")
        .arg(&page)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let (dom, log) = browser(&page, &["--dump-dom"]);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not finish"
    );
    let rep: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let algorithms = rep["algorithms"].as_array().unwrap();
    assert!(figures_match(&dom, &rep) >= 2 + 7 * algorithms.len());
    // Each algorithm's section counts the errors the JSON counts.
    for a in algorithms {
        let name = a["name"].as_str().unwrap();
        let section = dom
            .split(&format!("data-algorithm=\"{name}\""))
            .nth(1)
            .unwrap()
            .split("</section>")
            .next()
            .unwrap();
        assert!(
            section.contains(&format!("false positives: {}<", a["fp"])),
            "{name}"
        );
        assert!(
            section.contains(&format!("false negatives: {}<", a["fn"])),
            "{name}"
        );
    }
    assert!(algorithms.iter().any(|a| a["fp"].as_u64() > Some(0)));
    assert!(algorithms.iter().any(|a| a["fn"].as_u64() > Some(0)));
    // The planted change of a near pair shown as an error: marked exactly.
    let p5 = dom
        .split("data-pair=\"p5\"")
        .nth(1)
        .expect("p5, labelled against its texts, is shown");
    let p5 = p5.split("</div></div>").next().unwrap();
    assert_eq!(tag_texts(p5, "ins"), ["changed5"]);
}
