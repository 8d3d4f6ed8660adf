//! The rendered fetch: a page loaded in a headless Chromium, for the text its scripts and CSS
//! show and a full-page screenshot.
//!
//! A [`Renderer`] is a bounded pool of browsers (`pool_size`), each a chromedriver process
//! (in its own process group, so killing it takes its Chromium along) with one session and
//! one [`proxy::Proxy`]. Every request the page makes goes through that proxy, which applies
//! the crawl's address rules and robots.txt and caps the page's requests: the browser is no
//! way around the crawler's SSRF guard. Nor does the browser send anything else (issue
//! #43): it resolves no name itself (`--host-resolver-rules` maps every host but the
//! proxy's address to nothing), WebRTC sends no UDP (there is no proxy for UDP), and
//! Chromium's own services (component and safe-browsing updates, sync, domain reliability,
//! media-router discovery) are off. A page gets `page_timeout` to load and `script_timeout`
//! per script; a browser that does not answer in time, whose tab crashed (a memory bomb over
//! the V8 heap cap), or whose process tree as a whole went over `max_memory_mib` (canvases,
//! images, array buffers: the `watchdog` module) is killed and a fresh one started for the
//! next page. Dialogs and `window.open` are disabled before the page's own scripts run,
//! popups are blocked (`target=_blank` included), downloads are denied, permission prompts
//! refused.
//!
//! What comes back ([`Rendered`]): the DOM as rendered (`outerHTML`), the extractor's reading
//! of it, the displayed text (`innerText`, in the order the page shows it) of the element the
//! extractor chose, and optionally a PNG of the page (height capped).

pub mod proxy;
mod watchdog;
mod webdriver;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use extract::canvas::DrawCall;
use extract::{Extracted, Extractor, PageAssets, RENDER_MARK, TextSource};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use url::Url;

use crate::error::{Error, Result};
use crate::safety::AddressPolicy;
use crate::sink::{RenderedPage, Screenshot, SnapshotId};
pub use proxy::{PageGate, UrlGate};
use webdriver::{Failure, Session};

/// Settings of rendered fetches (`[crawler.render]`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct RenderSettings {
    /// Render every page of the crawl (`--render`, or a site marked `render`). When off, a
    /// page whose text is short while it carries scripts is still rendered if `auto` is on
    /// and Chromium is installed.
    pub enabled: bool,
    /// Render placeholder pages (short text, scripts) when Chromium is installed.
    pub auto: bool,
    /// The Chromium binary (Debian package `chromium`).
    pub chromium: PathBuf,
    /// The chromedriver binary (Debian package `chromium-driver`).
    pub chromedriver: PathBuf,
    /// Browsers rendering at once, each a Chromium process tree.
    pub pool_size: usize,
    /// Time for a page to load; then what it has is read (or, if it does not answer, the
    /// browser is killed).
    #[serde(with = "crate::duration_serde")]
    pub page_timeout: Duration,
    /// Time for each script the renderer runs in the page (reading the DOM, its text).
    #[serde(with = "crate::duration_serde")]
    pub script_timeout: Duration,
    /// Requests one page may make (sub-resources included); the rest are refused.
    pub max_requests: u32,
    /// V8 heap of a page, MiB; a page past it crashes its tab, and the browser is restarted.
    pub max_heap_mib: u32,
    /// Memory of a browser as a whole (chromedriver, Chromium and every process they
    /// started, shared pages split between them), MiB; past it the browser is killed, the
    /// page fails, and the next page gets a new browser.
    pub max_memory_mib: u32,
    /// Viewport width and height, CSS pixels.
    pub window_width: u32,
    pub window_height: u32,
    /// Screenshots are cut at this height, pixels.
    pub screenshot_max_height: u32,
    /// A screenshot larger than this many bytes is not kept.
    pub screenshot_max_bytes: u64,
    /// Characters of rendered HTML kept at most.
    pub max_html_chars: u32,
}

impl Default for RenderSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            auto: true,
            chromium: PathBuf::from("/usr/bin/chromium"),
            chromedriver: PathBuf::from("/usr/bin/chromedriver"),
            pool_size: 2,
            page_timeout: Duration::from_secs(20),
            script_timeout: Duration::from_secs(5),
            // A novel page needs tens of requests; a page asking for thousands is hostile.
            max_requests: 500,
            max_heap_mib: 256,
            // An idle headless Chromium holds about 400 MiB (nine processes, Debian's
            // chromium 156), a heavy novel page a few hundred more; a page past that is
            // building something other than a chapter.
            max_memory_mib: 1536,
            window_width: 1280,
            window_height: 1000,
            screenshot_max_height: 20_000,
            screenshot_max_bytes: 8 * 1024 * 1024,
            max_html_chars: 4 * 1024 * 1024,
        }
    }
}

