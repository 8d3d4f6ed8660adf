//! The UI's two languages. Every label is one row of [`LABELS`] with its English and its
//! Chinese; a test checks that every key a template asks for is there, so no page shows a
//! key or half its labels in one language.

use axum::http::HeaderMap;

/// A language the UI speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Its code (`en`, `zh`), as kept in a user's setting and in `<html lang>`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// Parses a code (`en`, `zh`, `zh-CN`, ...).
    pub fn parse(code: &str) -> Option<Lang> {
        let primary = code.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }

    /// The user's setting, else the first supported language of `Accept-Language` by its
    /// weights, else English.
    pub fn choose(setting: Option<&str>, headers: &HeaderMap) -> Lang {
        if let Some(lang) = setting.and_then(Lang::parse) {
            return lang;
        }
        let Some(accept) = headers
            .get(axum::http::header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
        else {
            return Lang::En;
        };
        let mut best: Option<(f32, Lang)> = None;
        // A hostile header is cut short: a browser sends a handful of tags.
        for part in accept.split(',').take(32) {
            let mut pieces = part.split(';');
            let tag = pieces.next().unwrap_or_default();
            let q = pieces
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            if let Some(lang) = Lang::parse(tag)
                && q > 0.0
                && best.is_none_or(|(b, _)| q > b)
            {
                best = Some((q, lang));
            }
        }
        best.map_or(Lang::En, |(_, lang)| lang)
    }

    /// The label `key` in this language.
    ///
    /// A missing key shows as itself (and a test fails): a page never breaks over a label.
    pub fn t(self, key: &str) -> &'static str {
        match LABELS.binary_search_by(|(k, _, _)| (*k).cmp(key)) {
            Ok(i) => match self {
                Lang::En => LABELS[i].1,
                Lang::Zh => LABELS[i].2,
            },
            Err(_) => {
                tracing::warn!(key, "label missing");
                "?"
            }
        }
    }

    /// The label `key` in this language, if there is one (for keys made from data, such as
    /// an audit entry's action).
    pub fn lookup(self, key: &str) -> Option<&'static str> {
        let i = LABELS.binary_search_by(|(k, _, _)| (*k).cmp(key)).ok()?;
        Some(match self {
            Lang::En => LABELS[i].1,
            Lang::Zh => LABELS[i].2,
        })
    }

    /// The other language, for the switch in the header.
    pub fn other(self) -> Lang {
        match self {
            Lang::En => Lang::Zh,
            Lang::Zh => Lang::En,
        }
    }

    /// The language's own name.
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "中文",
        }
    }
}

