//! `copyhound demo`'s world: public-domain sample works compiled in, a pirate site and a
//! licensed mirror built from them with each disguise pirates use, the small HTTP server
//! that serves them on 127.0.0.1, and the set-up that registers the works, watches both
//! sites, licenses the mirror's domain and queues their crawls, so that a fresh store shows
//! real cases within a minute.
//!
//! The pirate pages come from [`matcher::quality`] (the generator `copyhound bench quality`
//! measures the matcher with), one page of each [`Case`] but the held-out chapter (every
//! sample chapter is registered here):
//!
//! | path | what | expected |
//! |---|---|---|
//! | `/read/verbatim.html`, `ads`, `traditional`, `homophones`, `edits`, `merged`, `partial` | a registered chapter in that disguise | a case |
//! | `/read/split-N.html` | one of the pages a chapter was cut into | a case |
//! | `/read/other-novel.html`, `quotation.html`, `/about.html` | an unregistered novel, a short quotation, the site's own text | no match |
//! | `/mirror/N.html` on `localhost` | registered chapters on a licensed domain | matches, no case |
//!
//! The mirror is the same server reached as `localhost` rather than `127.0.0.1`: another
//! host, so another site, whose domain the demo licenses.
//!
//! ```no_run
//! # async fn demo(store: &store::Store, importer: &import::Importer) -> pipeline::Result<()> {
//! use pipeline::demo;
//!
//! demo::register_sample(store, importer).await?;
//! let listener = demo::bind_site(store).await?;
//! let site = demo::SiteServer::start(listener, demo::demo_pages()?)?;
//! let sites = demo::watch_demo_sites(store, &crawler::CrawlSettings::default(), site.addr()).await?;
//! // ... run the workers: the crawls are queued; then:
//! site.stop().await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use askama::Template;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use crawler::CrawlSettings;
use import::{ImportOptions, ImportReport, Importer};
use matcher::quality::{Case, Corpus, CorpusChapter, pirate_pages};
use store::{LicensedDomains, NewSite, Role, Site, SiteSettings, Store, SuspectSites, Users};

use crate::error::store_err;
use crate::{Error, Result};

/// A public-domain work compiled into the binary (sources in `crates/pipeline/demo/README.md`).
#[derive(Debug, Clone, Copy)]
pub struct SampleWork {
    /// Its file name under `crates/pipeline/demo/`.
    pub file: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its author.
    pub author: &'static str,
    /// Its text (UTF-8, chapters on heading lines).
    pub text: &'static str,
    /// Registered (protected) by the demo; the others are the innocent pages' novels.
    pub registered: bool,
}

/// The demo's works: about 115 KB in all, so that the binary stays small.
pub const SAMPLE: [SampleWork; 5] = [
    SampleWork {
        file: "sanguoyanyi_1-3.txt",
        title: "三国演义",
        author: "罗贯中",
        text: include_str!("../demo/sanguoyanyi_1-3.txt"),
        registered: true,
    },
    SampleWork {
        file: "xiyouji_1.txt",
        title: "西游记",
        author: "吴承恩",
        text: include_str!("../demo/xiyouji_1.txt"),
        registered: true,
    },
    SampleWork {
        file: "alice_1-2.txt",
        title: "Alice's Adventures in Wonderland",
        author: "Lewis Carroll",
        text: include_str!("../demo/alice_1-2.txt"),
        registered: true,
    },
    SampleWork {
        file: "shuihuquanzhuan_1.txt",
        title: "水浒全传",
        author: "施耐庵",
        text: include_str!("../demo/shuihuquanzhuan_1.txt"),
        registered: false,
    },
    SampleWork {
        file: "frankenstein_1.txt",
        title: "Frankenstein",
        author: "Mary Shelley",
        text: include_str!("../demo/frankenstein_1.txt"),
        registered: false,
    },
];

/// The pirate site's name in the store (how a later run finds it again).
pub const PIRATE_SITE: &str = "Demo pirate site";
/// The licensed mirror's name in the store.
pub const MIRROR_SITE: &str = "Demo licensed mirror";
/// The mirror's host, licensed for every work.
pub const MIRROR_HOST: &str = "localhost";
/// The admin account the demo signs in with.
pub const DEMO_USER: &str = "demo";

