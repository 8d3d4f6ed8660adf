//! The settings page (admins: the rights holder, abuse contacts, the default notice template
//! and the time zone, over the settings file's values) and every user's account page (their
//! own password, language, alert address and alert choices).

use askama::Template;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Redirect, Response};
use jobs::Problem;
use serde::Deserialize;
use store::{AlertDelivery, Alerts, Role};
use takedown::overrides::{self, Field, Source};

use crate::auth::{ClientAddr, CurrentUser, session_cookie};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, OnField, Refused, WHOLE_FORM, refused_page};
use crate::i18n::Lang;
use crate::render::{Ctx, page};
use crate::state::AdminState;

/// A setting's field name in the form: the last part of its key (`notices.time_zone` →
/// `time_zone`), unique among [`overrides::KEYS`].
pub(crate) fn field_name(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

#[derive(Template)]
#[template(path = "admin/settings.html")]
struct SettingsPage {
    ctx: Ctx,
    fields: Vec<Field>,
    form: Form,
    saved: bool,
}

impl SettingsPage {
    fn name<'a>(&self, field: &'a Field) -> &'a str {
        field_name(field.key)
    }

    fn label(&self, field: &Field) -> &'static str {
        self.ctx.t(&format!("settings.{}", field_name(field.key)))
    }

    /// Where the value in effect comes from, as a sentence.
    fn source(&self, field: &Field) -> String {
        match &field.source {
            Source::File => self.ctx.t("settings.from_file").to_owned(),
            Source::Saved { by, at } => format!(
                "{} {by}, {}",
                self.ctx.t("settings.saved_by"),
                self.ctx.when(at)
            ),
        }
    }

    fn is_saved(&self, field: &Field) -> bool {
        field.source != Source::File
    }
}

#[derive(Deserialize)]
pub(crate) struct SavedQuery {
    saved: Option<u8>,
}

pub(crate) async fn settings(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(q): Query<SavedQuery>,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    settings_page(&state, &user, Form::default(), q.saved.is_some()).await
}

async fn settings_page(
    state: &AdminState,
    user: &CurrentUser,
    form: Form,
    saved: bool,
) -> WebResult<Html<String>> {
    page(&SettingsPage {
        ctx: user.ctx("settings"),
        fields: state.effective().await?.fields.clone(),
        form,
        saved,
    })
}

/// The label of what is wrong with a setting.
fn problem_label(problem: Problem) -> &'static str {
    match problem {
        Problem::TooLong => "form.problem.too_long",
        Problem::ControlCharacter => "form.problem.control_character",
        Problem::NotAnEmail => "form.problem.not_an_email",
        Problem::NotAPhoneNumber => "form.problem.not_a_phone_number",
        Problem::UnknownTemplate => "form.problem.unknown_template",
        Problem::UnknownTimeZone => "form.problem.unknown_time_zone",
        Problem::BadContact => "form.problem.bad_contact",
        Problem::UnknownKey => "form.refused",
    }
}

/// Saves the settings form: each field's value (blank or the file's clears its override),
/// checked by `takedown::overrides` and audited; refused values are shown beside their field
/// and nothing is saved.
pub(crate) async fn save_settings(
    State(state): State<AdminState>,
    FormPost(user, raw, mut typed): FormPost<std::collections::BTreeMap<String, String>>,
) -> WebResult<Response> {
    user.require(Role::Admin)?;
    let given: Vec<(String, String)> = overrides::KEYS
        .iter()
        .filter_map(|key| {
            raw.get(field_name(key))
                .map(|v| ((*key).to_owned(), v.clone()))
        })
        .collect();
    match overrides::save(
        state.store(),
        &state.settings().notices,
        &given,
        user.actor(),
    )
    .await
    {
        Ok(_) => {
            state.forget_effective();
            Ok(Redirect::to("/settings?saved=1").into_response())
        }
        Err(jobs::Error::Settings(refusals)) => {
            for r in refusals {
                let label = user.lang.t(problem_label(r.problem));
                typed.refuse(
                    field_name(&r.key),
                    crate::said::Said::value(r.message).after(label),
                );
            }
            refused_page(settings_page(&state, &user, typed, false).await)
        }
        Err(other) => Err(other.into()),
    }
}

