//! The rendered fetch's cost (issue #25): the quality bench's pirate pages served on
//! 127.0.0.1 and rendered by a pool of headless Chromium, each with a full-page screenshot.
//!
//! `cargo bench -p bench --bench render -- [PAGES] [POOL]` (defaults: 60 pages, a pool of 2)
//! prints rendered pages per second, the pool's peak memory (the resident memory of every
//! process under this one, chromedriver and Chromium's, sampled every 50 ms) and the
//! screenshots' bytes per page. Needs `chromium` and `chromium-driver`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bench::pirate::PageOptions;
use crawler::render::RenderSettings;
use crawler::{AddressPolicy, RenderRequest, Renderer};
use extract::Extractor;
use pipeline::demo::{PageKind, SitePage, SiteServer};

/// Resident bytes of every process descending from this one (Linux `/proc`).
fn descendants_rss() -> u64 {
    let me = std::process::id();
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command may hold spaces and parentheses: fields follow the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parent.insert(pid, ppid);
        }
    }
    let page = 4096;
    parent
        .keys()
        .filter(|&&pid| {
            let mut at = pid;
            for _ in 0..64 {
                match parent.get(&at) {
                    Some(&p) if p == me => return true,
                    Some(&p) if p > 1 => at = p,
                    _ => return false,
                }
            }
            false
        })
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/statm")).ok())
        .filter_map(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|pages| pages * page)
        .sum()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(60);
    let pool: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let settings = RenderSettings {
        pool_size: pool,
        ..RenderSettings::default()
    };
    if let Some(why) = settings.unavailable() {
        anyhow::bail!("rendering is unavailable: {why}; install chromium and chromium-driver");
    }
    let options = PageOptions {
        corpus: None,
        per_case: 4,
        seed: 1,
        chapter_bytes: 12_000,
    };
    let corpus = options.corpus()?;
    let pages = options.pages(&corpus);
    let dir = tempfile::tempdir()?;
    let paths = bench::html::write_pages(&pages, &HashMap::new(), dir.path(), true, None)?;
    let mut site = Vec::new();
    let mut html = Vec::new();
    for entry in walk(&dir.path().join("pages"))? {
        let rel = entry
            .strip_prefix(dir.path())?
            .to_string_lossy()
            .replace('\\', "/");
        site.push(SitePage {
            path: format!("/{rel}"),
            kind: PageKind::Copy,
            body: std::fs::read(&entry)?,
        });
        if paths.contains(&entry) {
            html.push(format!("/{rel}"));
        }
    }
    html.sort();
    html.truncate(wanted);
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let server = SiteServer::start(listener, site)?;
        let base = format!("http://{}", server.addr());
        let renderer = Arc::new(Renderer::new(settings)?);
        let extractor = Arc::new(Extractor::new(&extract::ExtractSettings::default())?);
        let urls = Arc::new(html);
        // Browsers start on first use: one warm-up page each, not timed.
        let mut warm = tokio::task::JoinSet::new();
        for i in 0..pool {
            let (renderer, extractor, url) = (
                Arc::clone(&renderer),
                Arc::clone(&extractor),
                format!("{base}{}", urls[i % urls.len()]),
            );
            warm.spawn(async move { renderer.render(&extractor, request(&url)).await });
        }
        while let Some(done) = warm.join_next().await {
            done??;
        }
        let peak = Arc::new(AtomicU64::new(0));
        let sampling = {
            let peak = Arc::clone(&peak);
            tokio::spawn(async move {
                loop {
                    let rss = tokio::task::spawn_blocking(descendants_rss)
                        .await
                        .unwrap_or(0);
                    peak.fetch_max(rss, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        };
        let next = Arc::new(AtomicUsize::new(0));
        let shots = Arc::new(AtomicU64::new(0));
        let shot_count = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..pool {
            let (renderer, extractor, urls, next, shots, shot_count, failed, base) = (
                Arc::clone(&renderer),
                Arc::clone(&extractor),
                Arc::clone(&urls),
                Arc::clone(&next),
                Arc::clone(&shots),
                Arc::clone(&shot_count),
                Arc::clone(&failed),
                base.clone(),
            );
            workers.spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = urls.get(i) else { break };
                    match renderer
                        .render(&extractor, request(&format!("{base}{path}")))
                        .await
                    {
                        Ok(r) => {
                            if let Some(s) = r.screenshot {
                                shots.fetch_add(s.png.len() as u64, Ordering::Relaxed);
                                shot_count.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(e) => {
                            eprintln!("{path}: {e}");
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
        while workers.join_next().await.is_some() {}
        let elapsed = started.elapsed();
        sampling.abort();
        let n = urls.len();
        let count = shot_count.load(Ordering::Relaxed).max(1) as u64;
        println!(
            "rendered {n} pages with a pool of {pool} in {:.1} s: {:.2} pages/s ({} failed)",
            elapsed.as_secs_f64(),
            n as f64 / elapsed.as_secs_f64(),
            failed.load(Ordering::Relaxed)
        );
        println!(
            "peak memory of the pool: {:.0} MiB",
            peak.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0)
        );
        println!(
            "screenshots: {} KiB per page on average ({} taken)",
            shots.load(Ordering::Relaxed) / count / 1024,
            shot_count.load(Ordering::Relaxed)
        );
        drop(renderer);
        server.stop().await?;
        anyhow::Ok(())
    })
}

fn request(url: &str) -> RenderRequest {
    RenderRequest {
        url: url::Url::parse(url).expect("a page url"),
        policy: Arc::new(AddressPolicy::allow_all()),
        allow_url: None,
        screenshot: true,
    }
}

fn walk(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}
