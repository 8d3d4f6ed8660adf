//! Logging in and out, the language switch, and user management (admins only).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use store::{ApiTokenId, ApiTokenRecord, ApiTokens, Role, UserChanges, UserId, UserRecord, Users};

use crate::auth::{
    ClientAddr, CsrfForm, CurrentUser, Empty, PlainForm, check_login_token, device_cookie,
    device_cookie_value, login_token, session_cookie, session_cookie_value,
};
use crate::error::{WebError, WebResult};
use crate::form::{Form, FormPost, OnField, Refused, answer, refused_page};
use crate::i18n::Lang;
use crate::render::{Ctx, page};
use crate::state::AdminState;

#[derive(Template)]
#[template(path = "admin/login.html")]
struct LoginPage {
    ctx: Ctx,
    next: String,
    failed: bool,
    csrf: String,
    /// The user name typed, when the login failed.
    form: Form,
}

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    next: Option<String>,
    failed: Option<u8>,
}

/// Only a path on this site is a place to come back to: after percent-decoding, a single
/// `/` and then a path character (never `//evil.example`, `/\evil.example` or `/%09/evil`,
/// which browsers read as another host once they drop the tab), and no control character,
/// white space or backslash anywhere (a CR/LF could not even go in a header). Anything else
/// goes to `/`. What comes back is the path as given, with any byte outside visible ASCII
/// percent-encoded, so it is always a valid `Location`.
fn safe_next(next: Option<&str>) -> String {
    let Some(next) = next else {
        return "/".to_owned();
    };
    let decoded = percent_decode(next);
    let mut chars = decoded.chars();
    let refused = |c: char| c.is_control() || c.is_whitespace() || c == '\\';
    let path_char = |c: char| c.is_alphanumeric() || "-._~!$&'()*+,;=:@%?#".contains(c);
    let safe = chars.next() == Some('/')
        && chars.next().is_none_or(path_char)
        && !decoded.chars().any(refused)
        && !next.chars().any(refused);
    if !safe {
        return "/".to_owned();
    }
    next.bytes()
        .fold(String::with_capacity(next.len()), |mut out, b| {
            if b.is_ascii_graphic() {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
            out
        })
}

/// `%XX` escapes decoded (others left as they are), read as UTF-8 with replacement.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) async fn login_form(
    State(state): State<AdminState>,
    headers: HeaderMap,
    Query(q): Query<LoginQuery>,
) -> WebResult<Response> {
    let failed = q.failed.is_some();
    login_page(
        &state,
        &headers,
        safe_next(q.next.as_deref()),
        failed,
        Form::default(),
    )
}

/// The login page; `form` holds the name typed when a login failed (answered 422).
fn login_page(
    state: &AdminState,
    headers: &HeaderMap,
    next: String,
    failed: bool,
    form: Form,
) -> WebResult<Response> {
    let (csrf, set) = login_token(state, headers);
    let refused = form.failed();
    let html = page(&LoginPage {
        ctx: Ctx::guest(Lang::choose(None, headers)),
        next,
        failed: failed || refused,
        csrf,
        form,
    });
    let mut response = if refused {
        refused_page(html)?
    } else {
        html?.into_response()
    };
    if let Some(set) = set {
        response
            .headers_mut()
            .append(header::SET_COOKIE, cookie_header(&set)?);
    }
    Ok(response)
}

fn cookie_header(value: &str) -> WebResult<HeaderValue> {
    value.parse().map_err(WebError::internal)
}

#[derive(Deserialize)]
pub(crate) struct LoginForm {
    username: String,
    password: String,
    next: Option<String>,
    #[serde(default)]
    csrf: String,
}