impl RenderSettings {
    /// Checks the limits; keys are relative to `[crawler.render]`.
    ///
    /// # Errors
    /// [`bounds::OutOfRange`] naming the first bad setting.
    pub fn validate(&self) -> std::result::Result<(), bounds::OutOfRange> {
        bounds::at_least("pool_size", self.pool_size, 1)?;
        bounds::at_least("page_timeout", self.page_timeout, bounds::MIN_TIMEOUT)?;
        bounds::at_least("script_timeout", self.script_timeout, bounds::MIN_TIMEOUT)?;
        bounds::at_least("max_requests", self.max_requests, 1)?;
        bounds::at_least("max_heap_mib", self.max_heap_mib, 16)?;
        // Room for the browser itself beside one full heap.
        bounds::at_least(
            "max_memory_mib",
            self.max_memory_mib,
            self.max_heap_mib.saturating_add(128),
        )
        .map_err(|e| e.against("max_heap_mib"))?;
        bounds::at_least("window_width", self.window_width, 100)?;
        bounds::at_least("window_height", self.window_height, 100)?;
        bounds::at_least("screenshot_max_height", self.screenshot_max_height, 100)?;
        bounds::at_least("screenshot_max_bytes", self.screenshot_max_bytes, 1024)?;
        bounds::at_least("max_html_chars", self.max_html_chars, 1024)
    }

    /// Why rendering cannot run here (a binary missing), or `None` when it can.
    pub fn unavailable(&self) -> Option<String> {
        [
            (&self.chromium, "chromium"),
            (&self.chromedriver, "chromedriver"),
        ]
        .into_iter()
        .find(|(path, _)| !path.is_file())
        .map(|(path, what)| format!("{what} is not installed at {}", path.display()))
    }
}

/// One page to render.
#[derive(Clone)]
pub struct RenderRequest {
    pub url: Url,
    /// The address rules of the crawl, applied to every request of the page.
    pub policy: Arc<AddressPolicy>,
    /// robots.txt (or any other rule) for plain-HTTP requests of the page.
    pub allow_url: Option<UrlGate>,
    /// Take a full-page screenshot.
    pub screenshot: bool,
}

/// What rendering a page gave.
#[derive(Debug)]
pub struct Rendered {
    /// Where the browser ended (after redirects, or a script's navigation).
    pub final_url: String,
    /// The DOM as rendered, serialized.
    pub html: String,
    /// The extractor's reading of the rendered DOM.
    pub extracted: Extracted,
    /// The displayed text of the chosen element, paragraphs separated by `\n`, in the order
    /// shown; the extracted text when the browser could not say.
    pub text: String,
    pub screenshot: Option<Screenshot>,
    /// The page had not finished loading at `page_timeout`; what it showed then was read.
    pub timed_out: bool,
    /// Requests the page made, refused ones included, and what was refused.
    pub requests: u32,
    pub refused: Vec<String>,
    pub elapsed: Duration,
}

impl Rendered {
    /// What to store of it beside the page's snapshot `snapshot` (the screenshot moves
    /// there).
    pub fn to_store(&mut self, snapshot: SnapshotId) -> RenderedPage {
        RenderedPage {
            snapshot,
            final_url: self.final_url.clone(),
            html: self.html.clone(),
            text: self.text.clone(),
            screenshot: self.screenshot.take(),
            rendered_at: chrono::Utc::now(),
            timed_out: self.timed_out,
            requests: self.requests,
            refused: self.refused.len() as u32,
        }
    }
}

/// Runs before any script of every document: dialogs answer at once, new windows are not
/// opened, and printing does nothing.
const GUARD_JS: &str = "(() => {\
  const nothing = () => undefined;\
  for (const [name, value] of [['alert', nothing], ['confirm', () => false], ['prompt', () => null], ['print', nothing], ['open', () => null]]) {\
    try { Object.defineProperty(window, name, { value, writable: false, configurable: false }); } catch (e) {}\
  }\
})();";

