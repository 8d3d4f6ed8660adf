//! A site's cron schedule in words, in English or Chinese: `0 3 * * *` is "every day at
//! 03:00 UTC" / "每天 03:00（UTC）". The shapes people write for a crawl schedule are said in
//! words (every N minutes, hourly, every N hours, daily, weekdays, given days of the week or
//! of the month); anything else is shown as the expression itself, so nothing is ever said
//! wrongly. Schedules run in UTC (`store::Schedules`), and the words say so.
//!
//! Written by hand rather than with a cron-description library: the ones there are speak
//! English only, and the shapes a crawl schedule takes are few.

/// The language of the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// English.
    En,
    /// Simplified Chinese.
    Zh,
}

/// The longest expression read: a schedule is a short line; anything longer is shown as it
/// is rather than picked apart.
const MAX_LEN: usize = 100;

const DAYS_EN: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const DAYS_ZH: [&str; 7] = ["周日", "周一", "周二", "周三", "周四", "周五", "周六"];
const DAY_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// `expr` in words in `lang`, or the expression itself (as `cron EXPR` / `cron 表达式 EXPR`)
/// when its shape has no words here.
pub fn cron_in_words(expr: &str, lang: Language) -> String {
    shape(expr).map_or_else(|| fallback(expr, lang), |s| s.words(lang))
}

/// The time of day (UTC hour and minute) `expr` fires at, when its shape has one, and
/// whether it fires every day (then a time zone's shift of the day does not change what the
/// words say).
pub fn time_of_day(expr: &str) -> Option<(u32, u32, bool)> {
    match shape(expr)? {
        Shape::Daily(t) => Some((t.hour, t.minute, true)),
        Shape::Weekdays(t) | Shape::Weekly(t, _) | Shape::Monthly(t, _) => {
            Some((t.hour, t.minute, false))
        }
        Shape::Minutes(_) | Shape::Hours { .. } => None,
    }
}

fn fallback(expr: &str, lang: Language) -> String {
    let expr = expr.trim();
    match lang {
        Language::En => format!("cron {expr} (UTC)"),
        Language::Zh => format!("cron 表达式 {expr}（UTC）"),
    }
}

/// The shapes said in words.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// `* * * * *`, `*/N * * * *`.
    Minutes(u32),
    /// `M * * * *`, `M */N * * *`.
    Hours { every: u32, minute: u32 },
    /// `M H * * *`.
    Daily(Time),
    /// `M H * * 1-5`.
    Weekdays(Time),
    /// `M H * * D[,D...]`, days 0 (Sunday) to 6, in order.
    Weekly(Time, Vec<usize>),
    /// `M H D[,D...] * *`, days of the month in order.
    Monthly(Time, Vec<u32>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Time {
    hour: u32,
    minute: u32,
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)
    }
}

fn shape(expr: &str) -> Option<Shape> {
    let expr = expr.trim();
    if expr.len() > MAX_LEN {
        return None;
    }
    let lower = expr.to_ascii_lowercase();
    let expanded = match lower.as_str() {
        "@hourly" => "0 * * * *",
        "@daily" | "@midnight" => "0 0 * * *",
        "@weekly" => "0 0 * * 0",
        "@monthly" => "0 0 1 * *",
        other => other,
    };
    let mut fields: Vec<&str> = expanded.split_whitespace().collect();
    // Six fields: seconds first, said in words only when they are 0.
    if fields.len() == 6 {
        if fields[0] != "0" {
            return None;
        }
        fields.remove(0);
    }
    let [minute, hour, dom, month, dow] = fields[..] else {
        return None;
    };
    if month != "*" {
        return None;
    }
    let every = |f: &str, max: u32| -> Option<u32> {
        if f == "*" {
            return Some(1);
        }
        number(f.strip_prefix("*/")?, 1, max)
    };
    if hour == "*" || hour.starts_with("*/") {
        if dom != "*" || dow != "*" {
            return None;
        }
        if hour == "*"
            && let Some(n) = every(minute, 59)
        {
            return Some(Shape::Minutes(n));
        }
        let every = every(hour, 23)?;
        let minute = number(minute, 0, 59)?;
        return Some(Shape::Hours { every, minute });
    }
    let time = Time {
        hour: number(hour, 0, 23)?,
        minute: number(minute, 0, 59)?,
    };
    match (dom, dow) {
        ("*", "*") => Some(Shape::Daily(time)),
        ("*", "1-5") | ("*", "mon-fri") => Some(Shape::Weekdays(time)),
        ("*", days) => {
            let mut days = days
                .split(',')
                .map(weekday)
                .collect::<Option<Vec<usize>>>()?;
            days.sort_unstable();
            days.dedup();
            Some(Shape::Weekly(time, days))
        }
        (days, "*") => {
            let mut days = days
                .split(',')
                .map(|d| number(d, 1, 31))
                .collect::<Option<Vec<u32>>>()?;
            days.sort_unstable();
            days.dedup();
            Some(Shape::Monthly(time, days))
        }
        _ => None,
    }
}

