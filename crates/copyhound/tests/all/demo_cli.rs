//! `copyhound demo` as a process: cases appear for every disguise on its pirate site and for
//! none of the innocent pages or the licensed mirror, the printed login works, SIGTERM stops
//! it cleanly, and a second run on the same data directory reuses its works and sites.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Child, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long the first case may take (the target is a minute on a release build; tests run
/// a debug build on a shared machine).
const CASES_WITHIN: Duration = Duration::from_secs(180);
/// How long a SIGTERM may take to stop it.
const STOPS_WITHIN: Duration = Duration::from_secs(30);

fn get(addr: &str, path: &str) -> String {
    common::http(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

/// The `href`s of a page, in order.
fn links(page: &str) -> Vec<String> {
    page.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// A running demo: what it printed on the way up, and its stderr read to the end in the
/// background (so that its logs never fill the pipe).
struct Demo {
    child: Child,
    ui: String,
    site: String,
    site_ids: String,
    password: String,
    banner: String,
    rest: Option<JoinHandle<String>>,
}

impl Demo {
    fn start(data: &Path) -> Demo {
        let mut child = common::copyhound("sqlite://unused.db")
            .args(["demo", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let (mut ui, mut site, mut site_ids, mut password) = (None, None, None, None);
        let banner = common::read_until(&mut stderr, Duration::from_secs(120), |line| {
            if let Some(rest) = line.strip_prefix("demo pirate site: http://") {
                site = Some(rest.split('/').next().unwrap().to_owned());
                let ids: Vec<&str> = rest
                    .split("(site ")
                    .skip(1)
                    .filter_map(|s| s.split(')').next())
                    .collect();
                site_ids = Some(ids.join(","));
            }
            if let Some(rest) = line.split("with the password ").nth(1) {
                password = Some(rest.trim().to_owned());
            }
            if let Some(rest) = line.strip_prefix("open http://") {
                ui = Some(rest.split('/').next().unwrap().to_owned());
            }
            ui.is_some()
        });
        let rest = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stderr.read_to_string(&mut rest);
            rest
        });
        Demo {
            child,
            ui: ui.unwrap(),
            site: site.expect("the pirate site's address"),
            site_ids: site_ids.unwrap(),
            password: password.expect("a password"),
            banner,
            rest: Some(rest),
        }
    }

    /// SIGTERM, then a clean exit within [`STOPS_WITHIN`]; returns the rest of stderr.
    fn stop(mut self) -> String {
        common::terminate(&mut self.child, STOPS_WITHIN);
        let rest = self.rest.take().unwrap().join().unwrap();
        assert!(!rest.contains("panicked"), "{rest}");
        rest
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        // A failed assertion must not leave the process running.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn json(db: &str, args: &[&str]) -> Value {
    let out = common::copyhound(db).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `reports export`: one row per (page, chapter) match.
fn matches(db: &str) -> Vec<Value> {
    let out = common::copyhound(db)
        .args(["reports", "export"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    common::lines(&String::from_utf8(out.stdout).unwrap())
}

/// Whether every crawl is done, and there are `want` of them.
fn crawls_done(db: &str, want: usize) -> bool {
    let crawls = json(db, &["crawls", "list", "--json"]);
    let crawls = crawls.as_array().unwrap();
    crawls.len() == want && crawls.iter().all(|c| c["status"] == "done")
}

fn sorted_ids(v: &Value) -> BTreeSet<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn demo_finds_every_disguise_spares_the_innocent_and_reuses_its_data_on_a_second_run() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("demo");
    let db = format!("sqlite://{}/copyhound.db", data.display());

    let started = Instant::now();
    let demo = Demo::start(&data);
    assert!(
        demo.banner.contains("3 sample works registered (3 new)"),
        "{}",
        demo.banner
    );
    let pirate = links(&get(&demo.site, "/"));
    let mirror = links(&get(&demo.site, "/mirror/"));
    for want in ["/read/verbatim.html", "/read/quotation.html", "/about.html"] {
        assert!(pirate.iter().any(|l| l == want), "{want}: {pirate:?}");
    }
    assert_eq!(mirror.len(), 2, "{mirror:?}");
    let site_url = |path: &str| format!("http://{}{path}", demo.site);
    let port = demo.site.rsplit(':').next().unwrap();
    let mirror_url = |path: &str| format!("http://localhost:{port}{path}");
    let (copies, innocent): (Vec<&String>, Vec<&String>) = pirate.iter().partition(|p| {
        !(p.ends_with("other-novel.html") || p.ends_with("quotation.html") || *p == "/about.html")
    });
    assert!(copies.len() >= 8, "{copies:?}");

    // Cases: every disguised copy in one, the licensed mirror's matches in none.
    let mut first_case = None;
    loop {
        let rows = matches(&db);
        if first_case.is_none() && rows.iter().any(|r| !r["case_id"].is_null()) {
            first_case = Some(started.elapsed());
        }
        let by_url: HashMap<&str, Vec<&Value>> = rows.iter().fold(HashMap::new(), |mut m, r| {
            m.entry(r["url"].as_str().unwrap()).or_default().push(r);
            m
        });
        let found = |url: &str, licensed: bool| {
            by_url.get(url).is_some_and(|rows| {
                rows.iter()
                    .any(|r| r["licensed"] == licensed && r["case_id"].is_null() == licensed)
            })
        };
        let copies_found = copies.iter().all(|p| found(&site_url(p), false));
        let mirror_found = mirror.iter().all(|p| found(&mirror_url(p), true));
        if copies_found && mirror_found && crawls_done(&db, 2) {
            for p in &innocent {
                assert!(
                    !by_url.contains_key(site_url(p).as_str()),
                    "{p} matched: {:?}",
                    by_url[site_url(p).as_str()]
                );
            }
            break;
        }
        assert!(
            started.elapsed() < CASES_WITHIN,
            "after {CASES_WITHIN:?}: copies found {copies_found}, mirror found \
             {mirror_found}; matches: {rows:#?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!(
        "first case after {:?}, all after {:?}",
        first_case.unwrap(),
        started.elapsed()
    );
    let cases = json(&db, &["cases", "list", "--json"]);
    let case_ids = sorted_ids(&cases);
    assert!(!case_ids.is_empty());
    for c in cases.as_array().unwrap() {
        assert_eq!(c["site"].as_str().unwrap(), demo.site, "{c}");
    }
    // Every page the crawl fetched: innocent ones too (they were read and spared).
    let crawls = json(&db, &["crawls", "list", "--json"]);
    let pages: u64 = crawls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pages"].as_u64().unwrap())
        .sum();
    assert!(
        pages >= (pirate.len() + mirror.len() + 2) as u64,
        "{pages} pages: {crawls:#}"
    );
    // The same cases through the JSON API, with a token issued while the demo runs.
    let token = String::from_utf8(
        common::copyhound(&db)
            .args(["users", "token", "demo", "--name", "demo test"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let token = token.lines().next().unwrap().trim().to_owned();
    let answer = common::http(
        &demo.ui,
        &format!(
            "GET /api/v1/cases?limit=500 HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
             Connection: close\r\n\r\n",
            demo.ui
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let api_ids: BTreeSet<i64> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(api_ids, case_ids, "{body}");
    let (first_ids, first_password) = (demo.site_ids.clone(), demo.password.clone());
    let rest = demo.stop();
    assert!(rest.contains("workers stopped"), "{rest}");

    // The second run: same works, same sites, a new password that signs in.
    let demo = Demo::start(&data);
    assert!(
        demo.banner.contains("3 sample works registered (0 new)"),
        "{}",
        demo.banner
    );
    assert_eq!(demo.site_ids, first_ids, "{}", demo.banner);
    assert_ne!(demo.password, first_password);
    let answer = common::login(&demo.ui, "demo", &demo.password);
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    let started = Instant::now();
    while !crawls_done(&db, 4) {
        assert!(
            started.elapsed() < CASES_WITHIN,
            "the second run's crawls did not finish"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(
        json(&db, &["works", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        json(&db, &["sites", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        sorted_ids(&json(&db, &["cases", "list", "--json"])),
        case_ids
    );
    demo.stop();
}