/// Runs before any script of every document: records the text drawn with `fillText` and
/// `strokeText` on 2D contexts (of canvases, and of offscreen canvases a canvas handed its
/// drawing to), with the canvas, the position after the context's transform and the font's
/// size, at most `extract::canvas::MAX_CALLS` calls and `MAX_CHARS` characters. READ_JS
/// reads the record. The page can reach it (it is a property of `window`): what it forges
/// there is text of its own page, read as data.
const CANVAS_JS: &str = "(() => {\
  const calls = [], maxCalls = 50000, maxChars = 200000; let chars = 0;\
  const shownBy = new WeakMap();\
  const px = (font) => { const m = /(\\d+(?:\\.\\d+)?)px/.exec(String(font)); return m ? +m[1] : 10; };\
  const record = (ctx, text, x, y) => {\
    if (calls.length >= maxCalls) return;\
    const s = String(text); if (chars + s.length > maxChars) return; chars += s.length;\
    let t = null; try { t = ctx.getTransform(); } catch (e) {}\
    x = +x; y = +y;\
    const at = t ? [t.a * x + t.c * y + t.e, t.b * x + t.d * y + t.f] : [x, y];\
    const scale = t ? Math.hypot(t.c, t.d) : 1;\
    calls.push([shownBy.get(ctx.canvas) || ctx.canvas, s, at[0], at[1], px(ctx.font) * scale]);\
  };\
  const hook = (proto) => {\
    if (!proto) return;\
    for (const name of ['fillText', 'strokeText']) {\
      const original = proto[name]; if (typeof original !== 'function') continue;\
      Object.defineProperty(proto, name, { value: function (text, x, y, ...rest) {\
        try { record(this, text, x, y); } catch (e) {}\
        return original.call(this, text, x, y, ...rest); }, writable: true, configurable: true });\
    }\
  };\
  hook(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype);\
  hook(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype);\
  const transfer = window.HTMLCanvasElement && HTMLCanvasElement.prototype.transferControlToOffscreen;\
  if (transfer) Object.defineProperty(HTMLCanvasElement.prototype, 'transferControlToOffscreen', {\
    value: function () { const o = transfer.call(this); shownBy.set(o, this); return o; }, writable: true, configurable: true });\
  Object.defineProperty(window, '__copyhoundCanvas', { value: calls });\
})();";

/// The page's size, for the screenshot's clip.
const SIZE_JS: &str = "const d = document.documentElement, b = document.body || d;\
  return [Math.max(d.scrollWidth, b.scrollWidth), Math.max(d.scrollHeight, b.scrollHeight)];";

/// Puts the children of flex and grid containers, and of boxes whose children are all
/// positioned, in the DOM order they are shown in (top to bottom, then left to right), so
/// `innerText` reads them as displayed; numbers the body's elements with the mark; returns
/// the serialized DOM, the URL, the title and the text drawn on the document's canvases
/// (`[canvas number in document order, text, x, y, font px]`, from CANVAS_JS's record; a
/// canvas not in the document is never shown, and its drawing is left out). Runs after the
/// screenshot.
const READ_JS: &str = "const mark = arguments[0], maxChars = arguments[1], maxEls = arguments[2];\
  const els = document.body ? Array.from(document.body.getElementsByTagName('*')).slice(0, maxEls) : [];\
  for (const el of els) {\
    const kids = Array.from(el.children);\
    if (kids.length < 2) continue;\
    const display = getComputedStyle(el).display;\
    const laidOut = display.includes('flex') || display.includes('grid') ||\
      kids.every(k => ['absolute', 'fixed', 'relative'].includes(getComputedStyle(k).position));\
    if (!laidOut) continue;\
    const placed = kids.map((k, i) => { const r = k.getBoundingClientRect(); return [r.top, r.left, i, k]; });\
    placed.sort((a, b) => (Math.abs(a[0] - b[0]) > 2 ? a[0] - b[0] : a[1] - b[1]) || a[2] - b[2]);\
    if (placed.some((p, i) => p[2] !== i)) for (const p of placed) el.appendChild(p[3]);\
  }\
  els.forEach((el, i) => el.setAttribute(mark, String(i)));\
  const drawn = [], record = window.__copyhoundCanvas;\
  if (Array.isArray(record) && record.length) {\
    const index = new Map(Array.from(document.getElementsByTagName('canvas')).map((c, i) => [c, i]));\
    for (const c of record.slice(0, 50000)) {\
      if (!Array.isArray(c) || !index.has(c[0])) continue;\
      drawn.push([index.get(c[0]), String(c[1]), +c[2], +c[3], +c[4]]);\
    }\
  }\
  return { html: document.documentElement.outerHTML.slice(0, maxChars), url: location.href, title: document.title, canvas: drawn };";

