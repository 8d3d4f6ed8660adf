//! `copyhound sites`: the suspect sites a rights team watches, each crawled on its own
//! schedule by `copyhound worker` (or now, with `sites crawl`).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use crawling::sites::{SiteEdit, SiteSettingsChange, SiteTable, schedule_note};
use store::{NewSite, Store, SuspectSites};

use super::outln;
use settings::Settings;

/// `sites` subcommands.
#[derive(Debug, Subcommand)]
pub enum SitesCommand {
    /// Watch a site: crawl it from URL with these settings, on a schedule if given.
    Add(AddArgs),
    /// The watched sites.
    List {
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// A site with its recent crawls (pages, errors by kind, bytes, pages/s, cases found).
    Show {
        /// The site's id (`sites list`).
        id: i64,
        /// Crawls shown, newest first.
        #[arg(long, default_value_t = 10)]
        crawls: u32,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Change a site's settings or schedule.
    Set(SetArgs),
    /// Stop a site's schedule (crawls asked for with `sites crawl` still run).
    Pause {
        /// The site's id.
        id: i64,
    },
    /// Start a paused site's schedule again, from its next time.
    Resume {
        /// The site's id.
        id: i64,
    },
    /// Crawl a site now: resumes its unfinished crawl, or starts one.
    Crawl {
        /// The site's id.
        id: i64,
        /// Queue the crawl for `copyhound worker` instead of running it here.
        #[arg(long)]
        enqueue: bool,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// The crawl settings flags `add` and `set` share.
#[derive(Debug, Args)]
pub struct SettingsFlags {
    /// Pages fetched per crawl at most (default: `crawler.max_pages`, else 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_pages: Option<u32>,
    /// Link hops from the start URL at most (default: `crawler.max_depth`).
    #[arg(long, value_name = "D")]
    max_depth: Option<u32>,
    /// Milliseconds between two fetches from the site (default: `crawler.politeness.delay`).
    #[arg(long, value_name = "MS")]
    delay: Option<u32>,
    /// Fetches from the site at once (default: `crawler.politeness.per_host_concurrency`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: Option<u32>,
    /// Only URLs matching one of these regular expressions (repeatable).
    #[arg(long = "include", value_name = "RE")]
    include: Vec<String>,
    /// Leave out URLs matching any of these regular expressions (repeatable).
    #[arg(long = "exclude", value_name = "RE")]
    exclude: Vec<String>,
    /// Render every page in a headless Chromium (packages chromium and chromium-driver):
    /// text built by scripts or ordered by CSS, and a screenshot of each page.
    #[arg(long)]
    render: bool,
    /// Stop rendering every page.
    #[arg(long, conflicts_with = "render")]
    no_render: bool,
}

/// Options of `sites add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Where its crawls start (http or https); its origin is the site.
    url: String,
    /// A name for people (default: the host).
    #[arg(long)]
    name: Option<String>,
    /// When to crawl it by itself: a cron expression, UTC ("0 3 * * *": daily at 03:00);
    /// each site starts a little after the time, by a delay of its own.
    #[arg(long, value_name = "CRON")]
    schedule: Option<String>,
    #[command(flatten)]
    settings: SettingsFlags,
}

/// Options of `sites set`.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// The site's id.
    id: i64,
    /// A new name.
    #[arg(long)]
    name: Option<String>,
    /// A new start URL, on the same origin.
    #[arg(long, value_name = "URL")]
    start_url: Option<String>,
    /// A new schedule (cron, UTC).
    #[arg(long, value_name = "CRON", conflicts_with = "no_schedule")]
    schedule: Option<String>,
    /// Remove the schedule.
    #[arg(long)]
    no_schedule: bool,
    /// Remove the include patterns.
    #[arg(long, conflicts_with = "include")]
    no_include: bool,
    /// Remove the exclude patterns.
    #[arg(long, conflicts_with = "exclude")]
    no_exclude: bool,
    #[command(flatten)]
    settings: SettingsFlags,
}

/// Runs a `sites` subcommand.
pub async fn run(store: &Store, command: SitesCommand, settings: &Settings) -> Result<()> {
    match command {
        SitesCommand::Add(args) => add(store, args, settings).await,
        SitesCommand::List { json } => list(store, json).await,
        SitesCommand::Show { id, crawls, json } => show(store, id, crawls, json).await,
        SitesCommand::Set(args) => set(store, args, settings).await,
        SitesCommand::Pause { id } => enable(store, id, false).await,
        SitesCommand::Resume { id } => enable(store, id, true).await,
        SitesCommand::Crawl { id, enqueue, json } => {
            crawl(store, id, enqueue, json, settings).await
        }
    }
}

impl SettingsFlags {
    /// The settings these flags change; `replace_empty` makes an empty pattern list a
    /// change (`--no-include`) rather than nothing given.
    fn change(&self, no_include: bool, no_exclude: bool) -> SiteSettingsChange {
        let patterns = |given: &Vec<String>, remove: bool| {
            (!given.is_empty() || remove).then(|| given.clone())
        };
        SiteSettingsChange {
            max_pages: self.max_pages,
            max_depth: self.max_depth,
            delay_ms: self.delay,
            concurrency: self.concurrency,
            include: patterns(&self.include, no_include),
            exclude: patterns(&self.exclude, no_exclude),
            render: (self.render || self.no_render).then_some(self.render),
        }
    }
}

async fn add(store: &Store, args: AddArgs, settings: &Settings) -> Result<()> {
    let site = NewSite {
        start_url: args.url.clone(),
        name: args.name,
        settings: args
            .settings
            .change(false, false)
            .new_site(&settings.crawler),
        schedule: args.schedule.as_deref().map(crawling::site_schedule),
    };
    let site = crawling::watch_site(store, &settings.crawler, &site)
        .await
        .with_context(|| format!("while adding {}", args.url))?;
    outln!(
        "site {} ({}) watched from {}{}",
        site.id,
        site.name,
        site.start_url,
        schedule_note(&site)
    );
    Ok(())
}

async fn set(store: &Store, args: SetArgs, settings: &Settings) -> Result<()> {
    let edit = SiteEdit {
        name: args.name,
        start_url: args.start_url,
        settings: args.settings.change(args.no_include, args.no_exclude),
        schedule: match (args.schedule, args.no_schedule) {
            (Some(cron), _) => Some(Some(cron)),
            (None, true) => Some(None),
            (None, false) => None,
        },
    };
    let site = crawling::sites::edit_site(store, &settings.crawler, args.id, &edit)
        .await
        .map_err(|e| site_error(args.id, e))?;
    outln!(
        "site {} ({}) changed{}",
        site.id,
        site.name,
        schedule_note(&site)
    );
    Ok(())
}

/// Pauses or resumes site `id`'s schedule.
async fn enable(store: &Store, id: i64, enabled: bool) -> Result<()> {
    let said = crawling::sites::set_site_enabled(store, id, enabled)
        .await
        .map_err(|e| site_error(id, e))?;
    outln!("{said}");
    Ok(())
}

/// A pipeline error on site `id`, with a hint when the site does not exist.
fn site_error(id: i64, e: jobs::Error) -> anyhow::Error {
    if e.is_not_found() {
        anyhow::anyhow!("there is no watched site {id}: see `copyhound sites list`")
    } else {
        anyhow::Error::new(e).context(format!("while changing site {id}"))
    }
}

async fn list(store: &Store, json: bool) -> Result<()> {
    let sites = store.watched_sites().await?;
    if json {
        outln!("{}", serde_json::to_string(&sites)?);
    } else {
        super::write_stdout(&SiteTable(&sites).to_string())?;
    }
    Ok(())
}

async fn show(store: &Store, id: i64, limit: u32, json: bool) -> Result<()> {
    let sheet = crawling::sites::site_sheet(store, id, limit)
        .await
        .map_err(|e| site_error(id, e))?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&sheet)?);
    } else {
        super::write_stdout(&sheet.to_string())?;
    }
    Ok(())
}

async fn crawl(
    store: &Store,
    id: i64,
    enqueue: bool,
    json: bool,
    settings: &Settings,
) -> Result<()> {
    if enqueue {
        let queued = crawling::crawl_site_now(store, id)
            .await
            .map_err(|e| site_error(id, e))?;
        outln!("{}", crawling::sites::queued_crawl_text(id, &queued, json));
        return Ok(());
    }
    let (crawl, crawl_settings, resumed) = crawling::site_crawl(store, &settings.crawler, id)
        .await
        .map_err(|e| site_error(id, e))?;
    if resumed && !json {
        eprintln!("resuming the unfinished crawl {crawl} of site {id}");
    }
    super::crawl::run_now(store, crawl, crawl_settings, settings, json).await
}
