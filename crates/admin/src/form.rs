//! Forms refused where they were typed: every form of the UI is answered on failure by its
//! own page again, with what was typed kept (never a password or the CSRF token), the
//! message beside the field in the user's language, and status 422.
//!
//! A handler takes a [`FormPost`] (the user, the form, and what was typed as a [`Form`]),
//! does its work in steps whose errors name their field ([`OnField::on`]), and on a refusal
//! renders its page with [`Form::refused`]'s result. Templates mark a field with the macros
//! of `admin/forms.html`: `{% call forms::aria(form, "name") %}` inside the `<input>` and
//! `{% call forms::error(form, "name") %}` beside it; `form.value("name")` (or
//! `form.value_or("name", current)`) fills it in.

use std::collections::BTreeMap;

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::auth::{CsrfForm, CurrentUser};
use crate::error::{WebError, WebResult};
use crate::i18n::Lang;
use crate::said::Said;
use crate::state::AdminState;

/// The field a refusal about the whole form is shown beside (at the top of the form).
pub(crate) const WHOLE_FORM: &str = "form";

/// A form as it was typed, and what was wrong with it.
#[derive(Debug, Clone, Default)]
pub struct Form {
    values: BTreeMap<String, String>,
    errors: BTreeMap<String, Said>,
}

impl Form {
    /// What a posted body typed: every field but passwords and the CSRF token (a field
    /// given twice keeps its first value).
    pub fn typed(body: &[u8]) -> Form {
        let mut values = BTreeMap::new();
        for (name, value) in url::form_urlencoded::parse(body) {
            if name == "csrf" || name.contains("password") {
                continue;
            }
            values
                .entry(name.into_owned())
                .or_insert_with(|| value.into_owned());
        }
        Form {
            values,
            errors: BTreeMap::new(),
        }
    }

    /// A form typed with these fields (a login form's user name).
    pub fn with_values<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Form {
        Form {
            values: fields
                .into_iter()
                .filter(|(name, _)| !name.contains("password"))
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect(),
            errors: BTreeMap::new(),
        }
    }

    /// What was typed in `field`, or nothing.
    pub fn value(&self, field: &str) -> &str {
        self.values.get(field).map_or("", String::as_str)
    }

    /// What was typed in `field` when this form was posted, else `current` (the stored
    /// value an edit form starts from).
    pub fn value_or<'a>(&'a self, field: &str, current: &'a str) -> &'a str {
        if self.values.is_empty() {
            current
        } else {
            self.value(field)
        }
    }

    /// The message beside `field`, if it was refused.
    pub fn error(&self, field: &str) -> Option<&Said> {
        self.errors.get(field)
    }

    /// Whether `field` was refused.
    pub fn has_error(&self, field: &str) -> bool {
        self.errors.contains_key(field)
    }

    /// Whether anything was refused.
    pub fn failed(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Puts `message` beside `field`.
    pub fn refuse(&mut self, field: &str, message: impl Into<Said>) {
        self.errors.insert(field.to_owned(), message.into());
    }

    /// This form with `refused` beside its field, in `lang`, when it is a refusal of the
    /// input (400, 409, 422); any other error (a missing role, a failed database, a row not
    /// found) is returned to answer the request with.
    ///
    /// # Errors
    /// `refused`'s error when it is not about the input.
    pub fn refused(mut self, refused: Refused, lang: Lang) -> WebResult<Form> {
        let message = match &refused.error {
            WebError::BadRequest(m) | WebError::Conflict(m) => lang.say(m),
            _ => return Err(refused.error),
        };
        let message = match refused.label {
            Some(key) => message.after(lang.t(key)),
            None => message,
        };
        self.refuse(refused.field, message);
        Ok(self)
    }
}

impl Form {
    /// This form with every one of `refused` beside its field (a form checked field by
    /// field reports all it refuses at once); the first error that is not about the input
    /// is returned instead.
    ///
    /// # Errors
    /// The first of `refused` that is not a refusal of the input.
    pub fn refused_all(self, refused: Vec<Refused>, lang: Lang) -> WebResult<Form> {
        refused
            .into_iter()
            .try_fold(self, |form, refused| form.refused(refused, lang))
    }
}

/// [`answer`] for a form checked field by field: every refusal shown at once.
pub(crate) async fn answer_all<T, Again>(
    result: Result<T, Vec<Refused>>,
    to: impl FnOnce(T) -> String,
    typed: Form,
    lang: Lang,
    again: impl FnOnce(Form) -> Again,
) -> WebResult<Response>
where
    Again: std::future::Future<Output = WebResult<Html<String>>>,
{
    match result {
        Ok(value) => Ok(axum::response::Redirect::to(&to(value)).into_response()),
        Err(refused) => refused_page(again(typed.refused_all(refused, lang)?).await),
    }
}

/// The answer to a refused form: its page again, 422.
pub(crate) fn refused_page(page: WebResult<Html<String>>) -> WebResult<Response> {
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page?).into_response())
}

