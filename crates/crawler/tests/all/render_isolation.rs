//! What a rendered page cannot reach or take (issue #43, points 2 and 3), in a real headless
//! Chromium: no packet to an address the crawl refused, UDP (WebRTC) included, and none from
//! the browser's own services or resolver; no memory past `max_memory_mib` however it is
//! held, and no popups.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use crawler::render::RenderSettings;
use crawler::{AddressPolicy, RenderRequest, Renderer, SafetySettings};
use extract::Extractor;
use url::Url;

const HTML: &str = "text/html; charset=utf-8";

fn settings() -> RenderSettings {
    RenderSettings {
        enabled: true,
        page_timeout: Duration::from_secs(15),
        script_timeout: Duration::from_secs(5),
        max_requests: 200,
        pool_size: 1,
        ..RenderSettings::default()
    }
}

fn extractor() -> Arc<Extractor> {
    Arc::new(Extractor::new(&extract::ExtractSettings::default()).unwrap())
}

/// Only the page's own server, 127.0.0.1, is allowed: every other loopback address is refused
/// like any internal one.
fn own_server_only() -> Arc<AddressPolicy> {
    Arc::new(AddressPolicy::new(&SafetySettings {
        allow_private: false,
        allowed_networks: vec!["127.0.0.1/32".parse().unwrap()],
        ..SafetySettings::default()
    }))
}

fn request(addr: SocketAddr, path: &str) -> RenderRequest {
    RenderRequest {
        url: Url::parse(&format!("http://{addr}{path}")).unwrap(),
        policy: own_server_only(),
        allow_url: None,
        screenshot: false,
    }
}

/// A UDP socket and a TCP listener on 127.0.0.2, which the crawl refuses: anything that
/// reaches either went around the crawl's rules.
struct Canaries {
    udp: std::net::UdpSocket,
    tcp: std::net::TcpListener,
}

impl Canaries {
    fn new() -> Self {
        let udp = std::net::UdpSocket::bind("127.0.0.2:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let tcp = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        Self { udp, tcp }
    }

    fn udp_port(&self) -> u16 {
        self.udp.local_addr().unwrap().port()
    }

    fn tcp_port(&self) -> u16 {
        self.tcp.local_addr().unwrap().port()
    }

    /// Both are still untouched: no datagram waits to be read, no connection to be accepted.
    fn assert_untouched(&self) {
        let mut buf = [0u8; 2048];
        match self.udp.recv_from(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("a datagram reached the refused address: {other:?}"),
        }
        match self.tcp.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("a connection reached the refused address: {other:?}"),
        }
    }
}

/// What the page reported of its WebRTC gathering, and the signal that it did.
type Gathering = (Arc<Mutex<Option<String>>>, Arc<tokio::sync::Notify>);

