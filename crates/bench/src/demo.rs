//! The pages of `copyhound demo`'s sites, made from `pipeline::demo`'s sample works with the
//! pirate-page generator ([`crate::pirate`]), one page of each [`Case`] but the held-out
//! chapter (every sample chapter is registered by the demo) and the script-written one (the
//! demo's templates write plain pages), rendered with `web/templates/demo`:
//!
//! | path | what | expected |
//! |---|---|---|
//! | `/read/verbatim.html`, `ads`, `traditional`, `homophones`, `edits`, `merged`, `partial`, `look-alike` | a registered chapter in that disguise | a case |
//! | `/read/split-N.html` | one of the pages a chapter was cut into | a case |
//! | `/read/other-novel.html`, `quotation.html`, `/about.html` | an unregistered novel, a short quotation, the site's own text | no match |
//! | `/mirror/N.html` on `localhost` | registered chapters on a licensed domain | matches, no case |
//!
//! `pipeline::demo` serves them (`SiteServer`), registers the works and watches the sites.

use std::collections::HashSet;

use anyhow::Result;
use askama::Template;
use pipeline::demo::{PageKind, SAMPLE, SitePage};

use crate::pirate::{Case, Corpus, CorpusChapter, pirate_pages};

/// The generator's seed: the same pages on every run and machine.
const SEED: u64 = 14;
/// Larger than any sample chapter: the generator's chapters are the headings' chapters, as
/// the import cuts them.
const WHOLE_CHAPTERS: usize = 1 << 20;
/// Pages of the mirror: the first registered chapters, verbatim.
const MIRROR_PAGES: usize = 2;

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

/// A table of contents linking `links` (`(href, text)`), in that order.
///
/// # Errors
/// The template fails (it has no fallible parts).
pub fn index_page(title: &str, links: &[(String, String)]) -> Result<Vec<u8>> {
    let html = IndexHtml {
        lang: lang(title),
        title,
        links,
    };
    Ok(html.render()?.into_bytes())
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
    let html = PageHtml {
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
    };
    Ok(html.render()?.into_bytes())
}

/// The sample cut into chapters as the generator sees them: every chapter of a registered
/// work registered (none held out), the others foreign.
fn sample_corpus() -> Corpus {
    let mut corpus = Corpus::new();
    for w in &SAMPLE {
        corpus.add(w.title, w.text, w.registered, WHOLE_CHAPTERS);
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
        // Written by a script, ordered by CSS or encoded as the quality bench renders it; the
        // demo's templates write plain UTF-8 pages.
        Case::Script
        | Case::ScriptBuilt
        | Case::CssOrder
        | Case::Latin1Gbk
        | Case::Canvas
        | Case::Sprite => return None,
        // Needs the page's font, which the demo does not serve.
        Case::FontRemap => return None,
        // Needs the page's images, which the demo does not serve.
        Case::Images | Case::ImagesOtherNovel => return None,
    })
}

/// Every page of the pirate site (on `127.0.0.1`) and of the licensed mirror (under
/// `/mirror/`, crawled as `localhost`); see the [module docs](self).
///
/// # Errors
/// A template fails.
pub fn demo_pages() -> Result<Vec<SitePage>> {
    let corpus = sample_corpus();
    let mut pages = Vec::new();
    let mut links = Vec::new();
    let mut split = 0;
    let mut taken = HashSet::new();
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
            PageKind::Copy
        } else {
            PageKind::Innocent
        };
        let title = format!("{}: {}", p.case.name(), p.origin);
        let body = text_page("盗版小说网", &title, "/", &p.text)?;
        links.push((path.clone(), title));
        pages.push(SitePage { path, kind, body });
    }
    pages.push(SitePage {
        path: "/about.html".to_owned(),
        kind: PageKind::Innocent,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo page of `case` (the first, for a split chapter).
    fn page_of(pages: &[SitePage], case: Case) -> Option<&SitePage> {
        let slug = slug(case)?;
        let single = format!("/read/{slug}.html");
        let first = format!("/read/{slug}-1.html");
        pages.iter().find(|p| p.path == single || p.path == first)
    }

    #[test]
    fn every_disguise_has_a_page_and_the_negatives_too() {
        let pages = demo_pages().unwrap();
        for case in Case::ALL {
            // No unregistered chapter of a registered work here; script pages need the
            // quality bench's rendering.
            if matches!(
                case,
                Case::OtherChapter
                    | Case::Script
                    | Case::ScriptBuilt
                    | Case::CssOrder
                    | Case::Latin1Gbk
                    | Case::FontRemap
                    | Case::Canvas
                    | Case::Sprite
                    | Case::Images
                    | Case::ImagesOtherNovel
            ) {
                assert!(page_of(&pages, case).is_none(), "a page of {case:?}");
                continue;
            }
            let want = if case.is_evasion() {
                PageKind::Copy
            } else {
                PageKind::Innocent
            };
            let page = page_of(&pages, case).unwrap_or_else(|| panic!("no page of {case:?}"));
            assert_eq!(page.kind, want, "{case:?}");
            let html = String::from_utf8_lossy(&page.body);
            assert!(html.contains(case.name()), "{case:?} page titled otherwise");
        }
        let kinds: Vec<PageKind> = pages.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds.iter().filter(|k| **k == PageKind::Licensed).count(),
            MIRROR_PAGES
        );
        // A split chapter comes with every page it was cut into.
        let split = pages
            .iter()
            .filter(|p| p.path.starts_with("/read/split-"))
            .count();
        assert!(split >= 2, "{split} split pages");
        let last = format!("/read/split-{split}.html");
        let page = pages.iter().find(|p| p.path == last).unwrap();
        assert_eq!(page.kind, PageKind::Copy);
        assert!(
            String::from_utf8_lossy(&page.body).contains(&format!("{split}/{split}")),
            "{last} is not the last of {split} pages"
        );
        let paths: HashSet<&str> = pages.iter().map(|p| p.path.as_str()).collect();
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
        let page = page_of(&pages, Case::Traditional).unwrap();
        let text = String::from_utf8_lossy(&page.body);
        assert!(!zhconv::is_hans(&text), "still simplified");
    }
}
