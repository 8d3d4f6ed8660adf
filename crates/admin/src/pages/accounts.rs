//! Logging in and out, the language switch, and user management (admins only).

use std::net::{IpAddr, SocketAddr};

use askama::Template;
use axum::extract::{ConnectInfo, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use store::{ApiTokenId, ApiTokenRecord, ApiTokens, Role, UserChanges, UserId, UserRecord, Users};

use crate::auth::{CsrfForm, CurrentUser, session_cookie};
use crate::error::{WebError, WebResult};
use crate::i18n::Lang;
use crate::render::{Ctx, page, when_opt};
use crate::state::AdminState;

/// The client's address, when the server was started with connection info.
pub(crate) struct ClientAddr(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip()),
        ))
    }
}

#[derive(Template)]
#[template(path = "admin/login.html")]
struct LoginPage {
    ctx: Ctx,
    next: String,
    failed: bool,
}

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    next: Option<String>,
    failed: Option<u8>,
}

/// Only a path on this site is a place to come back to (never `//evil.example`).
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_owned(),
        _ => "/".to_owned(),
    }
}

pub(crate) async fn login_form(
    headers: HeaderMap,
    Query(q): Query<LoginQuery>,
) -> WebResult<Html<String>> {
    page(&LoginPage {
        ctx: Ctx::guest(Lang::choose(None, &headers)),
        next: safe_next(q.next.as_deref()),
        failed: q.failed.is_some(),
    })
}

#[derive(Deserialize)]
pub(crate) struct LoginForm {
    username: String,
    password: String,
    next: Option<String>,
}

pub(crate) async fn login(
    State(state): State<AdminState>,
    ClientAddr(addr): ClientAddr,
    axum::Form(form): axum::Form<LoginForm>,
) -> WebResult<Response> {
    let username = form.username.trim();
    state.limiter().check(username, addr)?;
    let next = safe_next(form.next.as_deref());
    let Some(user) =
        pipeline::accounts::authenticate(state.store(), username, &form.password).await?
    else {
        state.limiter().failed(username, addr);
        tracing::info!(username, ?addr, "login failed");
        let to = format!("/login?failed=1&next={}", crate::render::urlencode(&next));
        return Ok(Redirect::to(&to).into_response());
    };
    state.limiter().succeeded(username);
    let ttl = state.settings().session_ttl;
    let session = pipeline::accounts::start_session(state.store(), user.id, ttl).await?;
    let mut response = Redirect::to(&next).into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        session_cookie(&state, &session.cookie, ttl)
            .parse()
            .map_err(WebError::internal)?,
    );
    Ok(response)
}

#[derive(Deserialize)]
pub(crate) struct Empty {}

pub(crate) async fn logout(
    State(state): State<AdminState>,
    headers: HeaderMap,
    CsrfForm(_user, _): CsrfForm<Empty>,
) -> WebResult<Response> {
    let name = crate::auth::cookie_name(state.settings().secure_cookies);
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned());
    if let Some(cookie) = cookie {
        pipeline::accounts::end_session(state.store(), &cookie).await?;
    }
    let mut response = Redirect::to("/login").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        session_cookie(&state, "", std::time::Duration::ZERO)
            .parse()
            .map_err(WebError::internal)?,
    );
    Ok(response)
}

#[derive(Deserialize)]
pub(crate) struct LanguageForm {
    lang: String,
}

pub(crate) async fn set_language(
    State(state): State<AdminState>,
    headers: HeaderMap,
    CsrfForm(user, form): CsrfForm<LanguageForm>,
) -> WebResult<Redirect> {
    let locale = match form.lang.as_str() {
        "" | "auto" => None,
        code => Some(
            Lang::parse(code)
                .ok_or_else(|| WebError::bad(format!("unknown language {code:?}: en or zh")))?
                .code()
                .to_owned(),
        ),
    };
    let changes = UserChanges {
        locale: Some(locale),
        ..UserChanges::default()
    };
    state
        .store()
        .update_user(user.user.id, &changes, user.actor())
        .await?;
    // Back where the switch was pressed, when that was a page of ours.
    let back = headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(|r| url::Url::parse(r).ok())
        .map(|u| match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        });
    Ok(Redirect::to(&safe_next(back.as_deref())))
}