/// Signs in. The form must carry the login page's token; the attempt is counted before the
/// password is checked (at most `concurrent_checks` at once), so parallel guesses past the
/// limit are answered 429 without a check. A right password starts a session and leaves a
/// device cookie, the browser's own login budget for that user from then on.
pub(crate) async fn login(
    State(state): State<AdminState>,
    ClientAddr(addr): ClientAddr,
    headers: HeaderMap,
    PlainForm(form): PlainForm<LoginForm>,
) -> WebResult<Response> {
    check_login_token(&state, &headers, &form.csrf)?;
    let username = form.username.trim();
    let next = safe_next(form.next.as_deref());
    let device = device_cookie_value(&state, &headers);
    let attempt = state.limiter().reserve(username, addr, device)?;
    let user = {
        let _turn = state.limiter().check_turn().await;
        accounts::authenticate(state.store(), username, &form.password).await?
    };
    let Some(user) = user else {
        // The attempt stays counted.
        drop(attempt);
        tracing::info!(username, ?addr, "login failed");
        let mut form = Form::with_values([("username", username)]);
        form.refuse("password", Lang::choose(None, &headers).t("login.failed"));
        return login_page(&state, &headers, next, true, form);
    };
    attempt.succeeded();
    let lifetime = state.settings().session_lifetime;
    let session = accounts::start_session(state.store(), user.id, lifetime).await?;
    let mut response = Redirect::to(&next).into_response();
    let cookies = response.headers_mut();
    cookies.append(
        header::SET_COOKIE,
        cookie_header(&session_cookie(&state, &session.cookie, lifetime))?,
    );
    cookies.append(
        header::SET_COOKIE,
        cookie_header(&device_cookie(&state, &user.username))?,
    );
    Ok(response)
}

pub(crate) async fn logout(
    State(state): State<AdminState>,
    headers: HeaderMap,
    CsrfForm(_user, _): CsrfForm<Empty>,
) -> WebResult<Response> {
    if let Some(cookie) = session_cookie_value(&state, &headers) {
        accounts::end_session(state.store(), cookie).await?;
    }
    let mut response = Redirect::to("/login").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        cookie_header(&session_cookie(&state, "", std::time::Duration::ZERO))?,
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
    /// The add-user form as typed, when it was refused.
    form: Form,
    /// A user's row whose form (role and address, or a new token) was refused, and that
    /// form as typed.
    row: Option<(UserId, Form)>,
}

impl UsersPage {
    /// The refused form of `user`'s row, if that row's form was refused.
    fn row_form(&self, user: &UserId) -> Option<&Form> {
        self.row
            .as_ref()
            .filter(|(id, _)| id == user)
            .map(|(_, f)| f)
    }

    /// The alert address `user`'s row shows: as typed when its form was refused.
    fn email_of<'a>(&'a self, user: &'a UserRecord) -> &'a str {
        let stored = user.email.as_deref().unwrap_or_default();
        self.row_form(&user.id)
            .map_or(stored, |f| f.value_or("email", stored))
    }

    /// The role the add-user form shows selected.
    fn role_selected(&self, role: &Role) -> bool {
        self.form.value_or("role", "viewer") == role.as_str()
    }
}

pub(crate) async fn users(
    State(state): State<AdminState>,
    user: CurrentUser,
) -> WebResult<Html<String>> {
    user.require(Role::Admin)?;
    users_page(&state, &user, None, Form::default(), None).await
}