/// The answer to a posted form: on success a redirect to `to(value)`, on a refused input
/// the form's page again (`again`, given the form as typed with the refusal beside its
/// field), 422; any other error as it is.
pub(crate) async fn answer<T, Again>(
    result: Result<T, Refused>,
    to: impl FnOnce(T) -> String,
    typed: Form,
    lang: Lang,
    again: impl FnOnce(Form) -> Again,
) -> WebResult<Response>
where
    Again: std::future::Future<Output = WebResult<Html<String>>>,
{
    match result {
        Ok(value) => Ok(axum::response::Redirect::to(&to(value)).into_response()),
        Err(refused) => refused_page(again(typed.refused(refused, lang)?).await),
    }
}

/// An error about one field of a form.
#[derive(Debug)]
pub struct Refused {
    /// The field (or [`WHOLE_FORM`]).
    pub field: &'static str,
    /// A label (`form.…`) said before the message in the user's language.
    pub label: Option<&'static str>,
    /// What went wrong.
    pub error: WebError,
}

impl Refused {
    /// `error`, beside `field`.
    pub fn new(field: &'static str, error: impl Into<WebError>) -> Self {
        Refused {
            field,
            label: Some("form.refused"),
            error: error.into(),
        }
    }

    /// The error to answer a call without a form with (the API): a refused input's message
    /// names its field.
    pub fn into_error(self) -> WebError {
        let named = |m: String| {
            if m.is_empty() {
                format!(
                    "{}: {}",
                    self.field,
                    Lang::En.t(self.label.unwrap_or("form.refused"))
                )
            } else if self.field == WHOLE_FORM {
                m
            } else {
                format!("{}: {m}", self.field)
            }
        };
        match self.error {
            WebError::BadRequest(m) => WebError::BadRequest(named(m)),
            WebError::Conflict(m) => WebError::Conflict(named(m)),
            other => other,
        }
    }

    /// `field` refused with the label `key` alone (the message in the user's language).
    pub fn label(field: &'static str, key: &'static str) -> Self {
        Refused {
            field,
            label: Some(key),
            error: WebError::BadRequest(String::new()),
        }
    }
}

impl<E: Into<WebError>> From<E> for Refused {
    fn from(e: E) -> Self {
        Refused::new(WHOLE_FORM, e)
    }
}

/// Names the field an error is about.
pub trait OnField<T> {
    /// The error, beside `field`.
    fn on(self, field: &'static str) -> Result<T, Refused>;
}

impl<T, E: Into<WebError>> OnField<T> for Result<T, E> {
    fn on(self, field: &'static str) -> Result<T, Refused> {
        self.map_err(|e| Refused::new(field, e))
    }
}

/// A form posted by a logged-in user with its CSRF token checked ([`CsrfForm`]), and what
/// was typed in it.
pub struct FormPost<T>(pub CurrentUser, pub T, pub Form);

impl<T: DeserializeOwned + Send> FromRequest<AdminState> for FormPost<T> {
    type Rejection = WebError;

    async fn from_request(request: Request, state: &AdminState) -> WebResult<Self> {
        let (user, form, bytes) = CsrfForm::<T>::read(request, state).await?;
        Ok(FormPost(user, form, Form::typed(&bytes)))
    }
}

/// A form's optional text field: blank is none.
pub(crate) fn blank_none(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_the_token_are_never_kept() {
        let form = Form::typed(
            b"csrf=t0k3n&username=%E5%BC%A0%E4%B8%89&password=hunter2&new_password=x\
              &current_password=y&name=a&name=b",
        );
        assert_eq!(form.value("username"), "张三");
        assert_eq!(form.value("name"), "a");
        for hidden in ["csrf", "password", "new_password", "current_password"] {
            assert_eq!(form.value(hidden), "", "{hidden}");
        }
        assert_eq!(form.value_or("username", "stored"), "张三");
        assert_eq!(Form::default().value_or("username", "stored"), "stored");
        let login = Form::with_values([("username", "bob"), ("password", "secret")]);
        assert_eq!(
            (login.value("username"), login.value("password")),
            ("bob", "")
        );
    }

    #[test]
    fn input_refusals_go_beside_their_field_and_others_through() {
        let form = Form::typed(b"start_url=ftp%3A%2F%2Fx");
        let refused = Err::<(), _>(WebError::bad("only http(s) URLs"))
            .on("start_url")
            .unwrap_err();
        let form = form.refused(refused, Lang::Zh).unwrap();
        assert_eq!(
            form.error("start_url").map(ToString::to_string),
            Some(format!("{}: only http(s) URLs", Lang::Zh.t("form.refused")))
        );
        assert!(form.has_error("start_url") && !form.has_error("name"));
        assert_eq!(form.value("start_url"), "ftp://x");
        let labelled = Form::default()
            .refused(
                Refused::label("time_zone", "form.problem.unknown_time_zone"),
                Lang::En,
            )
            .unwrap();
        assert_eq!(
            labelled
                .error("time_zone")
                .map(ToString::to_string)
                .as_deref(),
            Some(Lang::En.t("form.problem.unknown_time_zone"))
        );
        for other in [
            WebError::Internal("disk".into()),
            WebError::Forbidden("admins only".into()),
            WebError::NotFound("site 9".into()),
        ] {
            let refused = Err::<(), _>(other).on("name").unwrap_err();
            assert!(Form::default().refused(refused, Lang::En).is_err());
        }
    }
}
