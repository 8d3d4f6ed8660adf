//! Notices: drafted from a case and their drafts edited.

use store::{CaseId, NoticeId, NoticeRecord};
use takedown::NoticeTemplate;

use crate::error::WebResult;
use crate::form::Refused;
use crate::state::AdminState;

/// Drafts a notice of `case` with the template named `template` to `to` (blank: the
/// configured abuse contact); the pages and the API both draft through this.
pub(crate) async fn draft(
    state: &AdminState,
    actor: &str,
    case: CaseId,
    template: &str,
    to: Option<String>,
) -> WebResult<NoticeRecord> {
    let template = NoticeTemplate::parse(template)?;
    let to = crate::form::blank_none(to);
    // The recipient comes from the form or the configured abuse contacts; the security.txt
    // look-up needs the crawler's fetcher, which the CLI has and the web node does not.
    Ok(takedown::notices::create_notice(
        state.store(),
        &state.settings().notices,
        None,
        case,
        template,
        to.as_deref(),
        actor,
    )
    .await?)
}

/// Changes a draft's recipient and text (`takedown::notices::edit_draft`, audited); refused
/// once the notice was marked sent. The pages and the API both edit drafts through this.
pub(crate) async fn edit_draft(
    state: &AdminState,
    actor: &str,
    id: NoticeId,
    recipient: &str,
    text: &str,
) -> Result<NoticeRecord, Refused> {
    takedown::notices::edit_draft(state.store(), id, recipient, text, actor)
        .await
        .map_err(|e| {
            let field = match &e {
                jobs::Error::Notice(m) if m.starts_with("recipient") => "recipient",
                jobs::Error::Notice(_) => "body_text",
                _ => crate::form::WHOLE_FORM,
            };
            Refused::new(field, e)
        })
}