#[derive(Template)]
#[template(path = "admin/users.html")]
struct UsersPage {
    ctx: Ctx,
    users: Vec<UserRecord>,
    tokens: Vec<ApiTokenRecord>,
    issued: Option<String>,
    roles: [Role; 3],
}

impl UsersPage {
    fn when(&self, t: &chrono::DateTime<chrono::Utc>) -> String {
        crate::render::when(t)
    }
    fn when_opt(&self, t: &Option<chrono::DateTime<chrono::Utc>>) -> String {
        when_opt(t)
    }
}

pub(crate) async fn users(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    users_page(&state, &user, None).await
}

async fn users_page(
    state: &AdminState,
    user: &CurrentUser,
    issued: Option<String>,
) -> WebResult<Html<String>> {
    page(&UsersPage {
        ctx: Ctx::new(user, "users"),
        users: state.store().users().await?,
        tokens: state.store().api_tokens(None).await?,
        issued,
        roles: Role::ALL,
    })
}

#[derive(Deserialize)]
pub(crate) struct NewUserForm {
    username: String,
    display_name: Option<String>,
    role: String,
    password: String,
}

pub(crate) async fn add_user(
    State(state): State<AdminState>,
    CsrfForm(user, form): CsrfForm<NewUserForm>,
) -> WebResult<Redirect> {
    user.require(Role::Admin)?;
    let role: Role = form
        .role
        .parse()
        .map_err(|e: store::UnknownRole| WebError::bad(e.to_string()))?;
    let display = super::blank_none(form.display_name);
    pipeline::accounts::add_user(
        state.store(),
        form.username.trim(),
        display.as_deref(),
        role,
        &form.password,
        user.actor(),
    )
    .await?;
    Ok(Redirect::to("/users"))
}

#[derive(Deserialize)]
pub(crate) struct UserForm {
    role: Option<String>,
    disabled: Option<String>,
    password: Option<String>,
}

pub(crate) async fn update_user(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<UserForm>,
) -> WebResult<Redirect> {
    user.require(Role::Admin)?;
    let id = UserId(id);
    if let Some(password) = super::blank_none(form.password) {
        pipeline::accounts::set_password(state.store(), id, &password, user.actor()).await?;
    }
    let changes = UserChanges {
        role: form
            .role
            .as_deref()
            .map(str::parse::<Role>)
            .transpose()
            .map_err(|e| WebError::bad(e.to_string()))?,
        disabled: form.disabled.as_deref().map(|d| d == "true"),
        ..UserChanges::default()
    };
    if changes.role.is_some() || changes.disabled.is_some() {
        state
            .store()
            .update_user(id, &changes, user.actor())
            .await?;
    }
    Ok(Redirect::to("/users"))
}

#[derive(Deserialize)]
pub(crate) struct TokenForm {
    name: String,
    expires_days: Option<String>,
}

pub(crate) async fn issue_token(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, form): CsrfForm<TokenForm>,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    let name = form.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(WebError::bad("a token needs a name of 1 to 100 characters"));
    }
    let expires_at = match super::blank_none(form.expires_days) {
        Some(days) => {
            let days: i64 = days
                .parse()
                .ok()
                .filter(|d| (1..=3650).contains(d))
                .ok_or_else(|| WebError::bad("expiry: a number of days from 1 to 3650"))?;
            Some(chrono::Utc::now() + chrono::TimeDelta::days(days))
        }
        None => None,
    };
    let issued = pipeline::accounts::issue_api_token(
        state.store(),
        UserId(id),
        name,
        expires_at,
        user.actor(),
    )
    .await?;
    // Shown on this response only: the store keeps a hash.
    users_page(&state, &user, Some(issued.token)).await
}

pub(crate) async fn revoke_token(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    CsrfForm(user, _): CsrfForm<Empty>,
) -> WebResult<Redirect> {
    user.require(Role::Admin)?;
    state
        .store()
        .revoke_api_token(ApiTokenId(id), user.actor())
        .await?;
    Ok(Redirect::to("/users"))
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn only_local_paths_are_places_to_come_back_to() {
        assert_eq!(safe_next(Some("/cases?status=new")), "/cases?status=new");
        for bad in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil",
            "cases",
        ] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