async fn users_page(
    state: &AdminState,
    user: &CurrentUser,
    issued: Option<String>,
    form: Form,
    row: Option<(UserId, Form)>,
) -> WebResult<Html<String>> {
    page(&UsersPage {
        ctx: user.ctx("users"),
        users: state.store().users().await?,
        tokens: state.store().api_tokens(None).await?,
        issued,
        roles: Role::ALL,
        form,
        row,
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
    FormPost(user, form, typed): FormPost<NewUserForm>,
) -> WebResult<Response> {
    user.require(Role::Admin)?;
    let result = new_user(&state, &user, form).await;
    answer(
        result,
        |()| "/users".to_owned(),
        typed,
        user.lang,
        |form| users_page(&state, &user, None, form, None),
    )
    .await
}

async fn new_user(
    state: &AdminState,
    user: &CurrentUser,
    form: NewUserForm,
) -> Result<(), Refused> {
    let role: Role = form
        .role
        .parse()
        .map_err(|e: store::UnknownRole| WebError::bad(e.to_string()))
        .on("role")?;
    let display = crate::form::blank_none(form.display_name);
    accounts::add_user(
        state.store(),
        form.username.trim(),
        display.as_deref(),
        role,
        &form.password,
        user.actor(),
    )
    .await
    .map_err(|e| {
        // The account rules name what they refused: a password, else the name.
        let field = if e.to_string().contains("password") {
            "password"
        } else {
            "username"
        };
        Refused::new(field, e)
    })
    .map(drop)
}

#[derive(Deserialize)]
pub(crate) struct UserForm {
    role: Option<String>,
    /// The user's alert address (blank clears it), when the form has the field.
    email: Option<String>,
    disabled: Option<String>,
    password: Option<String>,
}

pub(crate) async fn update_user(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    FormPost(user, form, typed): FormPost<UserForm>,
) -> WebResult<Response> {
    user.require(Role::Admin)?;
    let id = UserId(id);
    let result = change_user(&state, &user, id, form).await;
    answer(
        result,
        |()| "/users".to_owned(),
        typed,
        user.lang,
        |form| users_page(&state, &user, None, Form::default(), Some((id, form))),
    )
    .await
}

/// What a user's row form asks: a new password, alert address, role or status.
async fn change_user(
    state: &AdminState,
    user: &CurrentUser,
    id: UserId,
    form: UserForm,
) -> Result<(), Refused> {
    let role = form
        .role
        .as_deref()
        .map(str::parse::<Role>)
        .transpose()
        .map_err(|e| WebError::bad(e.to_string()))
        .on("role")?;
    if let Some(password) = crate::form::blank_none(form.password) {
        accounts::set_password(state.store(), id, &password, user.actor())
            .await
            .on("password")?;
    }
    if let Some(email) = &form.email {
        notification::alerts::set_alerts(state.store(), id, Some(email), &[], user.actor())
            .await
            .on("email")?;
    }
    let changes = UserChanges {
        role,
        disabled: form.disabled.as_deref().map(|d| d == "true"),
        ..UserChanges::default()
    };
    if changes.role.is_some() || changes.disabled.is_some() {
        state
            .store()
            .update_user(id, &changes, user.actor())
            .await?;
    }
    Ok(())
}

#[derive(Deserialize)]
pub(crate) struct TokenForm {
    name: String,
    expires_days: Option<String>,
}

pub(crate) async fn issue_token(
    State(state): State<AdminState>,
    Path(id): Path<i64>,
    FormPost(user, form, typed): FormPost<TokenForm>,
) -> WebResult<Response> {
    user.require(Role::Admin)?;
    let id = UserId(id);
    match new_token(&state, &user, id, form).await {
        // Shown on this response only: the store keeps a hash.
        Ok(token) => Ok(
            users_page(&state, &user, Some(token), Form::default(), None)
                .await?
                .into_response(),
        ),
        Err(refused) => refused_page(
            users_page(
                &state,
                &user,
                None,
                Form::default(),
                Some((id, typed.refused(refused, user.lang)?)),
            )
            .await,
        ),
    }
}

/// Issues the token a row's form asks for; returns it.
async fn new_token(
    state: &AdminState,
    user: &CurrentUser,
    id: UserId,
    form: TokenForm,
) -> Result<String, Refused> {
    let name = form.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Refused::new(
            "name",
            WebError::bad("a token needs a name of 1 to 100 characters"),
        ));
    }
    let expires_at = match crate::form::blank_none(form.expires_days) {
        Some(days) => {
            let days: i64 = days
                .parse()
                .ok()
                .filter(|d| (1..=3650).contains(d))
                .ok_or_else(|| WebError::bad("a number of days from 1 to 3650"))
                .on("expires_days")?;
            Some(chrono::Utc::now() + chrono::TimeDelta::days(days))
        }
        None => None,
    };
    let issued =
        accounts::issue_api_token(state.store(), id, name, expires_at, user.actor()).await?;
    Ok(issued.token)
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
        assert_eq!(safe_next(Some("/")), "/");
        assert_eq!(safe_next(Some("/works?q=%E7%BA%A2")), "/works?q=%E7%BA%A2");
        // Raw UTF-8 goes into the Location percent-encoded.
        assert_eq!(safe_next(Some("/works?q=红")), "/works?q=%E7%BA%A2");
        for bad in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil",
            "cases",
            "",
            // Issue #23: a tab, a backslash, any white space or control after the first /,
            // as sent or once percent-decoded.
            "/\t/evil.example/",
            "/%09/evil.example/",
            "/%5Cevil.example",
            "/%2F/evil.example",
            "/%2f%2fevil.example",
            "/ /evil.example",
            "/%20/evil.example",
            "/%E3%80%80/evil.example",
            "/\u{3000}/evil.example",
            "/%0D%0ASet-Cookie:%20x=1",
            "/cases\r\nSet-Cookie: x=1",
            "/cases?x=%00",
            "/\u{202e}",
        ] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