/// A plain decimal number from `min` to `max`.
fn number(field: &str, min: u32, max: u32) -> Option<u32> {
    if field.is_empty() || field.len() > 2 || !field.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    field.parse().ok().filter(|n| (min..=max).contains(n))
}

/// A day of the week, 0 (Sunday) to 6; 7 is Sunday too, names as cron spells them (lower
/// case here).
fn weekday(field: &str) -> Option<usize> {
    if let Some(d) = number(field, 0, 7) {
        return Some(d as usize % 7);
    }
    DAY_NAMES.iter().position(|d| *d == field)
}

impl Shape {
    fn words(&self, lang: Language) -> String {
        match lang {
            Language::En => self.english(),
            Language::Zh => self.chinese(),
        }
    }

    fn english(&self) -> String {
        match self {
            Shape::Minutes(1) => "every minute".to_owned(),
            Shape::Minutes(n) => format!("every {n} minutes"),
            Shape::Hours {
                every: 1,
                minute: 0,
            } => "every hour, on the hour".to_owned(),
            Shape::Hours { every: 1, minute } => format!("every hour at {minute} past"),
            Shape::Hours { every, minute: 0 } => format!("every {every} hours, on the hour"),
            Shape::Hours { every, minute } => format!("every {every} hours at {minute} past"),
            Shape::Daily(t) => format!("every day at {t} UTC"),
            Shape::Weekdays(t) => format!("every weekday at {t} UTC"),
            Shape::Weekly(t, days) => {
                let names: Vec<&str> = days.iter().map(|d| DAYS_EN[*d]).collect();
                format!("every {} at {t} UTC", and_list(&names))
            }
            Shape::Monthly(t, days) => {
                let days: Vec<String> = days.iter().map(|d| ordinal(*d)).collect();
                let days: Vec<&str> = days.iter().map(String::as_str).collect();
                format!("on the {} of every month at {t} UTC", and_list(&days))
            }
        }
    }