/// The generator's seed: the same pages on every run and machine.
const SEED: u64 = 14;
/// Larger than any sample chapter: the generator's chapters are the headings' chapters, as
/// the import cuts them.
const WHOLE_CHAPTERS: usize = 1 << 20;
/// Pages of the mirror: the first registered chapters, verbatim.
const MIRROR_PAGES: usize = 2;

/// What a page of the demo sites is, so that a test (and a curious newcomer) can tell what
/// copyhound should make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// A table of contents.
    Index,
    /// A registered chapter in a pirate's disguise: must join a case.
    Copy(Case),
    /// Text that copies nothing registered: must not match.
    Innocent(Case),
    /// A registered chapter on the licensed mirror: matches, never a case.
    Licensed,
}

/// One page a [`SiteServer`] serves.
#[derive(Debug, Clone)]
pub struct SitePage {
    /// Its path, from `/`.
    pub path: String,
    /// What it is.
    pub kind: PageKind,
    /// The HTML served (any encoding: it is sent as it is).
    pub body: Vec<u8>,
}

#[derive(Template)]
#[template(path = "demo/page.html")]
struct PageHtml<'a> {
    lang: &'a str,
    site: &'a str,
    title: &'a str,
    home: &'a str,
    home_label: &'a str,
    lines: Vec<&'a str>,
}

#[derive(Template)]
#[template(path = "demo/index.html")]
struct IndexHtml<'a> {
    lang: &'a str,
    title: &'a str,
    links: &'a [(String, String)],
}

fn render(template: &impl Template) -> Result<Vec<u8>> {
    template
        .render()
        .map(String::into_bytes)
        .map_err(Error::Render)
}

/// A table of contents linking `links` (`(href, text)`), in that order.
///
/// # Errors
/// [`Error::Render`] if the template fails (it has no fallible parts).
pub fn index_page(title: &str, links: &[(String, String)]) -> Result<Vec<u8>> {
    render(&IndexHtml {
        lang: lang(title),
        title,
        links,
    })
}

fn lang(text: &str) -> &'static str {
    if text
        .chars()
        .take(500)
        .any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))
    {
        "zh"
    } else {
        "en"
    }
}

fn text_page(site: &str, title: &str, home: &str, text: &str) -> Result<Vec<u8>> {
    let lang = lang(text);
    render(&PageHtml {
        lang,
        site,
        title,
        home,
        home_label: if lang == "zh" {
            "返回目录"
        } else {
            "Contents"
        },
        lines: text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect(),
    })
}

/// The sample cut into chapters as the generator sees them: every chapter of a registered
/// work registered (none held out), the others foreign.
fn sample_corpus() -> Corpus {
    let mut corpus = Corpus::new();
    for w in SAMPLE {
        if w.registered {
            corpus.add_registered(w.title, w.text, WHOLE_CHAPTERS);
        } else {
            corpus.add_foreign(w.title, w.text, WHOLE_CHAPTERS);
        }
    }
    // The demo registers whole works, held-out chapters included.
    let held_out = std::mem::take(&mut corpus.held_out);
    corpus.registered.extend(held_out);
    corpus.registered.sort_by_key(|c| c.id);
    corpus
}

/// A page's file name: what it is, so that the table of contents reads as a tour.
fn slug(case: Case) -> Option<&'static str> {
    Some(match case {
        Case::Verbatim => "verbatim",
        Case::Ads => "ads",
        Case::Traditional => "traditional",
        Case::Homophones => "homophones",
        Case::Edits => "edits",
        Case::Split => "split",
        Case::Merged => "merged",
        Case::Partial => "partial",
        Case::LookAlike => "look-alike",
        Case::OtherNovel => "other-novel",
        Case::Quotation => "quotation",
        // Needs a chapter of a registered work that is not registered: none here.
        Case::OtherChapter => return None,
        // Written by a script as the quality bench renders it; the demo's templates write
        // plain pages.
        Case::Script => return None,
    })
}