#[derive(Template)]
#[template(path = "admin/account.html")]
struct AccountPage {
    ctx: Ctx,
    form: Form,
    changed: bool,
    /// The alert address stored.
    email: String,
    /// Each event a user can be alerted of: its name and its choice stored.
    alerts: Vec<(&'static str, AlertDelivery)>,
    /// Whether an SMTP server is configured (alerts are mailed).
    mail_configured: bool,
    alerts_saved: bool,
}

#[derive(Deserialize)]
pub(crate) struct ChangedQuery {
    changed: Option<u8>,
    alerts: Option<u8>,
}

pub(crate) async fn account(
    State(state): State<AdminState>,
    user: CurrentUser,
    Query(q): Query<ChangedQuery>,
) -> WebResult<Html<String>> {
    let mut page_data = account_page(&state, &user, Form::default()).await?;
    page_data.changed = q.changed.is_some();
    page_data.alerts_saved = q.alerts.is_some();
    page(&page_data)
}

/// The account page of `user` with the stored alert choices, `form` as typed.
async fn account_page(
    state: &AdminState,
    user: &CurrentUser,
    form: Form,
) -> WebResult<AccountPage> {
    let stored = state.store().alert_preferences(user.user.id).await?;
    let alerts = notification::alerts::ALERT_EVENTS
        .iter()
        .map(|e| {
            let chosen = stored
                .iter()
                .find(|(name, _)| name == e.as_str())
                .map_or(AlertDelivery::Off, |(_, d)| *d);
            (e.as_str(), chosen)
        })
        .collect();
    Ok(AccountPage {
        ctx: user.ctx("account"),
        form,
        changed: false,
        email: user.user.email.clone().unwrap_or_default(),
        alerts,
        mail_configured: state.settings().mail_configured,
        alerts_saved: false,
    })
}

/// Saves the user's alert address and their choice per event; a refused address is shown
/// beside its field.
pub(crate) async fn save_alerts(
    State(state): State<AdminState>,
    FormPost(user, raw, typed): FormPost<std::collections::BTreeMap<String, String>>,
) -> WebResult<Response> {
    let result = alert_choices(&state, &user, &raw).await;
    match result {
        Ok(()) => Ok(Redirect::to("/account?alerts=1").into_response()),
        Err(refused) => {
            let form = typed.refused(refused, user.lang)?;
            refused_page(page(&account_page(&state, &user, form).await?))
        }
    }
}

async fn alert_choices(
    state: &AdminState,
    user: &CurrentUser,
    raw: &std::collections::BTreeMap<String, String>,
) -> Result<(), Refused> {
    let mut choices = Vec::new();
    for event in notification::alerts::ALERT_EVENTS {
        if let Some(value) = raw.get(event.as_str()) {
            let delivery = AlertDelivery::parse(value)
                .ok_or_else(|| WebError::bad(format!("{value:?}: off, immediate or digest")))
                .on(WHOLE_FORM)?;
            choices.push((event, delivery));
        }
    }
    notification::alerts::set_alerts(
        state.store(),
        user.user.id,
        raw.get("email").map(String::as_str),
        &choices,
        user.actor(),
    )
    .await
    .on("email")?;
    Ok(())
}

#[derive(Deserialize)]
pub(crate) struct PasswordForm {
    #[serde(default)]
    current_password: String,
    #[serde(default)]
    new_password: String,
    #[serde(default)]
    confirm_password: String,
}

/// Changes the user's own password: the current one must be right (each wrong try counts
/// against the login budget of the name and the address, as a login does), the new one
/// passes the same rules as everywhere. Every session and API token of the user ends
/// (`accounts::set_password`); this browser gets a new session.
pub(crate) async fn change_password(
    State(state): State<AdminState>,
    ClientAddr(addr): ClientAddr,
    FormPost(user, form, typed): FormPost<PasswordForm>,
) -> WebResult<Response> {
    match new_password(&state, &user, addr, &form).await {
        Ok(cookie) => {
            let mut response = Redirect::to("/account?changed=1").into_response();
            response.headers_mut().append(
                header::SET_COOKIE,
                cookie.parse().map_err(WebError::internal)?,
            );
            Ok(response)
        }
        Err(refused) => {
            let form = typed.refused(refused, user.lang)?;
            refused_page(page(&account_page(&state, &user, form).await?))
        }
    }
}

/// Checks and sets the new password; returns the new session's cookie.
async fn new_password(
    state: &AdminState,
    user: &CurrentUser,
    addr: Option<std::net::IpAddr>,
    form: &PasswordForm,
) -> Result<String, Refused> {
    if form.new_password != form.confirm_password {
        return Err(Refused::label("confirm_password", "account.mismatch"));
    }
    let attempt = state.limiter().reserve(user.actor(), addr, None)?;
    let right = {
        let _turn = state.limiter().check_turn().await;
        accounts::authenticate(state.store(), user.actor(), &form.current_password).await?
    };
    if right.is_none_or(|u| u.id != user.user.id) {
        drop(attempt);
        return Err(Refused::label("current_password", "account.wrong_password"));
    }
    attempt.succeeded();
    accounts::set_password(
        state.store(),
        user.user.id,
        &form.new_password,
        user.actor(),
    )
    .await
    .on("new_password")?;
    let lifetime = state.settings().session_lifetime;
    let session = accounts::start_session(state.store(), user.user.id, lifetime).await?;
    Ok(session_cookie(state, &session.cookie, lifetime))
}

/// The languages the account page offers, with `auto` (the browser's).
pub(crate) const LANGUAGES: [(&str, &str); 3] = [
    ("auto", "account.lang_auto"),
    ("en", "account.lang_en"),
    ("zh", "account.lang_zh"),
];

impl AccountPage {
    /// The choices of an alert: value and label.
    fn deliveries(&self) -> [(&'static str, &'static str); 3] {
        AlertDelivery::ALL.map(|d| {
            (
                d.as_str(),
                match d {
                    AlertDelivery::Off => "alert.delivery.off",
                    AlertDelivery::Immediate => "alert.delivery.immediate",
                    AlertDelivery::Digest => "alert.delivery.digest",
                },
            )
        })
    }

    /// The label of an alert's event.
    fn alert_label(&self, event: &str) -> &'static str {
        self.ctx.t(&format!("alert.{event}"))
    }

    /// Whether `value` is the choice shown for `event`: what was typed, else what is stored.
    fn chosen(&self, event: &str, stored: &AlertDelivery, value: &str) -> bool {
        self.form.value_or(event, stored.as_str()) == value
    }

    fn languages(&self) -> &'static [(&'static str, &'static str)] {
        &LANGUAGES
    }

    /// The user's language setting as the select shows it.
    fn language(&self) -> &str {
        match self.ctx.user.as_ref().and_then(|u| u.locale.as_deref()) {
            None => "auto",
            Some(code) => Lang::parse(code).map_or("auto", |l| match l {
                Lang::En => "en",
                Lang::Zh => "zh",
            }),
        }
    }
}
