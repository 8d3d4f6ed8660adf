//! The webhooks page (admins only): webhooks kept in the database beside the configured
//! `[[notify.webhooks]]`, added (URL checked against the crawler's address rules, secret of
//! `notification::webhooks::MIN_SECRET_CHARS` or more, never shown back), turned on and off,
//! deleted, and sent a signed test event.

use std::collections::BTreeMap;

use askama::Template;
use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use jobs::Event;
use notification::webhooks::MIN_SECRET_CHARS;
use serde::Deserialize;
use store::{Role, StoredWebhook, WebhookId, Webhooks};

use crate::auth::{CsrfForm, CurrentUser};
use crate::error::WebResult;
use crate::form::{Form, FormPost, OnField, Refused, answer};
use crate::render::{Ctx, page};
use crate::state::AdminState;

/// What "send test" did.
struct Tested {
    /// The webhook.
    id: WebhookId,
    /// Whether the receiver answered 2xx.
    delivered: bool,
    /// Its status, or why it was not delivered.
    what: String,
}

#[derive(Template)]
#[template(path = "admin/webhooks.html")]
struct WebhooksPage {
    ctx: Ctx,
    hooks: Vec<StoredWebhook>,
    /// The add form as typed, when it was refused.
    form: Form,
    /// What a test delivery did.
    tested: Option<Tested>,
    min_secret: usize,
}

impl WebhooksPage {
    /// Every event a webhook can take.
    fn events(&self) -> [&'static str; 6] {
        Event::ALL.map(Event::as_str)
    }

    /// Whether the add form, as typed, ticked `event`.
    fn checked(&self, event: &str) -> bool {
        !self.form.value(&format!("event.{event}")).is_empty()
    }

    /// The events a webhook takes, as shown.
    fn takes(&self, hook: &StoredWebhook) -> String {
        if hook.events.is_empty() {
            self.ctx.t("webhooks.every_event").to_owned()
        } else {
            hook.events
                .iter()
                .map(|e| self.ctx.named("event", e))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

pub(crate) async fn list(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    webhooks_page(&state, &user, Form::default(), None).await
}

async fn webhooks_page(
    state: &AdminState,
    user: &CurrentUser,
    form: Form,
    tested: Option<Tested>,
) -> WebResult<Html<String>> {
    page(&WebhooksPage {
        ctx: user.ctx("webhooks"),
        hooks: state.store().webhooks().await?,
        form,
        tested,
        min_secret: MIN_SECRET_CHARS,
    })
}

/// Adds a webhook: `url`, `secret` and one `event.<name>` field per event it takes (none:
/// every event).
pub(crate) async fn add(
    State(state): State<AdminState>,
    FormPost(user, raw, typed): FormPost<BTreeMap<String, String>>,
) -> WebResult<Response> {
    user.require(Role::Admin)?;
    let result = new_webhook(&state, &user, &raw).await;
    answer(
        result,
        |()| "/webhooks".to_owned(),
        typed,
        user.lang,
        |form| webhooks_page(&state, &user, form, None),
    )
    .await
}

async fn new_webhook(
    state: &AdminState,
    user: &CurrentUser,
    raw: &BTreeMap<String, String>,
) -> Result<(), Refused> {
    let field = |name: &str| raw.get(name).map_or("", String::as_str);
    let events: Vec<String> = Event::ALL
        .iter()
        .filter(|e| raw.contains_key(&format!("event.{}", e.as_str())))
        .map(|e| e.as_str().to_owned())
        .collect();
    let secret = field("secret");
    if secret.trim().chars().count() < MIN_SECRET_CHARS {
        return Err(Refused::label("secret", "webhooks.short_secret"));
    }
    notification::webhooks::add_webhook(
        state.store(),
        &state.settings().crawler,
        field("url"),
        secret,
        &events,
        user.actor(),
    )
    .await
    .on("url")?;
    Ok(())
}

#[derive(Deserialize)]
pub(crate) struct EnabledForm {
    enabled: String,
}

pub(crate) async fn set_enabled(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<EnabledForm>,
) -> WebResult<Redirect> {
    user.require(Role::Admin)?;
    state
        .store()
        .set_webhook_enabled(WebhookId(id), form.enabled == "true", user.actor())
        .await?;
    Ok(Redirect::to("/webhooks"))
}

pub(crate) async fn delete(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Admin)?;
    state
        .store()
        .delete_webhook(WebhookId(id), user.actor())
        .await?;
    Ok(Redirect::to("/webhooks"))
}

/// Sends a signed `webhook.test` event now and shows what the receiver answered.
pub(crate) async fn test(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<crate::auth::Empty>,
) -> WebResult<Response> {
    user.require(Role::Admin)?;
    let id = WebhookId(id);
    let tested =
        match notification::webhooks::send_test(state.store(), &state.settings().crawler, id).await
        {
            Ok(status) => Tested {
                id,
                delivered: true,
                what: format!("HTTP {status}"),
            },
            Err(jobs::Error::Refused(why)) => Tested {
                id,
                delivered: false,
                what: why,
            },
            Err(e) => return Err(e.into()),
        };
    Ok(webhooks_page(&state, &user, Form::default(), Some(tested))
        .await?
        .into_response())
}
