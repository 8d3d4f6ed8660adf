//! Suspect sites watched and crawled: a site's settings checked as a crawl would check them,
//! its schedule and its crawl job ([`sites`]); a stored crawl's life, run until its frontier is
//! done or it is told to stop, its pages queueing their match jobs ([`CrawlRunner`]); stored
//! crawls as people read them ([`crawls`]).
//!
//! It may use `jobs` and the crawler and store below it. What runs a crawl job (the
//! handler), crawls started by hand (`pipeline::launch`) and discovery sit above it.
//!
//! ```
//! let schedule = crawling::site_schedule("0 3 * * *");
//! assert_eq!(schedule.cron, "0 3 * * *");
//! ```

mod crawl;
pub mod crawls;
pub mod sites;

pub use crawl::{CrawlFinish, CrawlRunner, parse_seeds, queue_crawl};
pub use sites::{
    SiteCrawl, check_site, crawl_progress, crawl_site_now, site_crawl, site_crawl_settings,
    site_history, site_job, site_job_live, site_schedule, watch_site,
};
