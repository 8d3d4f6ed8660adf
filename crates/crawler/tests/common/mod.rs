//! Shared by the integration tests and the benchmark: a real axum fixture server on
//! 127.0.0.1:0 that plays a hostile novel site, page builders for common novel-site layouts
//! made from public-domain chapters (`tests/data`), and the extraction-quality measure.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

/// Crawl settings for the fixture server: loopback allowed, no delay, short timeouts.
pub fn local_crawl_settings() -> crawler::CrawlSettings {
    crawler::CrawlSettings {
        fetch: crawler::FetchSettings {
            safety: crawler::SafetySettings {
                allow_private: true,
                ..crawler::SafetySettings::default()
            },
            timeout: Duration::from_secs(5),
            ..crawler::FetchSettings::default()
        },
        politeness: crawler::PolitenessSettings {
            delay: Duration::ZERO,
            per_host_concurrency: 4,
            global_concurrency: 4,
            backoff_base: Duration::from_millis(100),
            ..crawler::PolitenessSettings::default()
        },
        ..crawler::CrawlSettings::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Test data

pub fn data_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

pub fn data(rel: &str) -> String {
    std::fs::read_to_string(data_path(rel)).unwrap_or_else(|e| panic!("tests/data/{rel}: {e}"))
}

/// A chapter: its heading and its paragraphs.
#[derive(Clone, Debug)]
pub struct Chapter {
    pub title: String,
    pub paragraphs: Vec<String>,
}

impl Chapter {
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// A Chinese chapter file: the heading line, then one paragraph per non-empty line.
pub fn zh_chapter(name: &str) -> Chapter {
    let text = data(&format!("zh/{name}.txt"));
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let title = lines.next().unwrap_or_default().to_owned();
    Chapter {
        title,
        paragraphs: lines.map(str::to_owned).collect(),
    }
}

/// An English Gutenberg chapter: "CHAPTER I." and its name, then paragraphs separated by
/// blank lines (hard-wrapped lines joined).
pub fn en_chapter(name: &str) -> Chapter {
    let text = data(&format!("en/{name}.txt"));
    let mut blocks = text
        .split("\n\n")
        .map(|b| b.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|b| !b.is_empty());
    let title = blocks.next().unwrap_or_default();
    Chapter {
        title,
        paragraphs: blocks.collect(),
    }
}

pub fn gbk(s: &str) -> Vec<u8> {
    encoding_rs::GBK.encode(s).0.into_owned()
}

// ---------------------------------------------------------------------------------------------
// Page builders: realistic layouts with navigation, chapter lists, ads and footers

const SITE: &str = "笔趣阁";

fn head(title: &str, charset_meta: Option<&str>) -> String {
    let meta = charset_meta.map_or(String::new(), |c| {
        format!(r#"<meta http-equiv="Content-Type" content="text/html; charset={c}" />"#)
    });
    format!(
        r#"<!DOCTYPE html><html><head>{meta}<title>{title}</title><meta name="keywords" content="{title},{SITE},最新章节,免费阅读"><link rel="stylesheet" href="/css/style.css"><script type="text/javascript" src="/js/common.js"></script><script>var bookid="1";var _hmt=_hmt||[];</script><style>.ad{{margin:8px}}#content{{font-size:18px;line-height:32px}}</style></head>"#
    )
}

fn top_nav() -> String {
    format!(
        r#"<div class="ywtop"><div class="ywtop_con"><a href="/">将{SITE}设为首页</a> <a href="javascript:void(0)">收藏{SITE}</a></div></div><div class="header"><div class="header_logo"><a href="/">{SITE}</a></div><form action="/search.php" method="get"><input type="text" name="q"><button type="submit">搜索</button></form></div><div class="nav"><ul><li><a href="/">首页</a></li><li><a href="/list/1_1.html">玄幻小说</a></li><li><a href="/list/2_1.html">修真小说</a></li><li><a href="/list/3_1.html">都市小说</a></li><li><a href="/list/4_1.html">历史小说</a></li><li><a href="/paihangbang/">排行榜单</a></li><li><a href="/quanben/">完本小说</a></li></ul></div>"#
    )
}

fn footer() -> String {
    format!(
        r#"<div class="footer"><div class="footer_link">&nbsp;新书推荐：<a href="/0_1/">元尊</a>、<a href="/0_2/">沧元图</a>、<a href="/0_3/">凡人修仙传</a>、<a href="/0_4/">遮天</a></div><div class="footer_cont"><p>本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传，让更多读者欣赏。</p><p>Copyright &copy; 2024 {SITE} All Rights Reserved. 粤ICP备00000000号</p><script>tongji();</script></div></div>"#
    )
}

fn ad_block(n: usize) -> String {
    format!(
        r#"<div class="ad"><script>ad_{n}();</script><a href="/ad/{n}" target="_blank"><img src="/ad/{n}.gif" alt="广告"></a><span>精品手游推荐，注册即送千元礼包！</span></div>"#
    )
}

fn sidebar_chapter_list(book: &str, titles: &[String]) -> String {
    let items: String = titles
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#"<li><a href="/{book}/{}.html">{t}</a></li>"#, i + 1))
        .collect();
    format!(r#"<div class="listtj"><h3>最新章节</h3><ul>{items}</ul></div>"#)
}

/// Navigation under and over a chapter: previous, table of contents, next.
#[derive(Clone, Debug)]
pub struct Nav {
    pub prev: String,
    pub toc: String,
    pub next: String,
    /// "下一页" for a continuation, "下一章" for the next chapter.
    pub next_label: &'static str,
}

fn chapter_nav(nav: &Nav) -> String {
    format!(
        r#"<div class="bottem1"><a href="{}">上一章</a> &larr; <a href="{}">章节目录</a> &rarr; <a href="{}">{}</a> <a href="javascript:addBookMark();">加入书签</a></div>"#,
        nav.prev, nav.toc, nav.next, nav.next_label
    )
}

/// The biquge layout: `<div id="content">` with `&nbsp;`-indented paragraphs separated by
/// `<br /><br />`, an injected site-address line, chapter nav above and below, ads.
pub fn div_br_page(
    book: &str,
    heading: &str,
    paragraphs: &[String],
    nav: &Nav,
    charset_meta: Option<&str>,
    more: Option<&str>,
) -> String {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("&nbsp;&nbsp;&nbsp;&nbsp;{p}<br /><br />"))
        .collect();
    let more = more.map_or(String::new(), |m| format!("{m}<br /><br />"));
    format!(
        r#"{head}<body><div id="wrapper">{top}<div class="box_con"><div class="con_top"><a href="/">{SITE}</a> &gt; <a href="/{book}/">三国演义</a> &gt; {heading}</div><div class="bookname"><h1>{heading}</h1>{nav}</div>{ad1}<div id="content">天才一秒记住本站地址：{SITE} www.biquge.example 最快更新！无广告！<br /><br />{body}{more}</div>{ad2}{nav}</div>{side}{foot}</div></body></html>"#,
        head = head(&format!("{heading}_三国演义_{SITE}"), charset_meta),
        top = top_nav(),
        nav = chapter_nav(nav),
        ad1 = ad_block(1),
        ad2 = ad_block(2),
        side = sidebar_chapter_list(
            book,
            &[
                "第一回 宴桃园豪杰三结义".into(),
                "第二回 张翼德怒鞭督邮".into()
            ]
        ),
        foot = footer(),
    )
}

/// A `<p>` article layout (WordPress-like): header, breadcrumbs, `<article>` of `<p>`s
/// with an inline ad block and share buttons, comments, sidebar, footer.
pub fn p_article_page(heading: &str, paragraphs: &[String], nav: &Nav) -> String {
    let body: String = paragraphs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ad = if i == 3 { ad_block(3) } else { String::new() };
            format!("<p>{}</p>{ad}", html_escape(p))
        })
        .collect();
    format!(
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{heading} | Free Novels Online</title></head><body><header class="site-header"><a href="/">Free Novels Online</a><nav class="main-navigation"><ul><li><a href="/">Home</a></li><li><a href="/genres/">Genres</a></li><li><a href="/latest/">Latest</a></li><li><a href="/popular/">Popular</a></li></ul></nav></header><div class="breadcrumbs"><a href="/">Home</a> » <a href="/alice/">Alice</a> » {heading}</div><main><article class="post"><h1 class="entry-title">{heading}</h1><div class="entry-content">{body}</div><div class="share-buttons"><a href="https://twitter.example/share">Tweet</a> <a href="https://facebook.example/share">Share</a></div><div class="post-nav"><a href="{prev}">Previous chapter</a> <a href="{toc}">Table of contents</a> <a href="{next}">Next chapter</a></div></article><section class="comments"><h3>3 comments</h3><div class="comment"><p>Thanks for the chapter!</p></div><div class="comment"><p>Can't wait for more, update faster please.</p></div></section></main><aside class="sidebar"><h3>Popular novels</h3><ul><li><a href="/n/1">Martial Peak</a></li><li><a href="/n/2">Against the Gods</a></li><li><a href="/n/3">Coiling Dragon</a></li></ul></aside><footer class="site-footer"><p>All novels are collected from the internet. Contact us for removal.</p><p>&copy; 2024 Free Novels Online</p></footer></body></html>"#,
        prev = nav.prev,
        toc = nav.toc,
        next = nav.next,
    )
}

/// An old table layout: one `<table>` for the page, the chapter in a `<td>` with `<br>`s, a
/// left column of links, a nav row.
pub fn table_page(heading: &str, paragraphs: &[String], nav: &Nav) -> String {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("　　{p}<br><br>\n"))
        .collect();
    format!(
        r#"<html><head><meta charset="utf-8"><title>{heading}</title></head><body bgcolor="E7F4FE"><table width="960" align="center" border="0"><tr><td colspan="2" class="top"><a href="/">首页</a> | <a href="/books/">书库</a> | <a href="/top/">排行</a> | <a href="/full/">全本</a></td></tr><tr><td width="180" valign="top" class="left"><b>热门小说</b><br><a href="/b/1">红楼梦</a><br><a href="/b/2">西游记</a><br><a href="/b/3">水浒传</a><br><a href="/b/4">儒林外史</a><br></td><td valign="top"><div align="center"><font size="5"><b>{heading}</b></font></div><hr>{body}</td></tr><tr><td colspan="2" align="center"><a href="{prev}">上一页</a> | <a href="{toc}">返回目录</a> | <a href="{next}">下一页</a></td></tr><tr><td colspan="2" align="center" class="copyright">Copyright 2009-2024 All rights reserved</td></tr></table></body></html>"#,
        prev = nav.prev,
        toc = nav.toc,
        next = nav.next,
    )
}

/// The 69shu layout: `<div class="txtnav">` holds the heading, a date and author line and an
/// ad block before the `<br>`-separated text, which ends with "(本章完)".
pub fn txtnav_page(heading: &str, paragraphs: &[String], nav: &Nav) -> String {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("&emsp;&emsp;{p}<br>\n"))
        .collect();
    format!(
        r#"{head}<body>{top}<div class="mybox"><div class="tools"><a href="{toc}">目录</a> <a href="/modules/article/addbookcase.php">加入书架</a></div><div class="txtnav"><h1>{heading}</h1><div class="txtinfo hide720"><span>2024-03-01</span> <span>作者： 罗贯中</span></div><div id="txtright"><script>loadAdv(2,0);</script></div>{body}<br>(本章完)</div><div class="page1"><a href="{prev}">上一章</a><a href="{toc}">目录</a><a href="{next}">{label}</a></div></div>{foot}</body></html>"#,
        head = head(heading, Some("gbk")),
        top = top_nav(),
        foot = footer(),
        prev = nav.prev,
        toc = nav.toc,
        next = nav.next,
        label = nav.next_label,
    )
}