/// The page's own server: `/net.html` tries every way out to the canaries and reports what
/// its WebRTC gathering found at `/gathered`; `/hold`, an image of the page, is answered
/// only once that report came (or after 20 s), so the page's load, which the renderer waits
/// for, comes after the attempts.
async fn network_site(canaries: &Canaries) -> (SocketAddr, Arc<Mutex<Option<String>>>) {
    let (udp, tcp) = (canaries.udp_port(), canaries.tcp_port());
    let page = format!(
        r#"<html><head><title>第一回</title></head><body><div id=content><p>{text}</p></div><div id=ice></div>
<script>
var found = [];
var reported = false;
function report() {{
  if (reported) return;
  reported = true;
  document.getElementById('ice').textContent = JSON.stringify(found);
  new Image().src = '/gathered?c=' + encodeURIComponent(JSON.stringify(found));
}}
try {{
  var pc = new RTCPeerConnection({{ iceServers: [
    {{ urls: 'stun:127.0.0.2:{udp}' }},
    {{ urls: 'turn:127.0.0.2:{udp}?transport=udp', username: 'u', credential: 'p' }},
    {{ urls: 'stun:stun.refused.test:{udp}' }}
  ] }});
  pc.createDataChannel('leak');
  pc.onicecandidate = function (e) {{ if (e.candidate) found.push(e.candidate.candidate); else report(); }};
  pc.createOffer().then(function (o) {{ return pc.setLocalDescription(o); }}).catch(function (e) {{ found.push('error ' + e); report(); }});
}} catch (e) {{ found.push('no webrtc ' + e); report(); }}
// A refused server that does not answer keeps gathering going for long: what was sent, was
// sent at its start.
setTimeout(report, 4000);
fetch('http://127.0.0.2:{tcp}/secret').catch(function () {{}});
new Image().src = 'http://127.0.0.2:{tcp}/img';
try {{ new WebSocket('ws://127.0.0.2:{tcp}/ws'); }} catch (e) {{}}
</script><img src=/hold></body></html>"#,
        text = "话说天下大势，分久必合，合久必分。".repeat(20),
    );
    let report: Arc<Mutex<Option<String>>> = Arc::default();
    let arrived = Arc::new(tokio::sync::Notify::new());
    let app = Router::new()
        .route(
            "/net.html",
            get(move || {
                let page = page.clone();
                async move { ([(header::CONTENT_TYPE, HTML)], page) }
            }),
        )
        .route(
            "/gathered",
            get(
                |State((report, arrived)): State<Gathering>,
                 Query(q): Query<HashMap<String, String>>| async move {
                    *report.lock().unwrap() = Some(q.get("c").cloned().unwrap_or_default());
                    arrived.notify_one();
                    "ok"
                },
            ),
        )
        .route(
            "/hold",
            get(|State((_, arrived)): State<Gathering>| async move {
                let _ = tokio::time::timeout(Duration::from_secs(20), arrived.notified()).await;
                axum::http::StatusCode::NO_CONTENT
            }),
        )
        .with_state((Arc::clone(&report), arrived));
    (serve(app).await, report)
}

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_packet_reaches_a_refused_address_udp_included() {
    let canaries = Canaries::new();
    let (addr, report) = network_site(&canaries).await;
    let renderer = Renderer::new(settings()).unwrap();
    let rendered = renderer
        .render(&extractor(), request(addr, "/net.html"))
        .await
        .unwrap();
    let gathered = report.lock().unwrap().clone();
    let gathered = gathered.expect("the page reported its WebRTC gathering before its load");
    canaries.assert_untouched();
    // The page learnt nothing of the network either: no candidate at all (a host candidate
    // names this machine's addresses, a server-reflexive one would say a STUN server
    // answered).
    assert_eq!(gathered, "[]", "{gathered}");
    assert!(
        rendered.refused.iter().any(|r| r.contains("127.0.0.2")),
        "{:?}",
        rendered.refused
    );
}

/// Runs Chromium under strace (through a wrapper set as the renderer's `chromium`), writing
/// the arguments it got to `args` and its network system calls to `trace` in `dir`.
fn traced_chromium(dir: &Path) -> std::path::PathBuf {
    let strace = ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("strace is not installed: apt-get install strace (the test watches every packet the browser sends with it)");
    let wrapper = dir.join("chromium");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > {args}\nexec {strace} -f -qq -yy -e signal=none \
         -e trace=connect,sendto,sendmsg,sendmmsg,write,writev -o {trace} {chromium} \"$@\"\n",
        args = dir.join("args").display(),
        trace = dir.join("trace").display(),
        chromium = RenderSettings::default().chromium.display(),
    );
    std::fs::write(&wrapper, script).unwrap();
    let mut permissions = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).unwrap();
    wrapper
}

