//! Accounts end to end on both backends (issue #13): users added and signed in, passwords
//! changed, sessions behind cookies, API tokens, and the first admin of an empty store.

use std::time::Duration;

use accounts::BOOTSTRAP_ADMIN;
use chrono::Utc;
use jobs::Error;
use store::testing::TestDb;
use store::{ApiTokens, Role, Sessions, UserChanges, Users};

const PASSWORD: &str = "correct horse battery";
/// The idle timeout sessions are read with: longer than any of these tests.
const IDLE: Duration = Duration::from_secs(3600);

store::on_both_backends!(
    users_sign_in_with_their_password_only_while_enabled,
    a_new_password_ends_the_sessions,
    sessions_resolve_until_they_expire_or_end,
    api_tokens_resolve_until_revoked_or_expired,
    the_first_admin_is_created_once,
);

fn refused(r: jobs::Result<impl std::fmt::Debug>, says: &str) {
    match r {
        Err(Error::Account(msg)) => assert!(msg.contains(says), "{msg}"),
        other => panic!("expected an account input refused saying {says:?}, got {other:?}"),
    }
}

async fn users_sign_in_with_their_password_only_while_enabled(db: &TestDb) {
    let s = &db.store;
    let alice = accounts::add_user(s, "alice", Some("Alice"), Role::Admin, PASSWORD, "test")
        .await
        .unwrap();
    let li = accounts::add_user(
        s,
        "李雷",
        None,
        Role::Reviewer,
        "密码是十二个字符的长度啊",
        "test",
    )
    .await
    .unwrap();
    assert_eq!(
        (alice.role, alice.display_name.as_deref()),
        (Role::Admin, Some("Alice"))
    );
    // Only the hash is stored.
    let (_, hash) = s.user_login("alice").await.unwrap().unwrap();
    assert!(
        hash.starts_with("$argon2id$") && !hash.contains(PASSWORD),
        "{hash}"
    );

    let signed_in = accounts::authenticate(s, "alice", PASSWORD)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(signed_in.id, alice.id);
    assert!(signed_in.last_login_at.is_some());
    assert_eq!(
        s.user(alice.id).await.unwrap().last_login_at,
        signed_in.last_login_at
    );
    assert!(
        accounts::authenticate(s, "李雷", "密码是十二个字符的长度啊")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        accounts::authenticate(s, "alice", "correct horse batterY")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::authenticate(s, "ALICE", PASSWORD)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::authenticate(s, "nobody", PASSWORD)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::authenticate(s, "alice", "")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::authenticate(s, "alice", &"x".repeat(5000))
            .await
            .unwrap()
            .is_none()
    );

    // A disabled user cannot sign in with the right password; enabled again, they can.
    let off = UserChanges {
        disabled: Some(true),
        ..UserChanges::default()
    };
    s.update_user(li.id, &off, "test").await.unwrap();
    assert!(
        accounts::authenticate(s, "李雷", "密码是十二个字符的长度啊")
            .await
            .unwrap()
            .is_none()
    );
    let on = UserChanges {
        disabled: Some(false),
        ..UserChanges::default()
    };
    s.update_user(li.id, &on, "test").await.unwrap();
    assert!(
        accounts::authenticate(s, "李雷", "密码是十二个字符的长度啊")
            .await
            .unwrap()
            .is_some()
    );

    // Refused inputs say what is allowed, and store nothing.
    refused(
        accounts::add_user(s, "bob", None, Role::Viewer, "hunter2", "test").await,
        "use at least 12",
    );
    refused(
        accounts::add_user(s, "bob smith", None, Role::Viewer, PASSWORD, "test").await,
        "use letters, digits and . _ - @ only",
    );
    refused(
        accounts::add_user(s, "", None, Role::Viewer, PASSWORD, "test").await,
        "use 1 to 64",
    );
    let taken = accounts::add_user(s, "alice", None, Role::Viewer, PASSWORD, "test").await;
    assert!(
        matches!(&taken, Err(Error::Store { source: store::Error::Conflict(m), .. }) if m.contains("taken")),
        "{taken:?}"
    );
    assert_eq!(s.count_users().await.unwrap(), 2);
}

async fn a_new_password_ends_the_sessions(db: &TestDb) {
    let s = &db.store;
    let u = accounts::add_user(s, "bob", None, Role::Viewer, PASSWORD, "test")
        .await
        .unwrap();
    let one = accounts::start_session(s, u.id, Duration::from_secs(3600))
        .await
        .unwrap();
    let two = accounts::start_session(s, u.id, Duration::from_secs(3600))
        .await
        .unwrap();
    assert!(
        accounts::session(s, &one.cookie, IDLE)
            .await
            .unwrap()
            .is_some()
    );

    refused(
        accounts::set_password(s, u.id, "short", "bob").await,
        "at least 12",
    );
    assert!(
        accounts::session(s, &one.cookie, IDLE)
            .await
            .unwrap()
            .is_some()
    );
    let token = accounts::issue_api_token(s, u.id, "ci", None, "bob")
        .await
        .unwrap();
    let reset = accounts::set_password(s, u.id, "a much better passphrase", "bob")
        .await
        .unwrap();
    assert_eq!(reset.sessions_ended, 2);
    assert_eq!(reset.tokens_revoked.len(), 1);
    // Issue #23: the tokens end with the old password, not only the sessions.
    assert!(
        accounts::token_user(s, &token.token)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::session(s, &one.cookie, IDLE)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::session(s, &two.cookie, IDLE)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::authenticate(s, "bob", PASSWORD)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        accounts::authenticate(s, "bob", "a much better passphrase")
            .await
            .unwrap()
            .is_some()
    );
    let audit = store::AuditLog::audit_of(s, "user", u.id.0).await.unwrap();
    let last = audit.last().unwrap();
    assert_eq!(
        (last.actor.as_str(), last.action.as_str()),
        ("bob", "user.update")
    );
    assert_eq!(last.details["password"], "changed");
    assert_eq!(last.details["sessions_ended"], 2);
    assert_eq!(last.details["api_tokens_revoked"][0]["name"], "ci");
    // A common password is refused for a reset as for a new user.
    refused(
        accounts::set_password(s, u.id, "Password1234", "bob").await,
        "most common passwords",
    );
}