    fn chinese(&self) -> String {
        match self {
            Shape::Minutes(1) => "每分钟".to_owned(),
            Shape::Minutes(n) => format!("每 {n} 分钟"),
            Shape::Hours {
                every: 1,
                minute: 0,
            } => "每小时整点".to_owned(),
            Shape::Hours { every: 1, minute } => format!("每小时第 {minute} 分"),
            Shape::Hours { every, minute: 0 } => format!("每 {every} 小时整点"),
            Shape::Hours { every, minute } => format!("每 {every} 小时第 {minute} 分"),
            Shape::Daily(t) => format!("每天 {t}（UTC）"),
            Shape::Weekdays(t) => format!("工作日 {t}（UTC）"),
            Shape::Weekly(t, days) => {
                let names: Vec<&str> = days.iter().map(|d| DAYS_ZH[*d]).collect();
                format!("每{} {t}（UTC）", names.join("、"))
            }
            Shape::Monthly(t, days) => {
                let days: Vec<String> = days.iter().map(|d| format!("{d} 日")).collect();
                format!("每月 {} {t}（UTC）", days.join("、"))
            }
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`.
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(expr: &str) -> (String, String) {
        (
            cron_in_words(expr, Language::En),
            cron_in_words(expr, Language::Zh),
        )
    }

    #[test]
    fn schedules_at_a_time_of_day_say_which() {
        assert_eq!(time_of_day("0 3 * * *"), Some((3, 0, true)));
        assert_eq!(time_of_day("30 23 * * 1-5"), Some((23, 30, false)));
        assert_eq!(time_of_day("0 0 1,15 * *"), Some((0, 0, false)));
        assert_eq!(time_of_day("*/15 * * * *"), None);
        assert_eq!(time_of_day("0 */6 * * *"), None);
        assert_eq!(time_of_day("not cron"), None);
    }

    #[test]
    fn the_usual_schedules_are_said_in_both_languages() {
        let cases = [
            ("0 3 * * *", "every day at 03:00 UTC", "每天 03:00（UTC）"),
            ("30 23 * * *", "every day at 23:30 UTC", "每天 23:30（UTC）"),
            ("0 0 3 * * *", "every day at 03:00 UTC", "每天 03:00（UTC）"),
            ("@daily", "every day at 00:00 UTC", "每天 00:00（UTC）"),
            ("0 * * * *", "every hour, on the hour", "每小时整点"),
            ("@hourly", "every hour, on the hour", "每小时整点"),
            ("15 * * * *", "every hour at 15 past", "每小时第 15 分"),
            ("0 */6 * * *", "every 6 hours, on the hour", "每 6 小时整点"),
            ("5 */2 * * *", "every 2 hours at 5 past", "每 2 小时第 5 分"),
            ("*/15 * * * *", "every 15 minutes", "每 15 分钟"),
            ("* * * * *", "every minute", "每分钟"),
            (
                "0 9 * * 1-5",
                "every weekday at 09:00 UTC",
                "工作日 09:00（UTC）",
            ),
            (
                "0 9 * * MON-FRI",
                "every weekday at 09:00 UTC",
                "工作日 09:00（UTC）",
            ),
            (
                "0 4 * * 1",
                "every Monday at 04:00 UTC",
                "每周一 04:00（UTC）",
            ),
            (
                "0 4 * * thu,1,7",
                "every Sunday, Monday and Thursday at 04:00 UTC",
                "每周日、周一、周四 04:00（UTC）",
            ),
            (
                "@weekly",
                "every Sunday at 00:00 UTC",
                "每周日 00:00（UTC）",
            ),
            (
                "0 2 1,15 * *",
                "on the 1st and 15th of every month at 02:00 UTC",
                "每月 1 日、15 日 02:00（UTC）",
            ),
            (
                "0 2 22 * *",
                "on the 22nd of every month at 02:00 UTC",
                "每月 22 日 02:00（UTC）",
            ),
        ];
        for (expr, en, zh) in cases {
            assert_eq!(both(expr), (en.to_owned(), zh.to_owned()), "{expr}");
        }
    }

    #[test]
    fn other_shapes_show_the_expression() {
        for expr in [
            "0 3 * 2 *",
            "0 3 1 * 1",
            "0 3 * * 1#2",
            "0 3 L * *",
            "1-10 3 * * *",
            "60 3 * * *",
            "0 24 * * *",
            "0 3 32 * *",
            "0 3 * * 8",
            "*/0 * * * *",
            "*/60 * * * *",
            "5 3 * * * *",
            "0 3 * *",
            "",
            "+1 3 * * *",
            "٣ 3 * * *",
        ] {
            let (en, zh) = both(expr);
            assert_eq!(en, format!("cron {} (UTC)", expr.trim()), "{expr}");
            assert_eq!(zh, format!("cron 表达式 {}（UTC）", expr.trim()), "{expr}");
        }
        // A hostile length is not picked apart (and takes no time).
        let long = format!("0 3 {} * *", "1,".repeat(100_000) + "1");
        assert!(cron_in_words(&long, Language::En).starts_with("cron 0 3 1,1,"));
    }

    #[test]
    fn ordinals_follow_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31]
            .into_iter()
            .map(ordinal)
            .collect();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"
            ]
        );
    }
}
