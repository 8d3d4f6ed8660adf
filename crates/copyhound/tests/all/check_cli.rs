//! `copyhound check` (and `bench match`) run as a user would run them: a registered work,
//! pirated copies of one of its chapters as text and as GBK HTML, unrelated text, bad inputs.

use crate::common;

use std::time::Duration;

use common::Env;

/// 老残游记's contents and first two chapters (public domain; see the import crate's
/// `tests/data/README.md`).
const SAMPLE: &str = include_str!("../../../import/tests/data/laocanyouji_toc_1-2.txt");

/// An unrelated public-domain text: the opening of 三国演义 (see the matcher's lib docs).
const UNRELATED: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，\
    又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，\
    殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。";

const AD: &str = "【本站首发，最新章节请访问 www.example-pirate.com，手机用户请收藏】";

/// A fresh database with 老残游记 registered.
fn registered() -> Env {
    let env = Env::new();
    let work = env.file("老残游记.txt", SAMPLE.as_bytes());
    let out = env.run(&["works", "import", work.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env
}

/// `check --json` on `path`: succeeds, one object a line.
fn check_json(env: &Env, path: &std::path::Path) -> Vec<serde_json::Value> {
    let out = env.run(&["check", "--json", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
/// The paragraphs of chapter 2, in traditional script, with an ad every third paragraph.
fn pirated_chapter_two() -> Vec<String> {
    let start = SAMPLE.rfind("第二回").unwrap();
    let body = &SAMPLE[start..];
    let body = &body[body.find('\n').unwrap()..];
    let mut paragraphs = Vec::new();
    for (i, line) in body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i % 3 == 0 {
            paragraphs.push(AD.to_owned());
        }
        paragraphs.push(zhconv::zhconv(line, zhconv::Variant::ZhHant));
    }
    paragraphs
}

fn assert_chapter_two(matches: &[serde_json::Value], input: &std::path::Path) {
    assert_eq!(matches.len(), 1, "{matches:?}");
    let m = &matches[0];
    assert_eq!(m["input"], input.to_str().unwrap());
    assert_eq!(m["work_title"], "老残游记");
    assert_eq!(m["work_id"], 1);
    assert_eq!(m["chapter_index"], 2);
    assert!(
        m["chapter_title"]
            .as_str()
            .unwrap()
            .contains("历山山下古帝遗踪")
    );
    assert!(m["score"].as_f64().unwrap() > 0.9, "{m}");
    assert!(m["coverage"].as_f64().unwrap() > 0.9, "{m}");
    assert!(m["matched_chars"].as_u64().unwrap() > 1000, "{m}");
    assert!(!m["spans"].as_array().unwrap().is_empty());
}

#[test]
fn a_pirated_text_file_reports_the_copied_chapter() {
    let env = registered();
    let page = env.file("pirate.txt", pirated_chapter_two().join("\n").as_bytes());
    assert_chapter_two(&check_json(&env, &page), &page);

    let out = env.run(&["check", page.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.contains("老残游记"), "{stdout}");
    assert!(stdout.contains("chapter 2"), "{stdout}");
    assert!(stdout.contains("page:"), "{stdout}");
}

/// Chapter 2 pirated as a GBK HTML page (meta charset, navigation, an ad in the footer).
fn pirated_gbk_html() -> Vec<u8> {
    let paragraphs: String = pirated_chapter_two()
        .iter()
        .map(|p| format!("<p>{p}</p>\n"))
        .collect();
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"gbk\"><title>老殘遊記 第二回</title></head>\
         <body><div class=\"nav\"><a href=\"/\">首頁</a> <a href=\"/list\">目錄</a></div>\
         <h1>第二回</h1><div id=\"content\">{paragraphs}</div>\
         <div class=\"footer\">{AD}</div></body></html>"
    );
    let (bytes, _, unmappable) = encoding_rs::GBK.encode(&html);
    assert!(!unmappable);
    bytes.into_owned()
}

#[test]
fn a_pirated_gbk_html_page_reports_the_copied_chapter() {
    let env = registered();
    let page = env.file("pirate.html", &pirated_gbk_html());
    assert_chapter_two(&check_json(&env, &page), &page);
}

#[test]
fn a_directory_is_checked_recursively_in_path_order_with_a_summary() {
    let env = registered();
    std::fs::create_dir_all(env.dir.path().join("site/b")).unwrap();
    let html = env.file("site/b/pirate.html", &pirated_gbk_html());
    let text = env.file("site/a.txt", pirated_chapter_two().join("\n").as_bytes());
    env.file("site/b/other.txt", UNRELATED.as_bytes());
    env.file("site/notes.md", b"not a page");
    let dir = env.dir.path().join("site");
    for jobs in ["1", "3"] {
        let out = env.run(&["check", "--json", "--jobs", jobs, dir.to_str().unwrap()]);
        assert!(out.status.success());
        let matches: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(matches.len(), 2, "{matches:?}");
        // a.txt sorts before b/other.txt and b/pirate.html.
        assert_chapter_two(&matches[..1], &text);
        assert_chapter_two(&matches[1..], &html);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("checked 3 pages") && stderr.contains("pages/s"),
            "{stderr}"
        );
    }
}

/// A real HTTP server on 127.0.0.1 (ephemeral port) serving `page` as GBK HTML at
/// `/book/2.html`, on its own thread; it stops when dropped, and after two minutes in any
/// case.
struct PirateSite {
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PirateSite {
    fn start(page: Vec<u8>) -> Self {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new().route(
                    "/book/2.html",
                    axum::routing::get(move || async move {
                        (
                            [(axum::http::header::CONTENT_TYPE, "text/html; charset=gbk")],
                            page,
                        )
                    }),
                );
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = tokio::time::timeout(Duration::from_secs(120), stopped).await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        PirateSite {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/book/2.html", self.addr)
    }
}

impl Drop for PirateSite {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_url_on_this_machine_is_checked_with_allow_private() {
    let env = registered();
    let site = PirateSite::start(pirated_gbk_html());
    let url = site.url();
    let out = env.run(&["check", "--json", "--allow-private", &url]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let matches: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(matches.len(), 1, "{matches:?}");
    assert_eq!(matches[0]["input"], url.as_str());
    assert_eq!(matches[0]["chapter_index"], 2);
    assert!(matches[0]["coverage"].as_f64().unwrap() > 0.9);
}

#[test]
fn a_url_on_this_machine_is_refused_without_allow_private() {
    let env = registered();
    let site = PirateSite::start(pirated_gbk_html());
    let out = env.run(&["check", "--json", &site.url()]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refused to fetch 127.0.0.1"), "{stderr}");
    assert!(stderr.contains("--allow-private"), "{stderr}");
    assert!(
        stderr.contains("1 of 1 inputs could not be read"),
        "{stderr}"
    );
}

#[test]
fn unrelated_text_matches_nothing_and_succeeds() {
    let env = registered();
    let page = env.file("other.txt", UNRELATED.as_bytes());
    assert!(check_json(&env, &page).is_empty());
    let out = env.run(&["check", page.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no registered work found"));
}

#[test]
fn a_missing_file_fails_with_its_name() {
    let env = registered();
    let missing = env.dir.path().join("nowhere.txt");
    let out = env.run(&["check", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nowhere.txt"), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
}

#[test]
fn hostile_pages_are_read_or_refused_with_the_limit_they_broke() {
    let env = registered();
    // 200,000 nested divs around the copied chapter: flattened and read.
    let copy = pirated_chapter_two().join("<br>");
    let nested = env.file(
        "nested.html",
        testkit::hostile::nested("div", 200_000, &copy).as_bytes(),
    );
    assert_chapter_two(&check_json(&env, &nested), &nested);
    // An element bomb: refused, naming the limit.
    let bomb = env.file("bomb.html", testkit::hostile::elements(5 << 20).as_bytes());
    let out = env.run(&["check", bomb.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("more than 300000 elements (limit max_elements)"),
        "{stderr}"
    );
}

#[test]
fn a_bad_url_fails() {
    let env = registered();
    let out = env.run(&["check", "http://exa mple.com/x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad url"));
}

#[test]
fn bench_match_times_a_directory_of_pages() {
    let env = registered();
    std::fs::create_dir(env.dir.path().join("pages")).unwrap();
    env.file(
        "pages/pirate.txt",
        pirated_chapter_two().join("\n").as_bytes(),
    );
    env.file("pages/other.txt", UNRELATED.as_bytes());
    let pages = env.dir.path().join("pages");
    let out = env.run(&[
        "bench",
        "match",
        "--json",
        "--input",
        pages.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figures["pages"], 2);
    assert_eq!(figures["matches"], 1);
    assert_eq!(figures["chapters_indexed"], 2);
}

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly() {
    // `copyhound check DIR | head -1`: once the reader has closed the pipe, the run ends
    // with success instead of a panic on the broken pipe.
    let env = registered();
    std::fs::create_dir_all(env.dir.path().join("pages")).unwrap();
    for i in 0..20 {
        env.file(&format!("pages/{i:02}.txt"), UNRELATED.as_bytes());
    }
    env.run_unread(&["check", env.dir.path().join("pages").to_str().unwrap()]);
}