/// A mobile site: `<div id="nr1">` of `<p>`s where every eighth paragraph carries the site's
/// watermark inline, then a "猜你喜欢" list of book blurbs (text with punctuation, the kind of
/// boilerplate that density alone mistakes for content).
pub fn mobile_page(heading: &str, paragraphs: &[String], nav: &Nav) -> String {
    let body: String = paragraphs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mark = if i % 8 == 7 {
                "『笔趣阁 m.biquge.example』"
            } else {
                ""
            };
            format!("<p>{p}{mark}</p>")
        })
        .collect();
    let blurbs: String = [
        ("元尊", "天地为炉，造化为工；阴阳为炭，万物为铜。少年周元，身负神秘圣纹，一路破阵斩敌，终登巅峰。"),
        ("沧元图", "我叫孟川，今年十五岁，是东宁府镜湖道院的小小学徒。天降妖魔，人族危亡，唯有刀剑可守护家人。"),
        ("凡人修仙传", "一个普通山村小子，偶然下进入到当地江湖小门派，成了一名记名弟子。他以这样身份，如何在门派中立足？"),
        ("遮天", "冰冷与黑暗并存的宇宙深处，九具庞大的龙尸拉着一口青铜古棺，亘古长存。这是太空探测器在枯寂的宇宙中捕捉到的一幅极其震撼的画面。"),
    ]
    .iter()
    .map(|(t, b)| format!(r#"<li><a href="/book/{t}/">{t}</a><p>{b}</p></li>"#))
    .collect();
    format!(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{heading}-三国演义-笔趣阁手机版</title></head><body><div class="header"><a href="/" class="back">返回</a><h1 class="title">三国演义</h1><a href="/s.php" class="search">搜索</a></div><div class="nr_set"><div id="lightdiv">关灯</div><div id="huyandiv">护眼</div><div id="fontbig">大</div><div id="fontsmall">小</div></div><div class="nr_page"><a href="{prev}">上一章</a><a href="{toc}">目录</a><a href="{next}">{label}</a></div><div id="nr_title">{heading}</div><div id="nr"><div id="nr1">{body}</div></div><div class="nr_page"><a href="{prev}">上一章</a><a href="{toc}">目录</a><a href="{next}">{label}</a></div><div class="like"><h3>猜你喜欢</h3><ul>{blurbs}</ul></div><div class="footer">笔趣阁手机版 m.biquge.example</div></body></html>"#,
        prev = nav.prev,
        toc = nav.toc,
        next = nav.next,
        label = nav.next_label,
    )
}

/// A publisher-style reader page: `<div class="read-content j_readContent">` of `<p>`s, an
/// author's note, a comment section and a long block of recommended-book blurbs in a plain
/// `<div>`.
pub fn reader_page(heading: &str, paragraphs: &[String], nav: &Nav) -> String {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<p>　　{p}</p>"))
        .collect();
    let comments: String = (1..=6)
        .map(|i| format!(r#"<li class="comment-item"><span class="user">书友{i}号</span><p>这一章写得太精彩了，作者加油，明天继续追更！</p></li>"#))
        .collect();
    let recs: String = (1..=8)
        .map(|i| format!(r#"<div class="book"><a href="/info/{i}"><img src="/c/{i}.jpg"></a><h4><a href="/info/{i}">推荐作品{i}</a></h4><p>这是一部热血沸腾的玄幻小说，少年崛起于微末，一路逆天而行，终成一代至尊。</p></div>"#))
        .collect();
    format!(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>{heading}_三国演义在线阅读</title></head><body><div class="wrap"><div class="crumbs-nav"><a href="/">首页</a> &gt; <a href="{toc}">三国演义</a></div><div class="main-text-wrap"><div class="text-head"><h3 class="j_chapterName">{heading}</h3><div class="text-info"><span>字数：4500</span><span>更新时间：2024-03-01</span></div></div><div class="read-content j_readContent">{body}</div><div class="author-say"><h4>作者有话说</h4><p>感谢大家的月票和推荐票，今天加更一章！</p></div></div><div class="chapter-control"><a href="{prev}">上一章</a><a href="{toc}">目录</a><a href="{next}">{label}</a></div><div class="comment-wrap"><h3>本章说</h3><ul>{comments}</ul></div><div>{recs}</div></div></body></html>"#,
        toc = nav.toc,
        prev = nav.prev,
        next = nav.next,
        label = nav.next_label,
    )
}

/// A book's table of contents in the biquge layout, with no charset anywhere.
pub fn toc_page(book: &str, titles: &[String]) -> String {
    let items: String = titles
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#"<dd><a href="/{book}/{}.html">{t}</a></dd>"#, i + 1))
        .collect();
    format!(
        r#"<html><head><title>三国演义最新章节列表_{SITE}</title></head><body>{top}<div id="maininfo"><div id="info"><h1>三国演义</h1><p>作&nbsp;&nbsp;者：罗贯中</p></div><div id="intro"><p>　　《三国演义》是中国古典四大名著之一，描写了从东汉末年到西晋初年之间近百年的历史风云，以描写战争为主。</p></div></div><div id="list"><dl><dt>《三国演义》正文</dt>{items}</dl></div>{foot}</body></html>"#,
        top = top_nav(),
        foot = footer(),
    )
}

pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

// ---------------------------------------------------------------------------------------------
// Extraction quality

/// Recall and boilerplate of extracted text against the expected text, by 8-character
/// shingles over the text with all whitespace removed: a character of the expected text is
/// recovered when some shingle covering it appears in the output; an output character is
/// boilerplate when no shingle covering it appears in the expected text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    pub expected_chars: usize,
    pub output_chars: usize,
    pub recall: f64,
    pub boilerplate: f64,
}

pub fn quality(expected: &str, output: &str) -> Quality {
    const K: usize = 8;
    let squash = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<Vec<char>>()
    };
    let (e, o) = (squash(expected), squash(output));
    fn shingles(v: &[char]) -> HashSet<&[char]> {
        v.windows(K).collect()
    }
    let covered = |v: &[char], other: &HashSet<&[char]>| -> usize {
        let mut hit = vec![false; v.len()];
        for (i, w) in v.windows(K).enumerate() {
            if other.contains(w) {
                hit[i..i + K].iter_mut().for_each(|h| *h = true);
            }
        }
        hit.iter().filter(|h| **h).count()
    };
    let (es, os) = (shingles(&e), shingles(&o));
    let recovered = covered(&e, &os);
    let genuine = covered(&o, &es);
    Quality {
        expected_chars: e.len(),
        output_chars: o.len(),
        recall: if e.is_empty() {
            1.0
        } else {
            recovered as f64 / e.len() as f64
        },
        boilerplate: if o.is_empty() {
            0.0
        } else {
            1.0 - genuine as f64 / o.len() as f64
        },
    }
}

// ---------------------------------------------------------------------------------------------
// The fixture server

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    pub query: Option<String>,
    pub at: Instant,
    pub headers: HeaderMap,
}

#[derive(Default)]
struct ServerState {
    base: String,
    hits: Mutex<Vec<Hit>>,
    counters: Mutex<HashMap<String, u32>>,
    book: Vec<Chapter>,
    alice: Vec<Chapter>,
    bench_pages: usize,
    /// The benchmark server keeps no request log, so its memory stays flat.
    record_hits: bool,
    /// Holds book requests (see [`FixtureServer::hold_book_after`]).
    hold: testkit::hold::Hold,
}

/// A real HTTP server on 127.0.0.1 with an ephemeral port. It stops when dropped, and in any
/// case after two minutes, so no test leaves it running.
pub struct FixtureServer {
    pub addr: SocketAddr,
    state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Chapter 3 of the book is split over three pages; this is where it is cut.
pub fn split_chapter(ch: &Chapter) -> [Vec<String>; 3] {
    let n = ch.paragraphs.len();
    let (a, b) = (n / 3, 2 * n / 3);
    [
        ch.paragraphs[..a].to_vec(),
        ch.paragraphs[a..b].to_vec(),
        ch.paragraphs[b..].to_vec(),
    ]
}

pub fn book() -> Vec<Chapter> {
    (1..=6)
        .map(|i| zh_chapter(&format!("sanguoyanyi_{i:02}")))
        .collect()
}

impl FixtureServer {
    pub async fn start() -> Self {
        Self::start_with_bench_pages(0).await
    }

    /// A server that also serves `/bench/{i}.html` for i in 0..pages: a tree of chapter pages
    /// where page i links to pages 10i+1..=10i+10.
    pub async fn start_with_bench_pages(bench_pages: usize) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(ServerState {
            base: format!("http://{addr}"),
            book: book(),
            alice: vec![en_chapter("alice_01"), en_chapter("alice_02")],
            bench_pages,
            record_hits: bench_pages == 0,
            ..ServerState::default()
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&state));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let server = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = tokio::time::timeout(Duration::from_secs(120), rx).await;
            });
            let _ = server.await;
        });
        Self {
            addr,
            state,
            shutdown: Some(tx),
        }
    }

    pub fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("http://{}{path}", self.addr)).expect("fixture url")
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    pub fn hits_on(&self, path: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }

    pub fn hit_paths(&self) -> HashSet<String> {
        self.hits().into_iter().map(|h| h.path).collect()
    }

    /// Answers `n` more requests for book pages (`/book/...`) and holds the ones after them
    /// until [`release`](Self::release): a test stops a crawl part-way at a point it
    /// chooses, however fast the crawl goes.
    pub fn hold_book_after(&self, n: usize) {
        self.state.hold.after(n);
    }

    /// Waits until a book request is held.
    pub async fn book_request_held(&self) {
        self.state.hold.held().await;
    }

    /// Answers the held requests and every later one.
    pub fn release(&self) {
        self.state.hold.release();
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn respond(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(body.into())
        .expect("response")
}

fn redirect(status: StatusCode, location: &str) -> Response {
    Response::builder()
        .status(status)
        .header(header::LOCATION, location)
        .body(Body::from("moved"))
        .expect("redirect")
}

fn html(body: String) -> Response {
    respond(StatusCode::OK, "text/html; charset=utf-8", body)
}

fn gbk_html(body: &str, content_type: &str) -> Response {
    respond(StatusCode::OK, content_type, gbk(body))
}

fn chapter_titles(book: &[Chapter]) -> Vec<String> {
    book.iter()
        .map(|c| c.title.replace('\u{3000}', " "))
        .collect()
}

/// The page of the book's chapter `n` (1-based), part `part` (1..=3 for chapter 3).
pub fn book_page(book: &[Chapter], n: usize, part: usize) -> String {
    let ch = &book[n - 1];
    let heading = ch.title.replace('\u{3000}', " ");
    let prev = if n == 1 {
        "/book/1/".to_owned()
    } else {
        format!("/book/1/{}.html", n - 1)
    };
    let next_chapter = if n == book.len() {
        "/book/1/".to_owned()
    } else {
        format!("/book/1/{}.html", n + 1)
    };
    if n != 3 {
        let nav = Nav {
            prev,
            toc: "/book/1/".into(),
            next: next_chapter,
            next_label: "下一章",
        };
        return div_br_page("book/1", &heading, &ch.paragraphs, &nav, Some("gbk"), None);
    }
    let parts = split_chapter(ch);
    let (next, label) = if part < 3 {
        (format!("/book/1/3_{}.html", part + 1), "下一页")
    } else {
        (next_chapter, "下一章")
    };
    let nav = Nav {
        prev,
        toc: "/book/1/".into(),
        next,
        next_label: label,
    };
    let more = (part < 3).then_some("本章未完，请点击下一页继续阅读");
    let heading = format!("{heading}（{part}/3）");
    div_br_page("book/1", &heading, &parts[part - 1], &nav, None, more)
}

async fn handle(State(state): State<Arc<ServerState>>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let headers = req.headers().clone();
    if state.record_hits {
        state.hits.lock().unwrap().push(Hit {
            path: path.clone(),
            query,
            at: Instant::now(),
            headers: headers.clone(),
        });
    }
    let count = if !state.record_hits {
        0
    } else {
        let mut c = state.counters.lock().unwrap();
        let n = c.entry(path.clone()).or_default();
        *n += 1;
        *n
    };
    if path.starts_with("/book/") {
        state.hold.pass().await;
    }
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segs.as_slice() {
        ["robots.txt"] => respond(
            StatusCode::OK,
            "text/plain",
            format!(
                "User-agent: *\nDisallow: /private/\n\nUser-agent: copyhound\nDisallow: /private/\nDisallow: /bench/disallowed\n\nSitemap: {}/sitemap.xml\n",
                state.base
            ),
        ),
        ["sitemap.xml"] => respond(
            StatusCode::OK,
            "application/xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{b}/book/1/</loc></url><url><loc>{b}/extra/sitemap-only.html</loc></url></urlset>"#,
                b = state.base
            ),
        ),
        [""] => html(format!(
            r#"<html><head><title>{SITE}</title></head><body>{}<div class="main"><h2>推荐</h2><ul><li><a href="/book/1/">三国演义</a></li><li><a href="/en/1.html">Alice (table)</a></li><li><a href="/private/secret.html">内部</a></li><li><a href="/status/404">失效链接</a></li><li><a href="/cal/2024/1">活动日历</a></li><li><a href="/stub">旧地址</a></li><li><a href="http://other.example/">友情链接</a></li><li><a href="mailto:admin@example.com">联系</a></li><li><a href="/dup/a">A</a></li><li><a href="/dup/b">B</a></li><li><a href="/bin">下载</a></li></ul></div>{}</body></html>"#,
            top_nav(),
            footer()
        )),
        ["book", "1", ""] => gbk_html(&toc_page("book/1", &chapter_titles(&state.book)), "text/html"),
        ["book", "1", file] => {
            let stem = file.trim_end_matches(".html");
            let (n, part) = match stem.split_once('_') {
                Some((n, p)) => (n.parse().unwrap_or(0), p.parse().unwrap_or(0)),
                None => (stem.parse().unwrap_or(0), 1),
            };
            if !(1..=state.book.len()).contains(&n) || !(1..=3).contains(&part) || (n != 3 && part != 1) {
                return respond(StatusCode::NOT_FOUND, "text/html", "<h1>404 Not Found</h1>");
            }
            let page = book_page(&state.book, n, part);
            // Chapter 1 declares its charset in the header only, the others in <meta> only,
            // the split chapter nowhere; chapter 4's server adds the classic default
            // `iso-8859-1`, which overrides its <meta> and is wrong.
            let ct = match n {
                1 => "text/html; charset=GBK",
                4 => "text/html; charset=iso-8859-1",
                _ => "text/html",
            };
            gbk_html(&page, ct)
        }
        ["extra", "sitemap-only.html"] => {
            let ch = &state.alice[0];
            let nav = Nav {
                prev: "/".into(),
                toc: "/".into(),
                next: "/".into(),
                next_label: "下一章",
            };
            html(p_article_page(&ch.title, &ch.paragraphs, &nav))
        }
        ["en", "1.html"] => {
            let ch = &state.alice[1];
            let nav = Nav {
                prev: "/".into(),
                toc: "/".into(),
                next: "/en/1.html".into(),
                next_label: "下一页",
            };
            html(table_page(&ch.title, &ch.paragraphs, &nav))
        }
        ["js", "1.html"] => {
            // The chapter written by a script, all in \uXXXX escapes, cut in two pieces.
            let ch = &state.book[1];
            let html_text: String = ch.paragraphs.iter().map(|p| format!("<p>{}</p>", html_escape(p))).collect();
            let escaped: String = html_text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            let (a, b) = escaped.split_at(escaped.len() / 12 * 6);
            html(format!(
                r#"<html><head><title>{}</title></head><body>{}<div id="content"></div><script>var t = "{a}" +
                "{b}"; document.getElementById("content").innerHTML = t;</script>{}</body></html>"#,
                ch.title, top_nav(), footer()
            ))
        }
        ["js", n @ ("2.html" | "3.html")] => {
            // An empty page whose script fetches the chapter from a JSON endpoint (under
            // /private/ for page 3, which robots.txt denies).
            let api = if *n == "2.html" { "/api/chapter/2.json" } else { "/private/api/3.json" };
            html(format!(
                r##"<html><head><title>第三回</title></head><body>{}<div id="content"></div><script>$.getJSON("{api}", function (d) {{ $("#content").html(d.data.content); }});</script>{}</body></html>"##,
                top_nav(), footer()
            ))
        }
        ["api", "chapter", "2.json"] => {
            let ch = &state.book[2];
            let body = serde_json::json!({"code": 0, "data": {"title": ch.title, "content": ch.paragraphs}});
            respond(StatusCode::OK, "application/json", body.to_string())
        }
        ["private", ..] => html("<html><body><p>secret</p></body></html>".into()),
        ["status", "404"] => respond(StatusCode::NOT_FOUND, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"),
        ["status", "500"] => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/html", "<h1>500</h1>"),
        ["status", "429"] if count == 1 => Response::builder()
            .status(StatusCode::TOO_MANY_REQUESTS)
            .header(header::RETRY_AFTER, "1")
            .body(Body::from("slow down"))
            .unwrap(),
        ["status", "429"] => html("<html><body><div id=content>终于等到你，还好我没放弃。</div></body></html>".into()),
        ["status", "503"] if count == 1 => {
            let at = httpdate(std::time::SystemTime::now() + Duration::from_secs(2));
            Response::builder()
                .status(StatusCode::SERVICE_UNAVAILABLE)
                .header(header::RETRY_AFTER, at)
                .body(Body::from("maintenance"))
                .unwrap()
        }
        ["status", "503"] => html("<html><body><p>back</p></body></html>".into()),
        ["cal", y, m] => {
            // A calendar: every month links to the next and previous month and the next year,
            // forever.
            let (y, m): (i32, i32) = (y.parse().unwrap_or(2024), m.parse().unwrap_or(1));
            let next = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
            let prev = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
            html(format!(
                r#"<html><body><h1>{y}年{m}月活动</h1><p>本月暂无活动。</p><a href="/cal/{}/{}">上个月</a> <a href="/cal/{}/{}">下个月</a> <a href="/cal/{}/{m}">明年</a></body></html>"#,
                prev.0,
                prev.1,
                next.0,
                next.1,
                y + 1
            ))
        }
        ["loop", "a"] => redirect(StatusCode::FOUND, "/loop/b"),
        ["loop", "b"] => redirect(StatusCode::MOVED_PERMANENTLY, "/loop/a"),
        ["chain", n] => {
            let n: u32 = n.parse().unwrap_or(0);
            redirect(StatusCode::FOUND, &format!("/chain/{}", n + 1))
        }
        ["moved"] => redirect(StatusCode::MOVED_PERMANENTLY, "/book/1/1.html#top"),
        ["redirect-private"] => redirect(StatusCode::FOUND, "http://10.255.255.1/secret"),
        ["stub"] => html(r#"<html><body><br><br><script>window.location="/book/1/";</script><center><h3><a href="/book/1/"><p>&#x5982;&#x679C;&#x60A8;&#x7684;&#x9875;&#x9762;&#x6CA1;&#x6709;&#x81EA;&#x52A8;&#x8DF3;&#x8F6C;&#xFF0C;&#x8BF7;&#x70B9;&#x51FB;&#x8FD9;&#x91CC;</p></a></h3></center></body></html>"#.into()),
        ["slow"] => {
            // Headers at once, then one byte every 100 ms for at most 10 s.
            let stream = futures_util::stream::unfold(0u32, |i| async move {
                if i >= 100 {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                Some((Ok::<_, std::io::Error>(Bytes::from_static(b"x")), i + 1))
            });
            respond(StatusCode::OK, "text/html", Body::from_stream(stream))
        }
        ["huge"] => {
            // 50 MB of HTML in 64 KiB chunks, streamed without a Content-Length.
            const CHUNK: usize = 64 * 1024;
            const TOTAL: usize = 50 * 1024 * 1024;
            let chunk = Bytes::from(b"<p>".iter().chain(&[b'x'; CHUNK - 7]).chain(b"</p>").copied().collect::<Vec<u8>>());
            let stream = futures_util::stream::unfold(0usize, move |sent| {
                let chunk = chunk.clone();
                async move { (sent < TOTAL).then(|| (Ok::<_, std::io::Error>(chunk), sent + CHUNK)) }
            });
            respond(StatusCode::OK, "text/html", Body::from_stream(stream))
        }
        ["bin"] => respond(StatusCode::OK, "application/octet-stream", vec![0u8; 1024 * 1024]),
        ["image.png"] => respond(StatusCode::OK, "image/png", b"\x89PNG\r\n\x1a\n....".to_vec()),
        ["no-type"] => Response::builder().body(Body::from("<html><body><p>没有类型的页面。</p></body></html>")).unwrap(),
        ["gzip"] => {
            use std::io::Write;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all("<html><body><p>压缩的页面，gzip。</p></body></html>".as_bytes()).unwrap();
            Response::builder()
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::CONTENT_ENCODING, "gzip")
                .body(Body::from(gz.finish().unwrap()))
                .unwrap()
        }
        ["br"] => {
            let mut out = Vec::new();
            let input = "<html><body><p>压缩的页面，brotli。</p></body></html>".as_bytes();
            brotli::BrotliCompress(&mut &input[..], &mut out, &Default::default()).unwrap();
            Response::builder()
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::CONTENT_ENCODING, "br")
                .body(Body::from(out))
                .unwrap()
        }
        ["etag"] => {
            if headers.get(header::IF_NONE_MATCH).is_some_and(|v| v == "\"v1\"") {
                return Response::builder()
                    .status(StatusCode::NOT_MODIFIED)
                    .header(header::ETAG, "\"v1\"")
                    .body(Body::empty())
                    .unwrap();
            }
            Response::builder()
                .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
                .header(header::ETAG, "\"v1\"")
                .header(header::LAST_MODIFIED, "Wed, 21 Oct 2015 07:28:00 GMT")
                .body(Body::from(r#"<html><body><div id="content">有版本号的页面，第二次应当返回304。</div><a href="/etag-child">下一章</a></body></html>"#))
                .unwrap()
        }
        ["etag-child"] => html("<html><body><p>子页面。</p></body></html>".into()),
        ["no-content"] => Response::builder()
            .status(StatusCode::NO_CONTENT)
            .body(Body::empty())
            .unwrap(),
        ["dup", _] => html("<html><body><p>两个网址，同一个页面。</p></body></html>".into()),
        ["big5"] => {
            // The Gutenberg scrape is one line per chapter.
            let text = data("zh/jinghuayuan_hant_01.txt");
            let page = format!("<html><head><title>鏡花緣</title></head><body><div id=\"content\">{}</div></body></html>", text.trim());
            respond(StatusCode::OK, "text/html", encoding_rs::BIG5.encode(&page).0.into_owned())
        }
        ["cf"] => respond(StatusCode::FORBIDDEN, "text/html; charset=UTF-8", data("html/69shuba_cloudflare_challenge.html")),
        ["bench", file] => {
            let i: usize = file.trim_end_matches(".html").parse().unwrap_or(usize::MAX);
            if i >= state.bench_pages {
                return respond(StatusCode::NOT_FOUND, "text/html", "<h1>404</h1>");
            }
            let ch = &state.book[i % state.book.len()];
            let children: Vec<String> = (10 * i + 1..=10 * i + 10)
                .filter(|c| *c < state.bench_pages)
                .map(|c| format!(r#"<a href="/bench/{c}.html">第{c}章</a>"#))
                .collect();
            let nav = Nav {
                prev: "/bench/0.html".into(),
                toc: "/bench/0.html".into(),
                next: format!("/bench/{}.html", (i + 1) % state.bench_pages),
                next_label: "下一章",
            };
            let heading = format!("第{i}章 {}", ch.title);
            let page = div_br_page("bench", &heading, &ch.paragraphs, &nav, Some("gbk"), Some(&children.join(" ")));
            gbk_html(&page, "text/html")
        }
        _ => respond(StatusCode::NOT_FOUND, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"),
    }
}

fn httpdate(t: std::time::SystemTime) -> String {
    let dt: chrono::DateTime<chrono::Utc> = t.into();
    dt.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// A `HeaderValue` from a static string (test convenience).
pub fn hv(s: &'static str) -> HeaderValue {
    HeaderValue::from_static(s)
}

// ---------------------------------------------------------------------------------------------
// Pages whose scripts build their text (issue #27)

pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= c.len() {
                A[(n >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

pub fn char_codes(s: &str) -> String {
    s.encode_utf16()
        .map(|u| u.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

pub fn reversed_escaped(s: &str) -> String {
    let units: Vec<u16> = s.encode_utf16().collect();
    units.iter().rev().map(|u| format!("\\u{u:04x}")).collect()
}

/// A page whose `<div id=content>` is empty and whose inline scripts build `text` (one
/// paragraph) at load time, each way pirate pages do it (issue #27): base64 through `atob`,
/// char codes, a reversed string, a deferred jQuery callback.
pub fn built_pages(text: &str) -> Vec<(&'static str, String)> {
    let html = format!("<p>{text}</p>");
    let page = |body: &str| {
        format!(
            "<html><head><title>第一回</title></head><body><div class=nav><a href=/>首页</a> <a href=/2.html>下一章</a></div><div id=content></div>{body}</body></html>"
        )
    };
    vec![
        (
            "atob",
            page(&format!(
                "<script>var d = '{}'; document.getElementById('content').innerHTML = decodeURIComponent(escape(atob(d)));</script>",
                base64(html.as_bytes())
            )),
        ),
        (
            "char codes",
            page(&format!(
                "<script>var a = [{}]; var s = ''; for (var i = 0; i < a.length; i++) s += String.fromCharCode(a[i]); document.querySelector('#content').innerHTML = s;</script>",
                char_codes(&html)
            )),
        ),
        (
            "reversed",
            page(&format!(
                "<script>var r = \"{}\"; document.getElementById('content').innerHTML = r.split('').reverse().join('');</script>",
                reversed_escaped(&html)
            )),
        ),
        (
            "jquery, deferred",
            page(&format!(
                "<script>$(function () {{ $('#content').html(String.fromCharCode.apply(null, [{}])); }});</script>",
                char_codes(&html)
            )),
        ),
    ]
}