/// Every page of the pirate site (on `127.0.0.1`) and of the licensed mirror (under
/// `/mirror/`, crawled as `localhost`); see the [module docs](self).
///
/// # Errors
/// [`Error::Render`] if a template fails.
pub fn demo_pages() -> Result<Vec<SitePage>> {
    let corpus = sample_corpus();
    let mut pages = Vec::new();
    let mut links = Vec::new();
    let mut split = 0;
    let mut taken = std::collections::HashSet::new();
    let mut split_chapter: Option<String> = None;
    // Up to four pages of each case, so that a split chapter comes with all its pages (2 to
    // 4); of the other cases the first page is enough.
    for p in pirate_pages(&corpus, 4, SEED) {
        let Some(slug) = slug(p.case) else { continue };
        if p.case == Case::Split {
            let chapter = p.origin.split(" page ").next().unwrap_or_default();
            if split_chapter.get_or_insert_with(|| chapter.to_owned()) != chapter {
                continue;
            }
        } else if !taken.insert(p.case) {
            continue;
        }
        let name = if p.case == Case::Split {
            split += 1;
            format!("{slug}-{split}")
        } else {
            slug.to_owned()
        };
        let path = format!("/read/{name}.html");
        let kind = if p.case.is_evasion() {
            PageKind::Copy(p.case)
        } else {
            PageKind::Innocent(p.case)
        };
        let title = format!("{}: {}", p.case.name(), p.origin);
        let body = text_page("盗版小说网", &title, "/", &p.text)?;
        links.push((path.clone(), title));
        pages.push(SitePage { path, kind, body });
    }
    pages.push(SitePage {
        path: "/about.html".to_owned(),
        kind: PageKind::Innocent(Case::OtherNovel),
        body: text_page("盗版小说网", "关于本站", "/", ABOUT)?,
    });
    links.push(("/about.html".to_owned(), "关于本站".to_owned()));
    pages.push(SitePage {
        path: "/".to_owned(),
        kind: PageKind::Index,
        body: index_page("盗版小说网 · 全本小说免费阅读", &links)?,
    });

    let mut links = Vec::new();
    for (i, c) in mirror_chapters(&corpus).into_iter().enumerate() {
        let path = format!("/mirror/{}.html", i + 1);
        let title = format!("{} {}", c.work_title, c.title);
        let body = text_page("正版授权书城", &title, "/mirror/", &c.text)?;
        links.push((path.clone(), title));
        pages.push(SitePage {
            path,
            kind: PageKind::Licensed,
            body,
        });
    }
    pages.push(SitePage {
        path: "/mirror/".to_owned(),
        kind: PageKind::Index,
        body: index_page("正版授权书城", &links)?,
    });
    Ok(pages)
}

/// The first chapters of the first registered work.
fn mirror_chapters(corpus: &Corpus) -> Vec<&CorpusChapter> {
    corpus.registered.iter().take(MIRROR_PAGES).collect()
}

/// The pirate site's own text: copies nothing.
const ABOUT: &str = "本站为copyhound演示而设，页面均由程序生成。\n\
    本站所有小说均来自网友上传，仅供交流学习，如有侵权请联系删除。\n\
    联系邮箱：admin@pirate.invalid　　备案号：无";

/// A running demo site: serves its pages until [`SiteServer::stop`]. Paths not among them
/// are 404 (`/robots.txt` too: crawling is allowed).
#[derive(Debug)]
pub struct SiteServer {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl SiteServer {
    /// Serves `pages` on `listener`, each at its path.
    ///
    /// # Errors
    /// The listener's address cannot be read.
    pub fn start(listener: tokio::net::TcpListener, pages: Vec<SitePage>) -> Result<SiteServer> {
        let addr = listener
            .local_addr()
            .map_err(|e| Error::task("the demo site", e))?;
        let by_path: Arc<HashMap<String, Vec<u8>>> =
            Arc::new(pages.into_iter().map(|p| (p.path, p.body)).collect());
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let by_path = Arc::clone(&by_path);
            async move { page(&by_path, &uri) }
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(SiteServer { addr, stop, task })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops it, waiting for requests in flight.
    ///
    /// # Errors
    /// [`Error::Task`] if the server failed.
    pub async fn stop(self) -> Result<()> {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::task("the demo site", e)),
            Err(e) => Err(Error::task("the demo site", e)),
        }
    }
}