/// The system calls of `trace` that put a packet on the network other than a TCP connection
/// to `proxy`: a TCP connect elsewhere (its SYN), and any send on a UDP socket (a `connect`
/// of a UDP socket sends nothing: Chromium connects one to 8.8.8.8 to learn its own route).
fn packets_past(trace: &str, proxy: SocketAddr) -> Vec<String> {
    let to_proxy = format!(
        "sin_port=htons({}), sin_addr=inet_addr(\"{}\")",
        proxy.port(),
        proxy.ip()
    );
    trace
        .lines()
        .filter(|line| {
            let call = line
                .split_once(' ')
                .map_or("", |(_, rest)| rest.trim_start());
            let tcp_connect =
                call.starts_with("connect(") && call.contains("<TCP") && !call.contains(&to_proxy);
            let udp_send = ["sendto(", "sendmsg(", "sendmmsg(", "write(", "writev("]
                .iter()
                .any(|c| call.starts_with(c))
                && call.contains("<UDP");
            tcp_connect || udp_send
        })
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_sends_nothing_but_to_its_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let canaries = Canaries::new();
    let (addr, report) = network_site(&canaries).await;
    let renderer = Renderer::new(RenderSettings {
        chromium: traced_chromium(dir.path()),
        ..settings()
    })
    .unwrap();
    renderer
        .render(&extractor(), request(addr, "/net.html"))
        .await
        .unwrap();
    assert!(
        report.lock().unwrap().is_some(),
        "the page ran its attempts"
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    // Read while the browser lives: strace writes each call as it returns.
    let trace = std::fs::read_to_string(dir.path().join("trace")).unwrap();
    let proxy: SocketAddr = args
        .iter()
        .find_map(|a| a.strip_prefix("--proxy-server=http://"))
        .expect("a proxy")
        .parse()
        .unwrap();
    assert!(
        trace.contains(&format!("htons({})", proxy.port())),
        "the trace saw the browser's own requests"
    );
    let leaks = packets_past(&trace, proxy);
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    canaries.assert_untouched();
    // What the trace of one page cannot show (update checks start minutes later) is off by
    // its switch.
    for wanted in [
        format!(
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {}",
            proxy.ip()
        ),
        "--webrtc-ip-handling-policy=disable_non_proxied_udp".to_owned(),
        "--disable-background-networking".to_owned(),
        "--disable-component-update".to_owned(),
        "--disable-domain-reliability".to_owned(),
        "--disable-sync".to_owned(),
        "--disable-client-side-phishing-detection".to_owned(),
    ] {
        assert!(
            args.contains(&wanted.as_str()),
            "{wanted} missing: {args:?}"
        );
    }
    assert!(!args.contains(&"--disable-popup-blocking"), "{args:?}");
}

#[test]
fn the_trace_check_finds_what_leaks() {
    let proxy: SocketAddr = "127.0.0.1:4000".parse().unwrap();
    let trace = r#"12 connect(25<UDPv6:[41327]>, {sa_family=AF_INET6, sin6_port=htons(443), inet_pton(AF_INET6, "2001:4860:4860::8888", &sin6_addr)}, 28) = 0
12 connect(25<TCP:[41328]>, {sa_family=AF_INET, sin_port=htons(4000), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)
12 write(7<TCP:[127.0.0.1:5000->127.0.0.1:4000]>, "CONNECT", 7) = 7
12 write(9<pipe:[1]>, "x", 1) = 1
12 sendto(26<UDP:[224.0.0.251:5353]>, "\0\0", 129, 0, {sa_family=AF_INET, sin_port=htons(5353), sin_addr=inet_addr("224.0.0.251")}, 16) = 129
12 sendto(142<UDP:[192.0.2.2:44261->10.255.255.53:53]>, "\4\373", 39, MSG_NOSIGNAL, NULL, 0) = 39
12 connect(27<TCP:[41330]>, {sa_family=AF_INET, sin_port=htons(4001), sin_addr=inet_addr("127.0.0.2")}, 16) = -1 EINPROGRESS"#;
    let leaks = packets_past(trace, proxy);
    assert_eq!(leaks.len(), 3, "{leaks:?}");
    assert!(leaks[0].contains("224.0.0.251"));
    assert!(leaks[1].contains("10.255.255.53"));
    assert!(leaks[2].contains("127.0.0.2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_blank_clicks_open_no_popups() {
    let opened = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&opened);
    let arrived = Arc::new(tokio::sync::Notify::new());
    let told = Arc::clone(&arrived);
    let page = "<html><body><div id=content><p>第一回</p></div>\
        <a id=pop href=/popup.html target=_blank rel=opener>next</a>\
        <form id=f action=/popup.html target=_blank></form>\
        <script>for (var i = 0; i < 60; i++) document.getElementById('pop').click();\
        document.getElementById('f').submit();</script><img src=/hold></body></html>";
    let app = Router::new()
        .route(
            "/popups.html",
            get(move || async move { ([(header::CONTENT_TYPE, HTML)], page) }),
        )
        .route(
            "/popup.html",
            get(move || {
                let counted = Arc::clone(&counted);
                let told = Arc::clone(&told);
                async move {
                    counted.fetch_add(1, Ordering::Relaxed);
                    told.notify_one();
                    ([(header::CONTENT_TYPE, HTML)], "<p>popup</p>")
                }
            }),
        )
        // The page's load waits for a popup's request, or for five seconds without one:
        // a popup, if one opens, asks for its page at once.
        .route(
            "/hold",
            get(move || {
                let arrived = Arc::clone(&arrived);
                async move {
                    let _ = tokio::time::timeout(Duration::from_secs(5), arrived.notified()).await;
                    axum::http::StatusCode::NO_CONTENT.into_response()
                }
            }),
        );
    let addr = serve(app).await;
    let renderer = Renderer::new(settings()).unwrap();
    let rendered = renderer
        .render(&extractor(), request(addr, "/popups.html"))
        .await
        .unwrap();
    assert!(rendered.text.contains("第一回"), "{}", rendered.text);
    assert_eq!(opened.load(Ordering::Relaxed), 0, "popups opened");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_outside_the_js_heap_is_capped_and_the_next_page_renders() {
    // Array buffers and canvases: neither is in V8's old space, which max_heap_mib caps.
    // Two GiB at most, should the cap fail.
    let hog = "<html><body><div id=content><p>第一回</p></div><script>\
        var keep = [];\
        for (var i = 0; i < 24; i++) { var b = new Uint8Array(64 << 20); b.fill(i + 1); keep.push(b); }\
        for (var j = 0; j < 8; j++) { var c = document.createElement('canvas'); c.width = 4096; c.height = 4096;\
          var x = c.getContext('2d'); x.fillStyle = 'rgb(' + j + ',1,2)'; x.fillRect(0, 0, 4096, 4096);\
          x.getImageData(0, 0, 1, 1); keep.push(c); }\
        document.getElementById('content').textContent = 'held ' + keep.length;\
        </script></body></html>";
    let plain =
        "<html><body><div id=content><p>话说天下大势，分久必合，合久必分。</p></div></body></html>";
    let app = Router::new()
        .route(
            "/hog.html",
            get(move || async move { ([(header::CONTENT_TYPE, HTML)], hog) }),
        )
        .route(
            "/plain.html",
            get(move || async move { ([(header::CONTENT_TYPE, HTML)], plain) }),
        );
    let addr = serve(app).await;
    let renderer = Renderer::new(RenderSettings {
        max_heap_mib: 64,
        max_memory_mib: 900,
        ..settings()
    })
    .unwrap();
    let err = renderer
        .render(&extractor(), request(addr, "/hog.html"))
        .await
        .expect_err("a page holding two GiB is over a cap of 900 MiB");
    let message = err.to_string();
    assert!(message.contains("over its cap of 900 MiB"), "{message}");
    assert!(
        message.contains("crawler.render.max_memory_mib"),
        "{message}"
    );
    let next = renderer
        .render(&extractor(), request(addr, "/plain.html"))
        .await
        .unwrap();
    assert!(next.text.contains("分久必合"), "{}", next.text);
    assert_eq!(renderer.browsers_started(), 2);
}