async fn sessions_resolve_until_they_expire_or_end(db: &TestDb) {
    let s = &db.store;
    let u = accounts::add_user(s, "carol", None, Role::Reviewer, PASSWORD, "test")
        .await
        .unwrap();
    let new = accounts::start_session(s, u.id, Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(new.cookie.len(), 64);
    assert_ne!(new.cookie, new.csrf_token);
    let got = accounts::session(s, &new.cookie, IDLE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.user.id, got.csrf_token.as_str()),
        (u.id, new.csrf_token.as_str())
    );
    assert_eq!(got.expires_at, new.expires_at);
    // The store holds a hash of the cookie, not the cookie.
    assert!(s.session(&new.cookie, Utc::now()).await.unwrap().is_none());
    assert!(
        accounts::session(s, "not-a-cookie", IDLE)
            .await
            .unwrap()
            .is_none()
    );

    // A session with no time left is gone at once; purging removes it.
    let brief = accounts::start_session(s, u.id, Duration::ZERO)
        .await
        .unwrap();
    assert!(
        accounts::session(s, &brief.cookie, IDLE)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(s.purge_expired_sessions(Utc::now()).await.unwrap(), 1);

    accounts::end_session(s, &new.cookie).await.unwrap();
    accounts::end_session(s, &new.cookie).await.unwrap();
    assert!(
        accounts::session(s, &new.cookie, IDLE)
            .await
            .unwrap()
            .is_none()
    );
}

async fn api_tokens_resolve_until_revoked_or_expired(db: &TestDb) {
    let s = &db.store;
    let u = accounts::add_user(s, "ci-bot", None, Role::Reviewer, PASSWORD, "test")
        .await
        .unwrap();
    let issued = accounts::issue_api_token(s, u.id, "nightly upload", None, "admin")
        .await
        .unwrap();
    let hex = issued.token.strip_prefix("chk_").unwrap();
    assert_eq!(hex.len(), 40);
    assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(issued.record.prefix, issued.token[..12]);
    assert_eq!(issued.record.name, "nightly upload");
    assert_eq!(
        accounts::token_user(s, &issued.token)
            .await
            .unwrap()
            .map(|u| u.id),
        Some(u.id)
    );
    let (record, _) = accounts::api_token(s, &issued.token)
        .await
        .unwrap()
        .unwrap();
    assert!(record.last_used_at.is_some());
    assert!(accounts::token_user(s, "chk_0000").await.unwrap().is_none());
    assert!(accounts::token_user(s, "").await.unwrap().is_none());

    s.revoke_api_token(issued.record.id, "admin").await.unwrap();
    assert!(
        accounts::token_user(s, &issued.token)
            .await
            .unwrap()
            .is_none()
    );

    // A token is good until its end and refused from then on. The check before the end
    // counts only if it finished before the end: a machine that took the whole second to
    // get there proves nothing either way, and must not fail the test.
    let ends = Utc::now() + chrono::TimeDelta::seconds(1);
    let brief = accounts::issue_api_token(s, u.id, "brief", Some(ends), "admin")
        .await
        .unwrap();
    let before_end = accounts::token_user(s, &brief.token).await.unwrap();
    if Utc::now() < ends {
        assert!(before_end.is_some(), "refused before its end");
    }
    if let Ok(left) = (ends - Utc::now()).to_std() {
        // Waiting for the clock to pass the end: waiting longer changes nothing.
        tokio::time::sleep(left).await;
    }
    assert!(
        accounts::token_user(s, &brief.token)
            .await
            .unwrap()
            .is_none()
    );

    refused(
        accounts::issue_api_token(s, u.id, "  ", None, "admin").await,
        "token name",
    );
    refused(
        accounts::issue_api_token(s, u.id, "old", Some(Utc::now()), "admin").await,
        "in the past",
    );
    let unknown = accounts::issue_api_token(s, store::UserId(9999), "x", None, "admin").await;
    assert!(unknown.unwrap_err().is_not_found());
    assert_eq!(s.api_tokens(Some(u.id)).await.unwrap().len(), 2);
}

async fn the_first_admin_is_created_once(db: &TestDb) {
    let s = &db.store;
    let (name, password) = accounts::bootstrap_admin(s).await.unwrap().unwrap();
    assert_eq!(name, BOOTSTRAP_ADMIN);
    assert_eq!(password.chars().count(), 20);
    let admin = accounts::authenticate(s, &name, &password)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(admin.role, Role::Admin);
    assert!(accounts::bootstrap_admin(s).await.unwrap().is_none());
    assert_eq!(s.count_users().await.unwrap(), 1);

    // Any user at all, admin or not, means no bootstrap.
    let other = store::testing::sqlite("the_first_admin_other")
        .await
        .unwrap();
    accounts::add_user(&other.store, "viewer", None, Role::Viewer, PASSWORD, "test")
        .await
        .unwrap();
    assert!(
        accounts::bootstrap_admin(&other.store)
            .await
            .unwrap()
            .is_none()
    );
}