/// The displayed text of the element with the mark `arguments[1]`.
const TEXT_JS: &str = "const el = document.querySelector('[' + arguments[0] + '=\"' + arguments[1] + '\"]');\
  return el ? el.innerText : null;";

/// How long a loaded page's requests must be quiet before it is read (at most the
/// script timeout is waited).
const SETTLE_QUIET: Duration = Duration::from_millis(300);

/// Body elements numbered at most (larger pages are read without their tail's marks).
const MAX_MARKED: u32 = 100_000;

/// A bounded pool of headless browsers. Browsers start on first use; dropping the pool kills
/// them.
pub struct Renderer {
    settings: RenderSettings,
    idle: Mutex<Vec<Browser>>,
    permits: tokio::sync::Semaphore,
    starts: AtomicU64,
}

impl Renderer {
    /// A pool over `settings`; nothing is started yet.
    ///
    /// # Errors
    /// [`Error::RenderUnavailable`] when Chromium or chromedriver is not installed,
    /// [`Error::OutOfRange`] for bad limits.
    pub fn new(settings: RenderSettings) -> Result<Self> {
        settings
            .validate()
            .map_err(|e| Error::OutOfRange(e.in_section("render")))?;
        if let Some(reason) = settings.unavailable() {
            return Err(Error::RenderUnavailable { reason });
        }
        Ok(Self {
            permits: tokio::sync::Semaphore::new(settings.pool_size),
            settings,
            idle: Mutex::new(Vec::new()),
            starts: AtomicU64::new(0),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &RenderSettings {
        &self.settings
    }

    /// Browsers started so far (more than the pool's size means some were restarted).
    pub fn browsers_started(&self) -> u64 {
        self.starts.load(Ordering::Relaxed)
    }

    /// [`render`](Self::render), and when the browser failed rather than the page (it did
    /// not start, crashed, or answered too slowly on a busy machine; never a page over its
    /// budget or memory cap), once more in a new browser.
    ///
    /// # Errors
    /// As [`render`](Self::render), from the last try.
    pub async fn render_again_if_failed(
        &self,
        extractor: &Arc<Extractor>,
        request: RenderRequest,
    ) -> Result<Rendered> {
        match self.render(extractor, request.clone()).await {
            Err(e @ Error::Render { retry: true, .. }) => {
                tracing::warn!(error = %e, "rendering failed; trying once more in a new browser");
                self.render(extractor, request).await
            }
            outcome => outcome,
        }
    }

    /// Renders one page within its budget. A browser that fails is killed, and the next
    /// page gets a new one.
    ///
    /// # Errors
    /// [`Error::Render`] when the browser could not start, did not answer in time or
    /// crashed.
    pub async fn render(
        &self,
        extractor: &Arc<Extractor>,
        request: RenderRequest,
    ) -> Result<Rendered> {
        let _permit = self.permits.acquire().await.expect("never closed");
        let started = Instant::now();
        let fail = |reason: String, retry: bool| Error::Render {
            url: request.url.to_string(),
            reason,
            retry,
        };
        let idle = loop {
            let next = self.idle.lock().expect("idle").pop();
            match next {
                Some(b) if b.watchdog.tripped().is_some() => {
                    tracing::info!("idle browser dropped: it went over its memory cap");
                }
                next => break next,
            }
        };
        let browser = match idle {
            Some(b) => b,
            None => {
                self.starts.fetch_add(1, Ordering::Relaxed);
                Browser::start(&self.settings)
                    .await
                    .map_err(|reason| fail(reason, true))?
            }
        };
        let s = &self.settings;
        // Load, and each of up to four scripts and a screenshot, with a margin.
        let budget = s.page_timeout + s.script_timeout * 5 + Duration::from_secs(5);
        let over_cap = |used: u64| {
            format!(
                "the browser used {} MiB, over its cap of {} MiB, and was killed \
                 (crawler.render.max_memory_mib)",
                used >> 20,
                s.max_memory_mib
            )
        };
        let outcome = tokio::time::timeout(budget, async {
            tokio::select! {
                biased;
                used = browser.watchdog.killed() => Err(over_cap(used)),
                rendered = browser.render(s, extractor, &request) => rendered,
            }
        })
        .await;
        match outcome {
            Ok(Ok(mut rendered)) => {
                rendered.elapsed = started.elapsed();
                if browser.watchdog.tripped().is_none() {
                    self.idle.lock().expect("idle").push(browser);
                }
                Ok(rendered)
            }
            Ok(Err(reason)) => {
                // The kill may reach the session before the watchdog's word reaches here.
                let (reason, retry) = match browser.watchdog.tripped() {
                    Some(used) => (over_cap(used), false),
                    None => (reason, true),
                };
                tracing::info!(url = %request.url, %reason, "browser dropped after a failed render");
                Err(fail(reason, retry))
            }
            Err(_) => {
                tracing::info!(url = %request.url, "browser killed: the page ran over its budget");
                Err(fail(format!("over the budget of {budget:?}"), false))
            }
        }
    }
}

/// One chromedriver with its Chromium, session, proxy, memory watchdog and profile folder.
struct Browser {
    process: Child,
    session: Session,
    proxy: proxy::Proxy,
    watchdog: watchdog::Watchdog,
    profile: PathBuf,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // chromedriver leads its own process group; Chromium's processes are in it.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.process.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.process.kill();
        let _ = self.process.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

static PROFILES: AtomicU64 = AtomicU64::new(0);

/// Kills a half-started browser's process group if start-up fails.
struct Started(Option<Child>);

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .stderr(Stdio::null())
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Browser {
    async fn start(s: &RenderSettings) -> std::result::Result<Self, String> {
        use std::os::unix::process::CommandExt;
        let proxy = proxy::Proxy::start()
            .await
            .map_err(|e| format!("proxy: {e}"))?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let profile = std::env::temp_dir().join(format!(
            "copyhound-render-{}-{}",
            std::process::id(),
            PROFILES.fetch_add(1, Ordering::Relaxed)
        ));
        let child = Command::new(&s.chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", s.chromedriver.display()))?;
        // Watched from the start: a page cannot be loaded before, but the browser's own
        // start-up is bounded too.
        let watchdog = watchdog::Watchdog::start(child.id(), u64::from(s.max_memory_mib) << 20);
        let mut started = Started(Some(child));
        let since = Instant::now();
        while !Session::ready(port).await {
            if since.elapsed() > Duration::from_secs(30) {
                return Err("chromedriver did not answer within 30 s".to_owned());
            }
            if let Some(child) = started.0.as_mut()
                && let Ok(Some(exit)) = child.try_wait()
            {
                return Err(format!("chromedriver exited at start: {exit}"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let args = [
            "--headless=new".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            format!("--window-size={},{}", s.window_width, s.window_height),
            format!("--proxy-server=http://{}", proxy.addr()),
            // Without this, Chromium sends loopback requests past the proxy.
            "--proxy-bypass-list=<-loopback>".to_owned(),
            // The proxy resolves the page's hosts under the crawl's rules; the browser
            // resolves nothing (its own services' names, a WebRTC server's) through the
            // system resolver, and knows only the proxy's address.
            format!(
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {}",
                proxy.addr().ip()
            ),
            "--disable-quic".to_owned(),
            // WebRTC may send UDP only through a proxy, and ours carries none: no STUN
            // packet to any address, no mDNS. (`--force-webrtc-ip-handling-policy`, used
            // before, is no Chromium switch: it was ignored, and STUN reached refused
            // addresses.) The `webrtc.*` preferences below say the same.
            "--webrtc-ip-handling-policy=disable_non_proxied_udp".to_owned(),
            format!("--js-flags=--max-old-space-size={}", s.max_heap_mib),
            // Chromium's own traffic: update checks, field trials, safe browsing lists,
            // error reports, Cast discovery (multicast), hyperlink-auditing pings.
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-domain-reliability".to_owned(),
            "--disable-client-side-phishing-detection".to_owned(),
            "--disable-default-apps".to_owned(),
            "--disable-breakpad".to_owned(),
            "--no-pings".to_owned(),
            "--disable-features=MediaRouter,DialMediaRouteProvider,OptimizationHints,\
             Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater"
                .to_owned(),
            "--disable-extensions".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-notifications".to_owned(),
            "--deny-permission-prompts".to_owned(),
            "--no-first-run".to_owned(),
            "--mute-audio".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "unhandledPromptBehavior": "dismiss",
            "timeouts": {
                "pageLoad": s.page_timeout.as_millis() as u64,
                "script": s.script_timeout.as_millis() as u64,
                "implicit": 0,
            },
            "goog:chromeOptions": {
                "binary": s.chromium,
                "args": args,
                // chromedriver turns the popup blocker off by default: with it on, and no
                // user gesture ever given, no page opens a window (`target=_blank` clicks,
                // `window.open` from a frame the guard script did not reach).
                "excludeSwitches": ["disable-popup-blocking"],
                "prefs": {
                    "webrtc.ip_handling_policy": "disable_non_proxied_udp",
                    "webrtc.multiple_routes_enabled": false,
                    "webrtc.nonproxied_udp_enabled": false,
                    "safebrowsing.enabled": false,
                    // No DNS prefetch or preconnect.
                    "net.network_prediction_options": 2,
                    "download_restrictions": 3,
                    "profile.default_content_setting_values.notifications": 2,
                    "profile.default_content_setting_values.geolocation": 2,
                    "profile.default_content_setting_values.media_stream": 2,
                    "profile.default_content_setting_values.popups": 2,
                },
            },
        });
        let session = Session::open(port, capabilities, Duration::from_secs(60))
            .await
            .map_err(|e| format!("no browser session: {e}"))?;
        let wait = s.script_timeout;
        for (cmd, params) in [
            (
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": GUARD_JS }),
            ),
            (
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": CANVAS_JS }),
            ),
            ("Browser.setDownloadBehavior", json!({ "behavior": "deny" })),
        ] {
            session
                .cdp(cmd, params, wait)
                .await
                .map_err(|e| format!("{cmd}: {e}"))?;
        }
        Ok(Self {
            process: started.0.take().expect("started"),
            session,
            proxy,
            watchdog,
            profile,
        })
    }

    async fn render(
        &self,
        s: &RenderSettings,
        extractor: &Arc<Extractor>,
        request: &RenderRequest,
    ) -> std::result::Result<Rendered, String> {
        let gate = Arc::new(PageGate::new(
            Arc::clone(&request.policy),
            request.allow_url.clone(),
            s.max_requests,
        ));
        // The last page stops first: what it still requests must not count against (or be
        // judged by the rules of) this one.
        self.session
            .goto("about:blank", s.script_timeout + Duration::from_secs(2))
            .await
            .map_err(|e| format!("leaving the last page: {e}"))?;
        self.proxy.begin_page(Arc::clone(&gate));
        let script_wait = s.script_timeout + Duration::from_secs(2);
        let timed_out = match self
            .session
            .goto(
                request.url.as_str(),
                s.page_timeout + Duration::from_secs(2),
            )
            .await
        {
            Ok(()) => {
                // Loaded; what its scripts still fetch (a chapter asked for in `onload`)
                // comes in before the page is read.
                gate.settle(SETTLE_QUIET, s.script_timeout).await;
                false
            }
            Err(e) if e.is_timeout() => {
                // What the page shows so far is read; the rest stops loading.
                self.run(s, "window.stop();", json!([])).await?;
                true
            }
            Err(e) => return Err(e.to_string()),
        };
        let screenshot = if request.screenshot {
            self.screenshot(s, script_wait).await?
        } else {
            None
        };
        let read = self
            .run(
                s,
                READ_JS,
                json!([RENDER_MARK, s.max_html_chars, MAX_MARKED]),
            )
            .await?;
        let marked = read["html"].as_str().unwrap_or_default().to_owned();
        let final_url = read["url"]
            .as_str()
            .unwrap_or(request.url.as_str())
            .to_owned();
        let base = Url::parse(&final_url).unwrap_or_else(|_| request.url.clone());
        let assets = PageAssets {
            draw_calls: draw_calls(&read["canvas"]),
            sprites: Vec::new(),
        };
        let reader = Arc::clone(extractor);
        let deadline = Instant::now() + s.script_timeout;
        let (extracted, html) = tokio::task::spawn_blocking(move || {
            let extracted = reader.extract_with(&marked, &base, Some(deadline), &assets);
            (extracted, strip_marks(&marked))
        })
        .await
        .map_err(|e| format!("extraction panicked: {e}"))?;
        // Text drawn on a canvas or shown through a sprite is in no element's `innerText`:
        // the extractor's reading of it is the text.
        let drawn = matches!(extracted.source, TextSource::Canvas | TextSource::Sprite);
        let shown = match &extracted.container_mark {
            Some(_) if drawn => None,
            Some(mark) => self
                .run(s, TEXT_JS, json!([RENDER_MARK, mark]))
                .await?
                .as_str()
                .map(paragraphs),
            None => None,
        };
        let text = shown
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| extracted.text());
        Ok(Rendered {
            final_url,
            html,
            extracted,
            text,
            screenshot,
            timed_out,
            requests: gate.requests(),
            refused: gate.refused(),
            elapsed: Duration::ZERO,
        })
    }

    async fn run(
        &self,
        s: &RenderSettings,
        script: &str,
        args: Value,
    ) -> std::result::Result<Value, String> {
        self.session
            .execute(script, args, s.script_timeout + Duration::from_secs(2))
            .await
            .map_err(|e: Failure| e.to_string())
    }

    async fn screenshot(
        &self,
        s: &RenderSettings,
        wait: Duration,
    ) -> std::result::Result<Option<Screenshot>, String> {
        let size = self.run(s, SIZE_JS, json!([])).await?;
        let dim = |i: usize, cap: u32| {
            size[i]
                .as_f64()
                .map_or(cap, |v| (v.max(1.0) as u32).min(cap))
        };
        let width = dim(0, s.window_width.max(1).saturating_mul(2));
        let height = dim(1, s.screenshot_max_height);
        let shot = self
            .session
            .cdp(
                "Page.captureScreenshot",
                json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": { "x": 0, "y": 0, "width": width, "height": height, "scale": 1 },
                }),
                wait + Duration::from_secs(10),
            )
            .await
            .map_err(|e| format!("screenshot: {e}"))?;
        let Some(data) = shot["data"].as_str() else {
            return Ok(None);
        };
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("screenshot not base64: {e}"))?;
        if png.len() as u64 > s.screenshot_max_bytes {
            tracing::info!(bytes = png.len(), "screenshot over its byte cap; not kept");
            return Ok(None);
        }
        Ok(Some(Screenshot { png, width, height }))
    }
}

/// The draw calls READ_JS returned: `[canvas, text, x, y, size]` each, malformed ones (a
/// non-finite number comes back as `null`) skipped, at most `extract::canvas::MAX_CALLS`.
fn draw_calls(value: &Value) -> Vec<DrawCall> {
    let Some(list) = value.as_array() else {
        return Vec::new();
    };
    list.iter()
        .take(extract::canvas::MAX_CALLS)
        .filter_map(|c| {
            Some(DrawCall {
                canvas: Some(usize::try_from(c.get(0)?.as_u64()?).ok()?),
                text: c.get(1)?.as_str()?.to_owned(),
                x: c.get(2)?.as_f64()?,
                y: c.get(3)?.as_f64()?,
                size: c.get(4)?.as_f64().unwrap_or(0.0),
            })
        })
        .collect()
}

/// `innerText` as paragraphs: lines trimmed, empty ones dropped.
fn paragraphs(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rendered HTML without the renderer's element numbers.
fn strip_marks(html: &str) -> String {
    let pattern = format!(" {RENDER_MARK}=\"");
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find(&pattern) {
        out.push_str(&rest[..at]);
        let after = &rest[at + pattern.len()..];
        match after.find('"') {
            Some(end) if after[..end].bytes().all(|b| b.is_ascii_digit()) => {
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[at..at + pattern.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_stripped_and_nothing_else() {
        let html = r#"<div data-copyhound-i="12" id=a><p data-copyhound-i="13">x data-copyhound-i="no"</p></div>"#;
        assert_eq!(
            strip_marks(html),
            r#"<div id=a><p>x data-copyhound-i="no"</p></div>"#
        );
    }

    #[test]
    fn missing_binaries_name_the_packages() {
        let settings = RenderSettings {
            chromium: PathBuf::from("/nonexistent/chromium"),
            ..RenderSettings::default()
        };
        let err = Renderer::new(settings).err().unwrap();
        let text = err.to_string();
        assert!(
            text.contains("chromium chromium-driver")
                || text.contains("chromium and chromium-driver"),
            "{text}"
        );
        assert!(text.contains("/nonexistent/chromium"), "{text}");
    }
}