fn page(by_path: &HashMap<String, Vec<u8>>, uri: &Uri) -> Response {
    // A path ending `.json` is a content endpoint a script-written page fetches.
    let content_type = if uri.path().ends_with(".json") {
        "application/json"
    } else {
        "text/html"
    };
    match by_path.get(uri.path()) {
        Some(body) => ([(header::CONTENT_TYPE, content_type)], body.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Registers the [`SAMPLE`]'s registered works. A work stored already (a second run) is
/// found by its text and left as it is.
///
/// # Errors
/// [`Error::Import`] when the store fails.
pub async fn register_sample(store: &Store, importer: &Importer) -> Result<Vec<ImportReport>> {
    let mut reports = Vec::new();
    for w in SAMPLE.iter().filter(|w| w.registered) {
        let options = ImportOptions {
            title: Some(w.title.to_owned()),
            author: Some(w.author.to_owned()),
        };
        let report = importer
            .import_bytes(store, w.file, w.text.as_bytes().to_vec(), &options, &())
            .await
            .map_err(Error::Import)?;
        reports.push(report);
    }
    Ok(reports)
}

/// The demo site's listener on 127.0.0.1: on the port the pirate site had in an earlier
/// run, so that it stays the same site with the same cases, or on any free port when there
/// was none or that port is taken.
///
/// # Errors
/// A database failure, or no port can be bound.
pub async fn bind_site(store: &Store) -> Result<tokio::net::TcpListener> {
    let sites = store
        .watched_sites()
        .await
        .map_err(store_err("listing the watched sites"))?;
    let earlier = sites
        .iter()
        .rev()
        .find(|s| s.name == PIRATE_SITE)
        .and_then(|s| s.host.rsplit_once(':'))
        .and_then(|(_, port)| port.parse::<u16>().ok());
    if let Some(port) = earlier
        && let Ok(listener) = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await
    {
        return Ok(listener);
    }
    tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .map_err(|e| Error::task("binding the demo site", e))
}

/// The sites [`watch_demo_sites`] watches.
#[derive(Debug, Clone)]
pub struct DemoSites {
    /// The pirate site, on `127.0.0.1`.
    pub pirate: Site,
    /// The licensed mirror, on `localhost`.
    pub mirror: Site,
}

/// The demo sites' crawl settings: every page at once, no politeness delay (the server is
/// ours).
fn demo_site_settings(include: &str, exclude: &str) -> SiteSettings {
    SiteSettings {
        max_pages: 100,
        max_depth: 2,
        delay_ms: 0,
        concurrency: 4,
        include: [include]
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| (*p).to_owned())
            .collect(),
        exclude: [exclude]
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| (*p).to_owned())
            .collect(),
    }
}

/// Watches the pirate site and the mirror served at `addr` (or finds them watched by an
/// earlier run), licenses [`MIRROR_HOST`] for every work, and queues a crawl of each.
/// `base` is the crawler configuration the crawls run with: it must allow loopback
/// addresses for them to fetch anything.
///
/// # Errors
/// Settings the crawler refuses, a database failure.
pub async fn watch_demo_sites(
    store: &Store,
    base: &CrawlSettings,
    addr: SocketAddr,
) -> Result<DemoSites> {
    let port = addr.port();
    let pirate = watch(
        store,
        base,
        PIRATE_SITE,
        &format!("http://127.0.0.1:{port}/"),
        demo_site_settings("", "/mirror/"),
    )
    .await?;
    let mirror = watch(
        store,
        base,
        MIRROR_SITE,
        &format!("http://{MIRROR_HOST}:{port}/mirror/"),
        demo_site_settings("/mirror/", ""),
    )
    .await?;
    store
        .add_licensed(
            MIRROR_HOST,
            None,
            Some("copyhound demo: the licensed mirror"),
        )
        .await
        .map_err(store_err("licensing the demo mirror"))?;
    for site in [&pirate, &mirror] {
        crate::crawl_site_now(store, site.id).await?;
    }
    Ok(DemoSites { pirate, mirror })
}

async fn watch(
    store: &Store,
    base: &CrawlSettings,
    name: &str,
    start_url: &str,
    settings: SiteSettings,
) -> Result<Site> {
    let sites = store
        .watched_sites()
        .await
        .map_err(store_err("listing the watched sites"))?;
    if let Some(site) = sites
        .into_iter()
        .find(|s| start_url.starts_with(&s.base_url))
    {
        return Ok(site);
    }
    crate::watch_site(
        store,
        base,
        &NewSite {
            start_url: start_url.to_owned(),
            name: Some(name.to_owned()),
            settings,
            schedule: None,
        },
    )
    .await
}

/// The demo's sign-in: [`DEMO_USER`], an admin, with a new random password each call (the
/// store outlives the run that printed the last one). Returns the name and the password.
///
/// # Errors
/// A database failure.
pub async fn demo_login(store: &Store) -> Result<(String, String)> {
    let password = crate::accounts::random_token(10);
    let existing = store
        .user_by_name(DEMO_USER)
        .await
        .map_err(store_err("looking up the demo user"))?;
    match existing {
        Some(user) => {
            crate::accounts::set_password(store, user.id, &password, "demo").await?;
            if user.disabled || user.role != Role::Admin {
                let changes = store::UserChanges {
                    role: Some(Role::Admin),
                    disabled: Some(false),
                    ..store::UserChanges::default()
                };
                store
                    .update_user(user.id, &changes, "demo")
                    .await
                    .map_err(store_err("enabling the demo user"))?;
            }
        }
        None => {
            crate::accounts::add_user(store, DEMO_USER, None, Role::Admin, &password, "demo")
                .await?;
        }
    }
    Ok((DEMO_USER.to_owned(), password))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_disguise_has_a_page_and_the_negatives_too() {
        let pages = demo_pages().unwrap();
        let kinds: Vec<PageKind> = pages.iter().map(|p| p.kind).collect();
        for case in Case::ALL {
            // No unregistered chapter of a registered work here; script pages need the
            // quality bench's rendering.
            if matches!(case, Case::OtherChapter | Case::Script) {
                continue;
            }
            let want = if case.is_evasion() {
                PageKind::Copy(case)
            } else {
                PageKind::Innocent(case)
            };
            assert!(kinds.contains(&want), "no page of {case:?}");
        }
        assert_eq!(
            kinds.iter().filter(|k| **k == PageKind::Licensed).count(),
            MIRROR_PAGES
        );
        // A split chapter comes with every page it was cut into.
        let split = kinds
            .iter()
            .filter(|k| **k == PageKind::Copy(Case::Split))
            .count();
        assert!(split >= 2, "{split} split pages");
        let last = format!("/read/split-{split}.html");
        let page = pages.iter().find(|p| p.path == last).unwrap();
        assert!(
            String::from_utf8_lossy(&page.body).contains(&format!("{split}/{split}")),
            "{last} is not the last of {split} pages"
        );
        let paths: std::collections::HashSet<&str> =
            pages.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths.len(), pages.len(), "two pages on one path");
        // The index links every pirate page, and no mirror page.
        let index = pages.iter().find(|p| p.path == "/").unwrap();
        let index = String::from_utf8_lossy(&index.body);
        for p in &pages {
            let linked = index.contains(&format!("href=\"{}\"", p.path));
            let pirate = p.path.starts_with("/read/") || p.path == "/about.html";
            assert_eq!(linked, pirate, "{}", p.path);
        }
    }

    #[test]
    fn the_pages_are_the_same_on_every_run_and_escaped() {
        let (a, b) = (demo_pages().unwrap(), demo_pages().unwrap());
        assert!(a.iter().zip(&b).all(|(x, y)| x.body == y.body));
        let html =
            String::from_utf8(index_page("<b>&", &[("/x".into(), "<i>".into())]).unwrap()).unwrap();
        assert!(
            html.contains("&#60;b&#62;&#38;") || html.contains("&lt;b&gt;&amp;"),
            "{html}"
        );
        assert!(!html.contains("<i>"), "{html}");
    }

    #[test]
    fn the_traditional_page_is_in_the_other_script() {
        let pages = demo_pages().unwrap();
        let page = pages
            .iter()
            .find(|p| p.kind == PageKind::Copy(Case::Traditional))
            .unwrap();
        let text = String::from_utf8_lossy(&page.body);
        assert!(!zhconv::is_hans(&text), "still simplified");
    }
}
