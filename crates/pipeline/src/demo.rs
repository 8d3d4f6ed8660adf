//! `copyhound demo`'s world: public-domain sample works compiled in, the small HTTP server
//! that serves a pirate site and a licensed mirror on 127.0.0.1, and the set-up that
//! registers the works, watches both sites, licenses the mirror's domain and queues their
//! crawls, so that a fresh store shows real cases within a minute.
//!
//! The sites' pages are made elsewhere (`bench::demo::demo_pages`, from [`SAMPLE`] with the
//! pirate-page generator `copyhound bench quality` measures the matcher with): a pipeline
//! does not make pirate pages, it finds them. The mirror is the same server reached as
//! `localhost` rather than `127.0.0.1`: another host, so another site, whose domain the demo
//! licenses.
//!
//! ```no_run
//! # async fn demo(
//! #     store: &store::Store,
//! #     importer: &import::Importer,
//! #     pages: Vec<pipeline::demo::SitePage>,
//! # ) -> jobs::Result<()> {
//! use pipeline::demo;
//!
//! demo::register_sample(store, importer).await?;
//! let listener = demo::bind_site(store).await?;
//! let site = demo::SiteServer::start(listener, pages)?;
//! let sites = demo::watch_demo_sites(store, &crawler::CrawlSettings::default(), site.addr()).await?;
//! // ... run the workers: the crawls are queued; then:
//! site.stop().await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use crawler::CrawlSettings;
use import::{ImportOptions, ImportReport, Importer};
use jobs::{Error, Result, store_err};
use store::{LicensedDomains, NewSite, Role, Site, SiteSettings, Store, SuspectSites, Users};

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

/// The demo's works: about 115 KB in all, so that the binary stays small. A static, not a
/// constant: a constant's texts are copied into every codegen unit that uses them.
pub static SAMPLE: [SampleWork; 5] = [
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

/// What a page of the demo sites is, so that a test (and a curious newcomer) can tell what
/// copyhound should make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// A table of contents.
    Index,
    /// A registered chapter in a pirate's disguise: must join a case.
    Copy,
    /// Text that copies nothing registered: must not match.
    Innocent,
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
    // A path ending `.json` is a content endpoint a script-written page fetches; `.svg`, the
    // glyph sprite a sprite page's style names.
    let content_type = if uri.path().ends_with(".json") {
        "application/json"
    } else if uri.path().ends_with(".svg") {
        "image/svg+xml"
    } else if uri.path().ends_with(".png") {
        "image/png"
    } else if uri.path().ends_with(".jpg") {
        "image/jpeg"
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
        render: false,
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
        crawling::crawl_site_now(store, site.id).await?;
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
    crawling::watch_site(
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
    let password = accounts::random_token(10);
    let existing = store
        .user_by_name(DEMO_USER)
        .await
        .map_err(store_err("looking up the demo user"))?;
    match existing {
        Some(user) => {
            accounts::set_password(store, user.id, &password, "demo").await?;
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
            accounts::add_user(store, DEMO_USER, None, Role::Admin, &password, "demo").await?;
        }
    }
    Ok((DEMO_USER.to_owned(), password))
}

/// The demo made ready to serve: the sample registered, its site served, both sites
/// watched with their crawls queued.
#[derive(Debug)]
pub struct DemoSetUp {
    /// The sample works' imports (a second run finds them stored).
    pub works: Vec<ImportReport>,
    /// The pirate site and mirror, served on 127.0.0.1 until stopped.
    pub site: SiteServer,
    /// The two watched sites.
    pub sites: DemoSites,
}

/// The sample rights holder the demo drafts its notices for: clearly not a real one.
pub const SAMPLE_RIGHTS_HOLDER: [(&str, &str); 5] = [
    ("notices.rights_holder.name", "示例出版社 (demo)"),
    (
        "notices.rights_holder.address",
        "示例路 1 号, 示例市 (demo)",
    ),
    ("notices.rights_holder.email", "rights@press.example"),
    ("notices.rights_holder.phone", "+86 10 0000 0000"),
    ("notices.rights_holder.signatory", "示例 (demo)"),
];

/// Fills each element of the rights holder's profile that neither the settings file
/// (`file`) nor the UI has set with [`SAMPLE_RIGHTS_HOLDER`]'s, saved as the UI saves it (an
/// admin sees and clears it on the settings page), so the demo's notices can be drafted.
/// Returns the keys it filled.
///
/// # Errors
/// A database failure.
pub async fn fill_sample_rights_holder(
    store: &Store,
    file: &takedown::NoticeSettings,
) -> Result<Vec<String>> {
    let effective = takedown::overrides::effective(store, file).await?;
    let form: Vec<(String, String)> = SAMPLE_RIGHTS_HOLDER
        .iter()
        .filter(|(key, _)| {
            effective
                .field(key)
                .is_some_and(|f| f.value.trim().is_empty())
        })
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    takedown::overrides::save(store, file, &form, "demo").await
}

/// Registers the sample with `importer`, fills in a sample rights holder where `notices`
/// has none ([`fill_sample_rights_holder`]), serves `pages` as the demo's sites and watches
/// them with `base` (which must allow loopback addresses).
///
/// # Errors
/// The store, the importer or the crawler's settings failed.
pub async fn set_up(
    store: &Store,
    importer: &Importer,
    base: &CrawlSettings,
    notices: &takedown::NoticeSettings,
    pages: Vec<SitePage>,
) -> Result<DemoSetUp> {
    let works = register_sample(store, importer).await?;
    fill_sample_rights_holder(store, notices).await?;
    let site = SiteServer::start(bind_site(store).await?, pages)?;
    let sites = watch_demo_sites(store, base, site.addr()).await?;
    Ok(DemoSetUp { works, site, sites })
}

/// What the demo says it set up: the works, the two sites.
impl std::fmt::Display for DemoSetUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let created = self.works.iter().filter(|w| w.created).count();
        let chapters: usize = self.works.iter().map(|w| w.chapters).sum();
        let (pirate, mirror) = (&self.sites.pirate, &self.sites.mirror);
        writeln!(
            f,
            "{} sample works registered ({created} new), {chapters} chapters",
            self.works.len()
        )?;
        writeln!(
            f,
            "demo pirate site: {} (site {}); licensed mirror: {} (site {}); crawls queued",
            pirate.start_url, pirate.id, mirror.start_url, mirror.id
        )
    }
}
