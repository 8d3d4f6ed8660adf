//! Shared by the integration tests and the benchmarks (and the crawler's, which serve these
//! pages from a fixture site): page builders for common novel-site layouts made from
//! public-domain chapters (`tests/data`), pages whose scripts build their text, and the
//! extraction-quality measure.
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------------
// Test data

pub fn data_path(rel: &str) -> PathBuf {
    // By way of the crates folder: the crawler's tests build these pages too.
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../extract/tests/data")
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

pub const SITE: &str = "笔趣阁";

fn head(title: &str, charset_meta: Option<&str>) -> String {
    let meta = charset_meta.map_or(String::new(), |c| {
        format!(r#"<meta http-equiv="Content-Type" content="text/html; charset={c}" />"#)
    });
    format!(
        r#"<!DOCTYPE html><html><head>{meta}<title>{title}</title><meta name="keywords" content="{title},{SITE},最新章节,免费阅读"><link rel="stylesheet" href="/css/style.css"><script type="text/javascript" src="/js/common.js"></script><script>var bookid="1";var _hmt=_hmt||[];</script><style>.ad{{margin:8px}}#content{{font-size:18px;line-height:32px}}</style></head>"#
    )
}

pub fn top_nav() -> String {
    format!(
        r#"<div class="ywtop"><div class="ywtop_con"><a href="/">将{SITE}设为首页</a> <a href="javascript:void(0)">收藏{SITE}</a></div></div><div class="header"><div class="header_logo"><a href="/">{SITE}</a></div><form action="/search.php" method="get"><input type="text" name="q"><button type="submit">搜索</button></form></div><div class="nav"><ul><li><a href="/">首页</a></li><li><a href="/list/1_1.html">玄幻小说</a></li><li><a href="/list/2_1.html">修真小说</a></li><li><a href="/list/3_1.html">都市小说</a></li><li><a href="/list/4_1.html">历史小说</a></li><li><a href="/paihangbang/">排行榜单</a></li><li><a href="/quanben/">完本小说</a></li></ul></div>"#
    )
}

pub fn footer() -> String {
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

pub fn chapter_titles(book: &[Chapter]) -> Vec<String> {
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