/// `(key, English, Chinese)`, sorted by key (a test checks the order).
pub const LABELS: &[(&str, &str, &str)] = &[
    ("account.alerts", "Alerts", "提醒"),
    (
        "account.alerts_hint",
        "Immediately: one mail per event. Daily digest: one mail a day with every event since the last one. Mail goes to the address above, in your language.",
        "立即：每个事件一封邮件。每日摘要：每天一封邮件，列出自上一封以来的所有事件。邮件发往上面的地址，使用你的界面语言。",
    ),
    (
        "account.alerts_no_mail",
        "No mail server is configured (notify.smtp), so no alert is mailed for now.",
        "尚未配置邮件服务器（notify.smtp），目前不会发送提醒。",
    ),
    (
        "account.alerts_saved",
        "Your alert choices are saved.",
        "提醒设置已保存。",
    ),
    ("account.change", "Change password", "修改密码"),
    (
        "account.changed",
        "Your password is changed. Your other sessions and API tokens have ended.",
        "密码已修改。你的其他会话和 API 令牌均已失效。",
    ),
    (
        "account.confirm_password",
        "New password again",
        "再次输入新密码",
    ),
    ("account.current_password", "Current password", "当前密码"),
    ("account.email", "Email for alerts", "提醒邮箱"),
    ("account.lang_auto", "As the browser asks", "跟随浏览器"),
    ("account.lang_en", "English", "English"),
    ("account.lang_zh", "中文", "中文"),
    ("account.language", "Language", "语言"),
    (
        "account.mismatch",
        "The two new passwords differ",
        "两次输入的新密码不一致",
    ),
    ("account.nav", "Your account", "我的账户"),
    ("account.new_password", "New password", "新密码"),
    ("account.password", "Password", "密码"),
    (
        "account.password_hint",
        "At least 12 characters, not a common password and not your user name. Changing it ends your other sessions and revokes your API tokens.",
        "至少 12 个字符，不能是常见密码，也不能是用户名。修改后，你的其他会话会结束，API 令牌会被吊销。",
    ),
    ("account.title", "Your account", "我的账户"),
    (
        "account.wrong_password",
        "The current password is wrong",
        "当前密码不正确",
    ),
    ("action.add", "Add", "添加"),
    ("action.apply", "Apply", "应用"),
    ("action.approve", "Approve", "批准监控"),
    ("action.bulk_confirm", "Confirm selected", "确认所选"),
    ("action.bulk_dismiss", "Dismiss selected", "驳回所选"),
    ("action.capture", "Take a screenshot now", "立即截图"),
    ("action.confirm", "Confirm", "确认侵权"),
    ("action.confirm_next", "Confirm and next", "确认并看下一个"),
    ("action.crawl_now", "Crawl now", "立即抓取"),
    ("action.create", "Create", "创建"),
    ("action.create_notice", "Draft a notice", "起草通知"),
    ("action.disable", "Disable", "停用"),
    ("action.discover", "Search for copies now", "立即搜索盗版"),
    ("action.dismiss", "Dismiss", "驳回"),
    ("action.download", "Download", "下载"),
    ("action.enable", "Enable", "启用"),
    ("action.filter", "Filter", "筛选"),
    ("action.ignore", "Ignore", "忽略"),
    ("action.login", "Log in", "登录"),
    ("action.logout", "Log out", "退出"),
    ("action.mark_removed", "Mark removed", "标记已删除"),
    ("action.mark_sent", "Mark sent", "标记已发送"),
    ("action.next", "Next page", "下一页"),
    ("action.pause", "Pause", "暂停"),
    ("action.recheck", "Re-check now", "立即复查"),
    ("action.register", "Register", "登记"),
    ("action.remove", "Remove", "移除"),
    ("action.reopen", "Reopen", "重新打开"),
    ("action.resume", "Resume", "恢复"),
    ("action.retry", "Retry", "重试"),
    ("action.revoke", "Revoke", "吊销"),
    ("action.save", "Save", "保存"),
    ("action.send", "Send", "发送"),
    ("action.send_again", "Send again", "重新发送"),
    ("action.undo", "Undo", "撤销"),
    ("action.upload", "Upload", "上传"),
    ("actor.pipeline", "copyhound (detection)", "系统（检测）"),
    ("actor.recheck", "copyhound (re-check)", "系统（复查）"),
    ("address_class.a broadcast", "a broadcast", "广播"),
    ("address_class.a link-local", "a link-local", "链路本地"),
    ("address_class.a loopback", "a loopback", "回环"),
    ("address_class.a multicast", "a multicast", "组播"),
    ("address_class.a private", "a private", "内网"),
    ("address_class.a reserved", "a reserved", "保留"),
    (
        "address_class.a shared (carrier-grade nat)",
        "a shared (carrier-grade nat)",
        "运营商级 NAT 共享",
    ),
    ("address_class.an unspecified", "an unspecified", "未指定"),
    ("alert.case.opened", "New cases", "新案件"),
    ("alert.case.reopened", "Reopened cases", "重新打开的案件"),
    (
        "alert.copy.back_up",
        "Copies back up after a notice",
        "通知后重新上线的副本",
    ),
    ("alert.crawl.failed", "Failed crawls", "抓取失败"),
    ("alert.delivery.digest", "Daily digest", "每日摘要"),
    ("alert.delivery.immediate", "Immediately", "立即"),
    ("alert.delivery.off", "Off", "关闭"),
    ("analytics.crawl_health", "Crawl health", "抓取状况"),
    ("analytics.detections", "Detections per day", "每日检出"),
    ("analytics.exposure", "Exposure by work", "作品受侵情况"),
    ("analytics.funnel", "Takedown funnel", "维权进度"),
    (
        "analytics.licensed",
        "Matches on licensed domains",
        "授权域名上的匹配",
    ),
    (
        "analytics.median_removal",
        "Median time to removal",
        "删除用时中位数",
    ),
    ("analytics.since", "Since", "起始日期"),
    ("analytics.top_sites", "Top sites", "侵权最多的网站"),
    ("app.name", "copyhound", "copyhound 版权猎犬"),
    (
        "app.tagline",
        "Piracy tracking for web novels",
        "网络文学盗版追踪",
    ),
    ("audit.action", "Action", "操作"),
    ("audit.actor", "Who", "操作人"),
    (
        "audit.candidate.approve",
        "candidate approved",
        "批准候选网站",
    ),
    (
        "audit.candidate.ignore",
        "candidate ignored",
        "忽略候选网站",
    ),
    ("audit.case.confirmed", "confirmed", "确认侵权"),
    ("audit.case.dismissed", "dismissed", "驳回"),
    ("audit.case.new", "back to new", "退回待审"),
    ("audit.case.notice_sent", "notice sent", "已发通知"),
    ("audit.case.open", "case opened", "立案"),
    ("audit.case.recheck_now", "re-check asked", "要求复查"),
    ("audit.case.removed", "copy removed", "已删除"),
    ("audit.case.reopen", "case reopened", "重新立案"),
    ("audit.details", "Details", "详情"),
    ("audit.job.retry", "job retried", "重试任务"),
    (
        "audit.licensed.add",
        "licensed domain added",
        "添加授权域名",
    ),
    (
        "audit.licensed.remove",
        "licensed domain removed",
        "移除授权域名",
    ),
    ("audit.notice.create", "notice drafted", "起草通知"),
    ("audit.notice.sent", "notice marked sent", "通知标记已发送"),
    ("audit.site.crawl_now", "crawl asked", "要求抓取"),
    ("audit.site.pause", "site paused", "暂停站点"),
    ("audit.site.resume", "site resumed", "恢复站点"),
    ("audit.site.watch", "site added", "添加站点"),
    ("audit.target", "Target", "对象"),
    ("audit.title", "Audit log", "审计日志"),
    ("audit.user.create", "user created", "创建用户"),
    ("audit.user.update", "user changed", "修改用户"),
    ("audit.work.delete", "work deleted", "删除作品"),
    ("audit.work.discover", "searched for copies", "搜索盗版"),
    ("audit.work.update", "work changed", "修改作品"),
    ("audit.work.upload", "work uploaded", "上传作品"),
    (
        "candidate.approve_hint",
        "Its crawl starts from the URLs found there.",
        "抓取将从在该站发现的网址开始。",
    ),
    ("candidate.chapters", "Chapters", "章节数"),
    ("candidate.domain", "Domain", "域名"),
    ("candidate.first_seen", "First seen", "首次发现"),
    ("candidate.found_by", "How found", "发现方式"),
    ("candidate.more_urls", "more not shown", "条未显示"),
    (
        "candidate.no_urls",
        "No URL found yet: probe the domain first (copyhound discover probe).",
        "尚未发现网址：请先探测该域名（copyhound discover probe）。",
    ),
    ("candidate.pages", "Pages with copies", "含副本的页面"),
    ("candidate.site", "Watched as", "已作为网站监控："),
    ("candidate.urls", "URLs found", "发现的网址"),
    ("candidate.works", "Works", "作品数"),
    (
        "candidates.intro",
        "Domains where discovery found copies of your works. Approve one to watch it as a site, or ignore it: it is never fetched again.",
        "发现功能找到作品副本的域名。批准后作为网站监控，忽略后不再抓取。",
    ),
    (
        "candidates.none",
        "No candidates here.",
        "这里没有候选网站。",
    ),
    ("candidates.title", "Candidate sites", "候选网站"),
    ("case.chapter", "Chapter", "章节"),
    ("case.chapter_text", "Registered chapter", "登记的原文"),
    ("case.chapters", "Chapters copied", "被复制章节"),
    ("case.chars", "characters", "字"),
    ("case.copied", "Copied", "复制量"),
    ("case.copies", "Copies", "盗版副本"),
    ("case.coverage", "Coverage", "覆盖率"),
    ("case.decided", "Decision saved: case", "已处理案件"),
    ("case.disguises", "Disguises", "伪装手法"),
    ("case.dismiss_reason", "Reason for dismissing", "驳回原因"),
    ("case.evidence", "Evidence", "证据"),
    (
        "case.evidence_package",
        "Evidence package (zip)",
        "证据包（zip）",
    ),
    ("case.exposure", "Exposure", "受侵比例"),
    ("case.first_seen", "First seen", "首次发现"),
    ("case.history", "History", "历史记录"),
    (
        "case.keys",
        "Keys: c confirm · n confirm and next · d dismiss · j/k move between pages",
        "快捷键：c 确认 · n 确认并看下一个 · d 驳回 · j/k 在网页间移动",
    ),
    ("case.last_seen", "Last seen", "最近发现"),
    ("case.latest_snapshot", "Latest snapshot", "最新快照"),
    ("case.legend.changed", "changed", "改动"),
    ("case.legend.copied", "copied", "复制"),
    ("case.legend.extra", "added or left out", "增删"),
    ("case.legend.variant", "written differently", "异体写法"),
    ("case.matched_chars", "Matched characters", "匹配字数"),
    ("case.next_case", "Next case", "下一个案件"),
    ("case.next_recheck", "Next re-check", "下次复查"),
    (
        "case.next_step_notice",
        "Next step: draft the takedown notice",
        "下一步：起草下架通知",
    ),
    (
        "case.no_passages",
        "No aligned passages stored for this match.",
        "此匹配没有保存对齐段落。",
    ),
    ("case.note", "Note", "备注"),
    ("case.page_text", "Page on the suspect site", "涉嫌侵权网页"),
    ("case.pages", "Pages", "网页"),
    ("case.raw", "Raw bytes", "原始字节"),
    ("case.reason.licensed", "Licensed", "已获授权"),
    ("case.reason.not_ours", "Not our text", "非我方作品"),
    (
        "case.reason.other",
        "Other (say why in the note)",
        "其他（请在备注中说明）",
    ),
    ("case.reason.quotation", "Quotation", "合理引用"),
    ("case.recheck", "Re-check", "复查"),
    ("case.score", "Score", "得分"),
    ("case.screenshot", "Screenshot", "网页截图"),
    (
        "case.server_said_304",
        "(server said 304)",
        "起未变更（服务器返回 304）",
    ),
    ("case.sha256", "SHA-256", "SHA-256"),
    ("case.snapshots", "Snapshots", "快照"),
    ("case.text", "Sanitised text", "净化文本"),
    ("case.timestamp", "Trusted timestamp", "可信时间戳"),
    ("case.title", "Case", "案件"),
    // A revisit: "unchanged since <date> (server said 304)", the date between the two.
    ("case.unchanged_since", "unchanged since", "自"),
    ("case.unstamped", "not stamped", "未加盖时间戳"),
    ("case.url", "Page", "网址"),
    ("case.verbatim", "verbatim", "原样复制"),
    ("case.whole_chapter", "Whole chapter", "查看整章"),
    ("cases.empty", "No cases match.", "没有符合条件的案件。"),
    (
        "cases.keys",
        "Keys: j/k move, c confirm, d dismiss, o open",
        "快捷键：j/k 上下移动，c 确认，d 驳回，o 打开",
    ),
    ("cases.min_exposure", "Min. exposure %", "最低受侵比例 %"),
    ("cases.select_all", "Select all", "全选"),
    ("cases.sort", "Sort", "排序"),
    ("cases.sort.exposure", "Most exposed", "受侵比例最高"),
    ("cases.sort.recent", "Most recent", "最近发现"),
    ("cases.title", "Review queue", "审核队列"),
    (
        "chart.copies_desc",
        "New copies of registered chapters found each day (a page fetched again adds none); total",
        "每天新发现的登记章节盗版副本数（同一网页再次抓取不计）；合计",
    ),
    (
        "chart.copies_per_day",
        "New copies per day",
        "每日新发现副本",
    ),
    ("chart.day", "Day", "日期"),
    (
        "chart.empty_copies",
        "No copies found in these days yet. Each day's new copies will appear here as a column, today's on the right.",
        "这段时间还没有发现副本。每天新发现的副本会在这里显示为一根柱子，最右边是今天。",
    ),
    (
        "chart.empty_funnel",
        "No case yet. Here you will see how cases go from found to confirmed, notice sent and removed.",
        "还没有案件。这里将显示案件从发现到确认、发出通知、删除的进展。",
    ),
    ("chart.found", "Found", "已发现"),
    (
        "chart.funnel_note",
        "Shares of the cases found, and of the stage before",
        "百分比为占已发现案件和占上一阶段的比例",
    ),
    ("chart.matches", "Matches", "匹配次数"),
    (
        "chart.matches_refetches",
        "matches, re-fetches included",
        "次匹配（含重复抓取）",
    ),
    ("chart.new_copies", "New copies", "新副本"),
    (
        "chart.no_copies",
        "No copies found in this time.",
        "这段时间没有发现盗版副本。",
    ),
    (
        "chart.no_crawls",
        "No crawls in this time.",
        "这段时间没有抓取。",
    ),
    (
        "chart.no_sites",
        "No site copies registered works in this time.",
        "这段时间没有网站复制登记的作品。",
    ),
    ("chart.numbers", "The numbers", "具体数字"),
    ("chart.of_before", "of the stage before", "占上一阶段"),
    ("chart.today", "today", "今天"),
    (
        "checklist.intro",
        "Until these are done, copyhound cannot find copies or send notices.",
        "完成以下各项之前，copyhound 无法发现盗版或发送通知。",
    ),
    (
        "checklist.private",
        "Allow private addresses for these sites",
        "允许这些网站使用内网地址",
    ),
    (
        "checklist.private_hint",
        "Their start URLs are loopback or private addresses, which the crawler refuses. Allow them in the configuration, or list their network:",
        "它们的起始网址是本机或内网地址，抓取程序会拒绝访问。请在配置中允许，或列出其网段：",
    ),
    (
        "checklist.rights_holder",
        "Set the rights holder",
        "设置权利人信息",
    ),
    (
        "checklist.rights_holder_hint",
        "Every takedown notice names the rights holder. Still empty:",
        "每份删除通知都需写明权利人。尚未填写：",
    ),
    (
        "checklist.site",
        "Add a suspect site to watch",
        "添加要监控的可疑网站",
    ),
    (
        "checklist.site_hint",
        "Give its start URL and a schedule: copyhound crawls it and matches its pages.",
        "填写起始网址和抓取计划：copyhound 会抓取该网站并比对其网页。",
    ),
    ("checklist.title", "Set up copyhound", "设置 copyhound"),
    (
        "checklist.work",
        "Register a work to protect",
        "登记要保护的作品",
    ),
    (
        "checklist.work_hint",
        "Crawled pages are matched against registered works: upload a TXT, EPUB or HTML file, or paste the text.",
        "抓取到的网页会与登记的作品比对：上传 TXT、EPUB 或 HTML 文件，或粘贴正文。",
    ),
    ("checklist.worker", "Start a worker", "启动后台任务进程"),
    (
        "checklist.worker_hint",
        "Queued crawls and matches wait until a worker runs. Start one beside the UI with",
        "排队的抓取和比对任务需要后台进程才能运行。请在界面之外启动：",
    ),
    (
        "checklist.worker_never",
        "No worker has been seen.",
        "尚未发现任何后台进程。",
    ),
    (
        "checklist.worker_seen",
        "A worker was last seen",
        "后台进程最近一次出现于",
    ),
    ("common.all", "All", "全部"),
    ("common.any", "Any", "任意"),
    ("common.created", "Created", "创建时间"),
    ("common.id", "ID", "编号"),
    ("common.name", "Name", "名称"),
    ("common.none", "None", "无"),
    ("common.status", "Status", "状态"),
    ("common.when", "When", "时间"),
    ("copy.removed", "removed", "已删除"),
    ("copy.unknown", "unknown", "未知"),
    ("copy.up", "still up", "仍在线"),
    ("count.chapters.one", "chapter", "章"),
    ("count.chapters.other", "chapters", "章"),
    ("count.pages.one", "page", "个页面"),
    ("count.pages.other", "pages", "个页面"),
    ("count.works.one", "work", "部作品"),
    ("count.works.other", "works", "部作品"),
    ("crawl.cancelled", "cancelled", "已取消"),
    ("crawl.done", "done", "完成"),
    ("crawl.failed", "failed", "失败"),
    ("crawl.queued", "queued", "排队中"),
    ("crawl.running", "running", "进行中"),
    ("dashboard.new_cases", "New cases", "新案件"),
    ("dashboard.title", "Dashboard", "总览"),
    ("dashboard.view_all", "View all", "查看全部"),
    ("detail.after", "after", "修改后"),
    ("detail.again", "again", "再次"),
    (
        "detail.api_tokens_revoked",
        "API tokens revoked",
        "吊销的 API 令牌",
    ),
    ("detail.author", "author", "作者"),
    ("detail.before", "before", "修改前"),
    ("detail.case", "case", "案件"),
    ("detail.cases", "cases", "案件"),
    ("detail.chapters", "chapters", "章节"),
    ("detail.crawl", "crawl", "抓取"),
    ("detail.display_name", "display name", "显示名称"),
    ("detail.domain", "domain", "域名"),
    ("detail.enabled", "enabled", "启用"),
    ("detail.error", "error", "错误"),
    ("detail.events", "events", "事件"),
    ("detail.expires_at", "expires", "到期"),
    ("detail.first_recheck", "first re-check", "首次复查"),
    ("detail.forced", "forced", "强制"),
    ("detail.from", "from", "原状态"),
    ("detail.id", "id", "编号"),
    ("detail.job", "job", "任务"),
    ("detail.mailed", "mailed", "已发邮件"),
    ("detail.message_id", "Message-ID", "邮件 Message-ID"),
    ("detail.name", "name", "名称"),
    ("detail.new", "new", "新值"),
    ("detail.note", "note", "备注"),
    ("detail.old", "old", "旧值"),
    ("detail.page", "page", "页面"),
    ("detail.password", "password", "密码"),
    ("detail.prefix", "token prefix", "令牌前缀"),
    ("detail.reason", "reason", "理由"),
    ("detail.recipient", "recipient", "收件人"),
    ("detail.role", "role", "角色"),
    ("detail.schedule", "schedule", "计划"),
    ("detail.sent_at", "sent at", "发送时间"),
    ("detail.sessions_ended", "sessions ended", "结束的会话"),
    ("detail.settings", "settings", "设置"),
    ("detail.snapshot", "snapshot", "快照"),
    ("detail.start_url", "start URL", "起始网址"),
    ("detail.template", "template", "模板"),
    ("detail.test", "test", "测试"),
    ("detail.text_changed", "text changed", "正文已改"),
    ("detail.title", "title", "标题"),
    ("detail.to", "to", "新状态"),
    ("detail.url", "URL", "网址"),
    ("detail.user", "user", "用户"),
    ("detail.username", "user name", "用户名"),
    ("detail.webhook", "webhook", "回调推送"),
    ("detail.work", "work", "作品"),
    ("detail_value.changed", "changed", "已修改"),
    ("detail_value.false", "no", "否"),
    ("detail_value.true", "yes", "是"),
    ("discovery.default", "default", "默认"),
    (
        "discovery.from_work",
        "a work's page runs a search for it now",
        "在作品页可立即为该作品搜索",
    ),
    ("discovery.kind", "API", "接口"),
    (
        "discovery.none",
        "No search provider is configured: add one to the settings file under",
        "尚未配置搜索服务：请在设置文件中添加",
    ),
    (
        "discovery.per_work",
        "Queries per work per day",
        "每部作品每天的查询数",
    ),
    ("discovery.providers", "Search providers", "搜索服务"),
    ("discovery.today", "Sent today (UTC)", "今日已发送（UTC）"),
    ("disguise.edited", "edited", "改写"),
    ("disguise.homophones", "homophones", "同音字"),
    ("disguise.inserted", "inserted text", "插入文字"),
    ("disguise.look_alike", "look-alike letters", "形近字母"),
    ("disguise.merged", "merged chapters", "多章合并"),
    ("disguise.remapped_font", "remapped font", "字体替换"),
    ("disguise.script", "script-written", "脚本生成"),
    ("disguise.split", "split chapter", "章节拆分"),
    (
        "disguise.traditional",
        "converted script (traditional/simplified)",
        "繁简转换",
    ),
    (
        "disguise.wrong_charset",
        "wrong charset label",
        "字符集标注错误",
    ),
    (
        "edit.exclude",
        "Exclude patterns (one a line)",
        "排除规则（每行一条）",
    ),
    (
        "edit.include",
        "Include patterns (one a line)",
        "包含规则（每行一条）",
    ),
    ("edit.notice", "Edit the draft", "编辑草稿"),
    (
        "edit.notice_sent",
        "This notice was marked sent: it is kept as it went out.",
        "此通知书已标记为已发送，按发送时的内容保留，不能再修改。",
    ),
    (
        "edit.render",
        "Render every page in a headless browser (text built by scripts, screenshots)",
        "用无头浏览器渲染每个网页（脚本生成的文字、截图）",
    ),
    ("edit.saved", "Saved.", "已保存。"),
    ("edit.site", "Edit the site's settings", "编辑网站设置"),
    ("edit.work", "Edit the title and author", "编辑标题和作者"),
    ("error.forbidden", "Not allowed", "无权访问"),
    ("error.not_found", "Page not found", "页面不存在"),
    ("error.title", "Something went wrong", "出错了"),
    ("event.case.opened", "Case opened", "新案件"),
    ("event.case.removed", "Copies removed", "副本已删除"),
    ("event.case.reopened", "Case reopened", "案件重新打开"),
    ("event.copy.back_up", "Copy back up", "副本重新上线"),
    ("event.crawl.failed", "Crawl failed", "抓取失败"),
    ("event.notice.sent", "Notice sent", "通知已发送"),
    (
        "form.file_or_text",
        "Choose a file or paste the text",
        "请选择文件或粘贴文本",
    ),
    (
        "form.problem.bad_contact",
        "Write one host = address a line",
        "每行写一条：主机 = 地址",
    ),
    (
        "form.problem.control_character",
        "One line, without control characters",
        "只能写一行，不能含控制字符",
    ),
    (
        "form.problem.not_a_phone_number",
        "Not a telephone number",
        "不是电话号码",
    ),
    (
        "form.problem.not_an_email",
        "Not an email address",
        "不是电子邮件地址",
    ),
    ("form.problem.too_long", "Too long", "太长"),
    (
        "form.problem.unknown_template",
        "Unknown template",
        "未知模板",
    ),
    (
        "form.problem.unknown_time_zone",
        "Unknown time zone",
        "未知时区",
    ),
    ("form.refused", "Not accepted", "未被接受"),
    ("form.required", "Required", "必填"),
    (
        "found_by.commoncrawl",
        "Common Crawl archive",
        "Common Crawl 存档",
    ),
    (
        "found_by.commoncrawl_archive",
        "seen in Common Crawl, not reachable now; captured",
        "仅见于 Common Crawl 存档，当前无法访问；抓取于",
    ),
    ("found_by.probe", "probe of known URLs", "已知网址探测"),
    ("found_by.search", "search engine", "搜索引擎"),
    (
        "history.all_gone",
        "every copy is gone (re-check); evidence: snapshot",
        "所有副本均已删除（复查）；证据快照",
    ),
    ("history.copy_found", "copy found at", "发现盗版于"),
    (
        "history.found_again",
        "the copy was found again at",
        "再次发现副本：",
    ),
    (
        "history.new_chapter",
        "a new chapter was copied at",
        "发现新复制的章节：",
    ),
    ("history.notice_sent", "sent notice", "已发送通知"),
    ("history.undo", "decision undone", "撤销了上一决定"),
    ("job.Crawl", "crawl", "抓取"),
    ("job.CrawlSite", "scheduled crawl", "定时抓取"),
    ("job.DeliverWebhook", "deliver a webhook", "投递回调推送"),
    ("job.Event", "announce an event", "通知事件"),
    ("job.ImportWork", "import a work", "导入作品"),
    (
        "job.MatchShard",
        "match a page in one index shard",
        "在一个索引分片中匹配网页",
    ),
    ("job.MatchSnapshot", "match a page", "匹配网页"),
    ("job.Recheck", "re-check a case", "复查案件"),
    ("job.RechecksDue", "find due re-checks", "查找待复查"),
    ("job.SendNotice", "mail a notice", "发送通知书"),
    ("job.StampSnapshot", "timestamp evidence", "证据时间戳"),
    ("jobs.attempts", "Attempts", "尝试次数"),
    ("jobs.dead", "Dead jobs", "失败任务"),
    ("jobs.done", "Done", "已完成"),
    ("jobs.error", "Last error", "最近错误"),
    ("jobs.failing", "Failing, will retry", "失败待重试"),
    ("jobs.kind", "Kind", "类型"),
    ("jobs.next_run", "Next attempt", "下次尝试"),
    ("jobs.queue", "Queue", "队列"),
    ("jobs.queued", "Queued", "排队中"),
    ("jobs.queues", "Queues", "队列概况"),
    ("jobs.running", "Running", "运行中"),
    ("jobs.title", "Jobs", "任务"),
    ("lang.switch", "中文", "English"),
    ("licensed.domain", "Domain", "域名"),
    ("licensed.title", "Licensed domains", "授权域名"),
    (
        "login.failed",
        "Wrong name or password.",
        "用户名或密码错误。",
    ),
    ("login.password", "Password", "密码"),
    ("login.title", "Log in", "登录"),
    ("login.username", "User name", "用户名"),
    ("nav.analytics", "Analytics", "统计"),
    ("nav.audit", "Audit log", "审计日志"),
    ("nav.candidates", "Candidates", "候选网站"),
    ("nav.cases", "Review", "审核"),
    ("nav.dashboard", "Dashboard", "总览"),
    ("nav.jobs", "Jobs", "任务"),
    ("nav.notices", "Notices", "通知书"),
    ("nav.sites", "Sites", "网站"),
    ("nav.users", "Users", "用户"),
    ("nav.webhooks", "Webhooks", "回调推送"),
    ("nav.works", "Works", "作品"),
    ("notice.body", "Text", "正文"),
    (
        "notice.copy_text",
        "Text to paste into the form",
        "粘贴到表单的正文",
    ),
    ("notice.days_since", "Days since sent", "发出天数"),
    (
        "notice.holder_ask_admin",
        "An admin fills it in on the Settings page.",
        "请管理员在“设置”页填写。",
    ),
    (
        "notice.holder_missing",
        "The rights holder's profile is not filled in: a notice must say who asks.",
        "权利人资料尚未填写：通知书须写明由谁提出。",
    ),
    (
        "notice.holder_settings",
        "Fill it in on Settings",
        "前往“设置”填写",
    ),
    (
        "notice.mail_off",
        "Mail is off: set notify.smtp.host (and port, tls, from) to send notices from here",
        "邮件未启用：设置 notify.smtp.host（以及 port、tls、from）后即可在此发送通知书",
    ),
    ("notice.message_id", "Message-ID", "Message-ID"),
    (
        "notice.queued",
        "Queued: a worker mails it with the evidence package; this page shows the outcome",
        "已排队：后台任务会连同证据包发出，结果显示在本页",
    ),
    ("notice.recipient", "Recipient", "收件人"),
    (
        "notice.recipient_hint",
        "Email or web form; found from security.txt when empty",
        "电子邮箱或网页表单；留空则从 security.txt 查找",
    ),
    ("notice.send_error", "Last attempt failed", "上次发送失败"),
    (
        "notice.sending",
        "An attempt to mail it began and has no outcome recorded: the server may have it. Look in the sent mail, then mark it sent or send it again (same Message-ID)",
        "一次发送已开始但没有记录结果，邮件服务器可能已收到。请先查看已发送邮件，再标记已发送或重新发送（Message-ID 不变）",
    ),
    ("notice.sent_at", "Sent", "发送时间"),
    (
        "notice.sent_sha256",
        "SHA-256 of the message sent",
        "所发邮件的 SHA-256",
    ),
    (
        "notice.smtp_reply",
        "Mail server's reply",
        "邮件服务器的答复",
    ),
    ("notice.subject", "Subject", "主题"),
    ("notice.template", "Template", "模板"),
    (
        "notice.template.cn",
        "China (信息网络传播权保护条例)",
        "中国（信息网络传播权保护条例）",
    ),
    (
        "notice.template.dmca",
        "DMCA (17 U.S.C. § 512)",
        "DMCA（美国 17 U.S.C. § 512）",
    ),
    ("notice.title", "Notice", "通知书"),
    (
        "notice.web_form",
        "The recipient is a web form: paste the text below into it, then mark the notice sent",
        "收件人是网页表单：请把下面的正文粘贴到表单中，然后标记已发送",
    ),
    ("notices.title", "Takedown notices", "删除通知书"),
    ("queue.default", "default", "默认"),
    ("queue.match", "match", "匹配"),
    (
        "queued.capture.done",
        "Screenshots taken: each page's newest screenshot is linked under Evidence.",
        "截图完成：每个页面的最新截图见“证据”一节。",
    ),
    (
        "queued.capture.failed",
        "Taking the screenshots failed:",
        "截图失败：",
    ),
    (
        "queued.capture.pending",
        "Screenshots queued: a worker renders each page of the case; this page updates itself when they are done.",
        "截图已排队：工作进程会逐页渲染；完成后本页自动更新。",
    ),
    (
        "queued.discover.done",
        "Search done: the domains with a copy are on the Candidates page.",
        "搜索完成：发现副本的域名见“候选网站”页。",
    ),
    ("queued.discover.failed", "The search failed:", "搜索失败："),
    (
        "queued.discover.pending",
        "Search queued: a worker sends the work's rare phrases to the search provider and fetches what it finds; this page updates itself when it is done.",
        "搜索已排队：工作进程会把作品中的罕见短语发给搜索服务并抓取结果；完成后本页自动更新。",
    ),
    (
        "queued.recheck.done",
        "Re-check done: the state of each copy is under Re-check.",
        "复查完成：各副本的状态见“复查”一节。",
    ),
    (
        "queued.recheck.failed",
        "The re-check failed:",
        "复查失败：",
    ),
    (
        "queued.recheck.pending",
        "Re-check queued: a worker fetches every copy again; this page updates itself when it is done.",
        "复查已排队：工作进程会重新抓取每个副本；完成后本页自动更新。",
    ),
    ("role.admin", "admin", "管理员"),
    ("role.reviewer", "reviewer", "审核员"),
    ("role.viewer", "viewer", "只读"),
    (
        "said.address_refused",
        "refused to fetch {}: it resolves to {} address {}; set crawler.fetch.safety.allow_private = true (environment: COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE=true; `crawl` and `check` take --allow-private) or add the network to crawler.fetch.safety.allowed_networks to crawl it",
        "拒绝抓取 {}：它解析为{:address_class}地址 {}。如确需抓取，请设置 `crawler.fetch.safety.allow_private = true`（环境变量 `COPYHOUND_CRAWLER__FETCH__SAFETY__ALLOW_PRIVATE=true`；命令 `crawl` 和 `check` 可加 `--allow-private`），或把该网段加入 `crawler.fetch.safety.allowed_networks`",
    ),
    ("said.admins_only", "admins only", "仅限管理员"),
    (
        "said.alert_choice",
        "{}: off, immediate or digest",
        "{}：只能选择关闭、立即或每日摘要",
    ),
    ("said.bad_request", "Bad Request", "请求无效"),
    (
        "said.cannot_go_back",
        "a {} case cannot go back to {}",
        "{:status}的案件不能退回{:status}",
    ),
    (
        "said.case_cannot_become",
        "case {} is {} and cannot become {}: from {} it can become {}",
        "案件 {} 当前为{:status}，不能改为{:status}；{:status}的案件只能改为{:status}",
    ),
    (
        "said.case_not_confirmed",
        "case {} is {}: only a confirmed case's notice can be sent",
        "案件 {} 当前为{:status}：只有已确认案件的通知才能发送",
    ),
    (
        "said.cases_at_once",
        "at most 500 cases at once",
        "一次最多处理 500 个案件",
    ),
    (
        "said.crawl_status",
        "{} is not a crawl status: give queued, running, done, failed or cancelled",
        "{} 不是抓取状态：请用 queued、running、done、failed 或 cancelled",
    ),
    (
        "said.cron",
        "cron expression {}: {}",
        "cron 表达式 {} 无法解析：{}",
    ),
    (
        "said.cron_never",
        "cron expression {} never fires: {}",
        "cron 表达式 {} 永远不会触发：{}",
    ),
    (
        "said.cross_site",
        "cross-site request refused",
        "已拒绝跨站请求",
    ),
    (
        "said.csrf",
        "the form's security token is missing or stale: reload the page and try again",
        "表单的安全令牌缺失或已过期：请刷新页面后重试",
    ),
    (
        "said.dismiss_reason",
        "a reason for dismissing: licensed, quotation, not ours or other",
        "驳回须选择理由：已授权、引用、非本方作品或其他",
    ),
    (
        "said.dismiss_reason_one_of",
        "a reason for dismissing is one of {}, not {}",
        "驳回理由须为 {} 之一，而不是 {}",
    ),
    (
        "said.domain_not_host",
        "domain {} is not a host name: give one such as example.com",
        "域名 {} 不是主机名：请填写如 example.com 的域名",
    ),
    ("said.empty_file", "the file is empty", "文件是空的"),
    (
        "said.form_invalid",
        "Failed to deserialize form body: {}",
        "表单内容无效：{}",
    ),
    (
        "said.give_text",
        "give the work's text or a file",
        "请粘贴作品正文或选择文件",
    ),
    (
        "said.last_admin",
        "{} is the last enabled admin: make another user admin first",
        "{} 是最后一个启用的管理员：请先让另一位用户成为管理员",
    ),
    (
        "said.licensed_empty",
        "licensed domain {} is empty: give a host name such as example.com",
        "授权域名 {} 为空：请填写主机名，如 example.com",
    ),
    (
        "said.licensed_space",
        "licensed domain {} contains a space: give one host name such as example.com",
        "授权域名 {} 含有空格：请只填写一个主机名，如 example.com",
    ),
    ("said.list_separator", ", ", "、"),
    (
        "said.login_csrf",
        "the login form's security token is missing or stale: open the login page again and sign in from it",
        "登录表单的安全令牌缺失或已过期：请重新打开登录页再登录",
    ),
    (
        "said.method_not_allowed",
        "Method Not Allowed",
        "不支持这种请求方法",
    ),
    (
        "said.must_be_http",
        "{} = {} is out of range: must be an http(s) URL",
        "{} = {} 无效：须为 http(s) 网址",
    ),
    (
        "said.needs_role",
        "this needs the {} role; {} is {}",
        "此操作需要{:role}角色；{} 的角色是{:role}",
    ),
    (
        "said.no_page_at",
        "there is no page at {}",
        "没有这个页面：{}",
    ),
    (
        "said.no_title_contains",
        "no work's title contains {}",
        "没有作品的标题包含 {}",
    ),
    (
        "said.no_url_yet",
        "no URL was found on {} yet: nothing to start its crawls from",
        "{} 上尚未发现任何网址：没有可开始抓取的地址",
    ),
    ("said.no_work", "there is no work {}", "没有这个作品：{}"),
    (
        "said.not_a_chapter_of",
        "chapter {} is not a chapter of work {}",
        "章节 {} 不属于作品 {}",
    ),
    (
        "said.not_an_event",
        "{} is not an event users are alerted of",
        "{} 不是可提醒的事件",
    ),
    (
        "said.not_email",
        "{} is not an email address (name@example.org)",
        "{} 不是电子邮件地址（如 name@example.org）",
    ),
    (
        "said.not_email_because",
        "{} is not an email address: {}",
        "{} 不是电子邮件地址：{}",
    ),
    ("said.not_found", "{} {} not found", "找不到{:target} {}"),
    ("said.not_found_plain", "Not Found", "找不到"),
    (
        "said.note_length",
        "a note holds at most 2000 characters",
        "备注最多 2000 个字符",
    ),
    (
        "said.nothing_to_undo",
        "case {} is {} now, not {}: nothing to undo",
        "案件 {} 当前为{:status}，而不是{:status}：没有可撤销的操作",
    ),
    (
        "said.notice_case_not_confirmed",
        "notice {}: case {} is {}, and only a confirmed case's notice is sent",
        "通知 {}：案件 {} 当前为{:status}，只有已确认案件的通知才能发送",
    ),
    (
        "said.notice_empty",
        "the notice's text is empty: write what the notice says",
        "通知正文为空：请填写通知内容",
    ),
    (
        "said.notice_marked_already",
        "notice {} was marked sent already",
        "通知 {} 已标记为已发送",
    ),
    (
        "said.notice_sent_already",
        "notice {} was sent already",
        "通知 {} 已发送过",
    ),
    (
        "said.notice_too_long",
        "the notice's text is longer than {} characters",
        "通知正文超过 {} 个字符",
    ),
    (
        "said.number_at_most",
        "{} {}: give at most {}",
        "{} {}：最多为 {}",
    ),
    (
        "said.number_range",
        "{} {}: give a number from 1 to {}",
        "{} {}：请填 1 到 {} 之间的数",
    ),
    (
        "said.number_too_big",
        "{} {} exceeds i32::MAX",
        "{} {} 超出上限（i32::MAX）",
    ),
    (
        "said.only_http",
        "invalid url {}: only http and https urls are crawled",
        "网址 {} 无效：只抓取 http 和 https 网址",
    ),
    (
        "said.out_of_range",
        "{} = {} is out of range: {}",
        "{} = {} 超出允许范围：{}",
    ),
    (
        "said.password_common",
        "the password is on a list of the most common passwords, which attackers try first, or one of them with letters written as digits or signs: choose another (a few unrelated words make a good one)",
        "密码在最常见密码列表中（或只是把其中的字母写成数字或符号），攻击者会首先尝试：请换一个（几个互不相关的词就很好）",
    ),
    (
        "said.password_is_name",
        "the password is the user name: choose one nobody could guess from it",
        "密码与用户名相同：请选择别人猜不到的密码",
    ),
    (
        "said.password_long",
        "the password has {} characters: use at most {}",
        "密码有 {} 个字符：最多 {} 个",
    ),
    (
        "said.password_product",
        "the password contains the name of this software, {}, which attackers try first: choose another (a few unrelated words make a good one)",
        "密码包含本软件的名称 {}，攻击者会首先尝试：请换一个（几个互不相关的词就很好）",
    ),
    (
        "said.password_repeated",
        "the password is one character repeated: choose one nobody could guess (a few unrelated words make a good one)",
        "密码只是一个字符的重复：请选择别人猜不到的密码（几个互不相关的词就很好）",
    ),
    (
        "said.password_short",
        "the password has {} characters: use at least {}",
        "密码只有 {} 个字符：至少需要 {} 个",
    ),
    ("said.path_invalid", "Invalid URL: {}", "网址无效：{}"),
    (
        "said.path_unparsable",
        "Invalid URL: Cannot parse {} to a {}",
        "网址无效：{} 不能读作 {}",
    ),
    (
        "said.query_invalid",
        "Failed to deserialize query string: {}",
        "网址的查询参数无效：{}",
    ),
    (
        "said.start_url",
        "start url {}: give an absolute http(s) url, e.g. {}",
        "起始网址 {}：请填写完整的 http(s) 网址，例如 {}",
    ),
    (
        "said.start_url_no_host",
        "start url {} has no host",
        "起始网址 {} 没有主机名",
    ),
    (
        "said.start_url_other_origin",
        "start url {} is not on {}: add another site for another origin",
        "起始网址 {} 不在 {} 上：其他来源请另建站点",
    ),
    (
        "said.start_url_unparsable",
        "start url {}: {}; give an absolute http(s) url, e.g. {}",
        "起始网址 {} 无法解析（{}）：请填写完整的 http(s) 网址，例如 {}",
    ),
    (
        "said.text_needs_title",
        "a text needs a title",
        "粘贴的正文需要标题",
    ),
    (
        "said.tick_first",
        "tick the cases to act on first",
        "请先勾选要处理的案件",
    ),
    (
        "said.title_empty",
        "the title of work {} cannot be empty",
        "作品 {} 的标题不能为空",
    ),
    (
        "said.token_past",
        "token expiry {} is in the past: give a time to come",
        "令牌到期时间 {} 已过：请填写将来的时间",
    ),
    ("said.too_large", "Payload Too Large", "请求内容过大"),
    (
        "said.unknown_case_status",
        "unknown case status {}: use one of {}",
        "未知的案件状态 {}：请用 {} 之一",
    ),
    (
        "said.unknown_template",
        "unknown notice template {}: use dmca or cn",
        "未知的通知模板 {}：请用 dmca 或 cn",
    ),
    (
        "said.unsupported_media",
        "Unsupported Media Type",
        "不支持这种内容类型",
    ),
    (
        "said.update_needs",
        "an update of work {} needs a new title or author",
        "修改作品 {} 需要新的标题或作者",
    ),
    (
        "said.url_no_host",
        "invalid url {}: it has no host",
        "网址 {} 无效：没有主机名",
    ),
    (
        "said.username_chars",
        "user name {} contains {}: use letters, digits and . _ - @ only",
        "用户名 {} 含有 {}：只能用字母、数字和 . _ - @",
    ),
    (
        "said.username_length",
        "user name {} has {} characters: use 1 to {}",
        "用户名 {} 有 {} 个字符：须为 1 到 {} 个",
    ),
    (
        "said.username_look_alike",
        "user name {} looks like the existing user {}: choose a name that cannot be taken for theirs",
        "用户名 {} 与现有用户 {} 看起来相同：请选择不会被混淆的名字",
    ),
    (
        "said.username_taken",
        "user name {} is taken: choose another",
        "用户名 {} 已被占用：请换一个",
    ),
    (
        "said.watched_already",
        "{} is watched already, as site {}: change it with `sites set {}`",
        "{} 已在监控中（站点 {}）：请在站点 {} 的页面修改",
    ),
    (
        "said.webhook_exists",
        "a webhook to {} exists: delete it first to change its secret",
        "已有发往 {} 的回调推送：要更换密钥请先删除它",
    ),
    (
        "said.whole_number",
        "a whole number, not {}",
        "须为整数，而不是 {}",
    ),
    (
        "said.whole_number_up_to",
        "{}: a whole number up to {}, not {}",
        "{}：须为不超过 {} 的整数，而不是 {}",
    ),
    (
        "said.work_no_chapters",
        "work {} has no chapters",
        "作品 {} 没有任何章节",
    ),
    (
        "settings.abuse_contacts",
        "Abuse contacts (host = address, one a line)",
        "投诉联系方式（主机 = 地址，每行一条）",
    ),
    ("settings.address", "Rights holder's address", "权利人地址"),
    (
        "settings.clear_hint",
        "Clear a field, or give the settings file's value, to go back to the file's value.",
        "清空某项或填入配置文件中的值，即恢复使用配置文件的值。",
    ),
    ("settings.email", "Rights holder's email", "权利人电子邮件"),
    ("settings.file_value", "settings file", "配置文件"),
    (
        "settings.from_file",
        "From the settings file",
        "来自配置文件",
    ),
    (
        "settings.intro",
        "What notices say and how times are shown. Values saved here override the settings file's.",
        "通知书的内容和时间的显示方式。在此保存的值优先于配置文件中的值。",
    ),
    ("settings.name", "Rights holder", "权利人"),
    ("settings.nav", "Settings", "设置"),
    ("settings.phone", "Rights holder's telephone", "权利人电话"),
    ("settings.saved", "Settings saved.", "设置已保存。"),
    ("settings.saved_by", "Saved here by", "在此保存，保存人"),
    ("settings.signatory", "Signatory", "签署人"),
    (
        "settings.template",
        "Default notice template",
        "默认通知书模板",
    ),
    (
        "settings.time_zone",
        "Time zone (IANA name)",
        "时区（IANA 名称）",
    ),
    ("settings.title", "Settings", "设置"),
    ("site.add", "Add a suspect site", "添加可疑网站"),
    ("site.concurrency", "Fetches at once", "并发抓取数"),
    (
        "site.crawl_waiting",
        "Crawl queued: it starts when a worker is free.",
        "抓取已排队：有空闲的工作进程时开始。",
    ),
    ("site.crawls", "Crawl history", "抓取记录"),
    (
        "site.delay_ms",
        "Delay between fetches (ms)",
        "抓取间隔（毫秒）",
    ),
    ("site.enabled", "Watching", "监控中"),
    ("site.errors", "Errors", "出错数"),
    ("site.max_depth", "Max. link depth", "最大链接深度"),
    ("site.max_pages", "Max. pages per crawl", "每次最多抓取页数"),
    ("site.next_crawl", "Next crawl", "下次抓取"),
    ("site.pages", "Pages", "页数"),
    ("site.paused", "Paused", "已暂停"),
    ("site.schedule", "Schedule (cron, UTC)", "计划（cron，UTC）"),
    ("site.start_url", "Start URL", "起始网址"),
    ("sites.title", "Suspect sites", "可疑网站"),
    ("snapshot.plain", "Plain text", "纯文本"),
    ("source.canvas", "drawn on a canvas", "画布绘制"),
    ("source.endpoint", "content endpoint", "内容接口"),
    (
        "source.font",
        "read through the page's font",
        "按页面字体解码",
    ),
    ("source.markup", "page markup", "页面源码"),
    (
        "source.ocr",
        "read from its images (OCR)",
        "图片识别（OCR）",
    ),
    ("source.rendered", "rendered in a browser", "浏览器渲染"),
    ("source.script", "inline script", "内联脚本"),
    ("source.sprite", "glyphs of a CSS sprite", "字形拼图"),
    ("status.approved", "Approved", "已批准"),
    ("status.confirmed", "Confirmed", "已确认"),
    ("status.dismissed", "Dismissed", "已驳回"),
    ("status.draft", "Draft", "草稿"),
    ("status.ignored", "Ignored", "已忽略"),
    ("status.new", "New", "待审核"),
    ("status.notice_sent", "Notice sent", "已发通知"),
    ("status.removed", "Removed", "已删除"),
    ("status.sent", "Sent", "已发送"),
    ("target.case", "case", "案件"),
    ("target.job", "job", "任务"),
    ("target.licensed", "licensed domain", "授权域名"),
    ("target.notice", "notice", "通知"),
    ("target.site", "site", "站点"),
    ("target.token", "token", "令牌"),
    ("target.user", "user", "用户"),
    ("target.work", "work", "作品"),
    ("token.prefix", "Prefix", "前缀"),
    ("token.revoked", "Revoked", "已吊销"),
    ("user.active", "Active", "正常"),
    ("user.disabled", "Disabled", "已停用"),
    ("user.language", "Language", "界面语言"),
    ("user.language.auto", "From the browser", "跟随浏览器"),
    ("user.role", "Role", "角色"),
    (
        "user.token_once",
        "Copy this token now: it is not shown again.",
        "请立即复制此令牌：它不会再次显示。",
    ),
    ("user.tokens", "API tokens", "API 令牌"),
    ("users.add", "Add a user", "添加用户"),
    ("users.last_login", "Last login", "最近登录"),
    ("users.title", "Users", "用户"),
    ("webhooks.add", "Add a webhook", "添加回调推送"),
    (
        "webhooks.add_hint",
        "No event ticked: every event. The URL must pass the crawler's address rules (a private address only with crawler.fetch.safety allowing it). The secret is never shown again.",
        "不勾选事件即接收所有事件。URL 必须符合抓取器的地址规则（私有地址需 crawler.fetch.safety 允许）。密钥保存后不再显示。",
    ),
    ("webhooks.delete", "Delete", "删除"),
    ("webhooks.delivered", "delivered", "已送达"),
    ("webhooks.events", "Events", "事件"),
    ("webhooks.every_event", "Every event", "所有事件"),
    (
        "webhooks.intro",
        "Each event is POSTed as JSON to the webhooks here and to those in the settings file ([[notify.webhooks]]), signed with X-Copyhound-Signature: sha256=<hex HMAC-SHA256 of the body with the secret>.",
        "每个事件都以 JSON 发送到这里的 Webhook 以及设置文件中的 Webhook（[[notify.webhooks]]），并以 X-Copyhound-Signature: sha256=<用密钥对正文计算的 HMAC-SHA256 十六进制值> 签名。",
    ),
    (
        "webhooks.none",
        "No webhook is stored here.",
        "这里还没有保存回调推送地址。",
    ),
    ("webhooks.not_delivered", "not delivered", "未送达"),
    ("webhooks.off", "Off", "停用"),
    ("webhooks.on", "On", "启用"),
    ("webhooks.secret", "Secret", "密钥"),
    ("webhooks.send_test", "Send test", "发送测试"),
    (
        "webhooks.short_secret",
        "The secret is too short: use 16 characters or more (openssl rand -hex 32)",
        "密钥太短：至少 16 个字符（openssl rand -hex 32）",
    ),
    (
        "webhooks.tested",
        "Test event to webhook",
        "测试事件，Webhook",
    ),
    ("webhooks.title", "Webhooks", "回调推送（Webhook）"),
    ("webhooks.url", "URL", "URL"),
    ("work.author", "Author", "作者"),
    ("work.cases", "Cases against it", "相关案件"),
    ("work.chapters", "Chapters", "章节"),
    ("work.chars", "Characters", "字数"),
    (
        "work.file",
        "File (TXT, EPUB or HTML)",
        "文件（TXT、EPUB 或 HTML）",
    ),
    ("work.paste", "Or paste the text", "或粘贴正文"),
    ("work.pick", "Work", "作品"),
    ("work.pick_hint", "title or id", "标题或编号"),
    (
        "work.queued",
        "Registration queued: the work appears when its import job is done.",
        "登记已排队：导入任务完成后作品即会出现。",
    ),
    ("work.register", "Register a work", "登记作品"),
    ("work.search", "Search titles", "搜索标题"),
    ("work.title", "Title", "标题"),
    ("works.title", "Works", "作品"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn labels_are_sorted_unique_and_filled_in_both_languages() {
        for pair in LABELS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (key, en, zh) in LABELS {
            assert!(!en.trim().is_empty() && !zh.trim().is_empty(), "{key}");
        }
    }

    #[test]
    fn every_label_a_template_asks_for_exists() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/templates/admin");
        let mut asked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for piece in text.split("t(\"").skip(1) {
                let key = piece.split('"').next().unwrap();
                asked += 1;
                assert!(
                    LABELS.binary_search_by(|(k, _, _)| (*k).cmp(key)).is_ok(),
                    "{} asks for label {key:?}, which is missing",
                    path.display()
                );
            }
        }
        assert!(asked > 50, "only {asked} labels found in the templates");
    }

    #[test]
    fn the_setting_wins_then_accept_language_by_weight() {
        let mut headers = HeaderMap::new();
        assert_eq!(Lang::choose(None, &headers), Lang::En);
        headers.insert(
            axum::http::header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("fr-FR, en;q=0.5, zh-CN;q=0.9"),
        );
        assert_eq!(Lang::choose(None, &headers), Lang::Zh);
        assert_eq!(Lang::choose(Some("en"), &headers), Lang::En);
        assert_eq!(Lang::choose(Some("klingon"), &headers), Lang::Zh);
        headers.insert(
            axum::http::header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("zh;q=0, en;q=0.1"),
        );
        assert_eq!(Lang::choose(None, &headers), Lang::En);
        assert_eq!(Lang::Zh.t("nav.cases"), "审核");
        assert_eq!(Lang::En.t("no.such.key"), "?");
    }
}
