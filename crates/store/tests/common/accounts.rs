//! The conformance cases of accounts (issue #13): users, sessions and API tokens, run on both
//! backends through `conformance.rs`.

use chrono::TimeDelta;
use store::testing::TestDb;
use store::{
    ApiTokenId, ApiTokens, AuditLog, Error, NewUser, Role, Sessions, UserChanges, UserId,
    UserRecord, Users,
};

use super::cases::{at, not_found};

async fn add(db: &TestDb, name: &str, role: Role) -> UserRecord {
    db.store
        .create_user(
            &NewUser {
                username: name,
                display_name: None,
                password_hash: &format!("$argon2id$hash-of-{name}"),
                role,
            },
            "test",
        )
        .await
        .unwrap()
}

fn conflict<T: std::fmt::Debug>(r: Result<T, Error>, says: &str) {
    match r {
        Err(Error::Conflict(msg)) => assert!(msg.contains(says), "{msg}"),
        other => panic!("expected a conflict saying {says:?}, got {other:?}"),
    }
}

fn role(role: Role) -> UserChanges {
    UserChanges {
        role: Some(role),
        ..UserChanges::default()
    }
}

fn disabled(disabled: bool) -> UserChanges {
    UserChanges {
        disabled: Some(disabled),
        ..UserChanges::default()
    }
}

pub async fn users_are_created_read_listed_and_kept_unique(db: &TestDb) {
    let s = &db.store;
    assert_eq!(s.count_users().await.unwrap(), 0);
    assert!(s.users().await.unwrap().is_empty());
    let before = chrono::Utc::now() - TimeDelta::seconds(1);
    let zh = s
        .create_user(
            &NewUser {
                username: "审校·李@例子.中国",
                display_name: Some("李 🐕 O'Brien"),
                password_hash: "$argon2id$v=19$zh",
                role: Role::Reviewer,
            },
            "cli",
        )
        .await
        .unwrap();
    assert_eq!(zh.username, "审校·李@例子.中国");
    assert_eq!(zh.display_name.as_deref(), Some("李 🐕 O'Brien"));
    assert_eq!(zh.role, Role::Reviewer);
    assert!(!zh.disabled);
    assert_eq!(zh.locale, None);
    assert_eq!(zh.last_login_at, None);
    assert!(zh.created_at > before);
    let admin = add(db, "admin", Role::Admin).await;
    let viewer = add(db, "Viewer", Role::Viewer).await;

    assert_eq!(s.user(zh.id).await.unwrap(), zh);
    assert_eq!(
        s.user_by_name("审校·李@例子.中国").await.unwrap(),
        Some(zh.clone())
    );
    assert_eq!(s.user_by_name("nobody").await.unwrap(), None);
    let (login, hash) = s.user_login("admin").await.unwrap().unwrap();
    assert_eq!(
        (login, hash.as_str()),
        (admin.clone(), "$argon2id$hash-of-admin")
    );
    assert_eq!(s.user_login("nobody").await.unwrap(), None);
    let names: Vec<String> = s
        .users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.username)
        .collect();
    assert_eq!(names, ["Viewer", "admin", "审校·李@例子.中国"]);
    assert_eq!(s.count_users().await.unwrap(), 3);

    // Taken names are refused, saying which; so is a name that differs only in case or
    // punctuation (issue #43: the look-alike forms are unique in the store, so two creations
    // cannot race past the check).
    conflict(
        s.create_user(
            &NewUser {
                username: "admin",
                display_name: None,
                password_hash: "x",
                role: Role::Viewer,
            },
            "cli",
        )
        .await,
        "\"admin\" is taken",
    );
    for look_alike in ["viewer", "VIEWER", "Viewer.", "view_er"] {
        conflict(
            s.create_user(
                &NewUser {
                    username: look_alike,
                    display_name: None,
                    password_hash: "x",
                    role: Role::Viewer,
                },
                "cli",
            )
            .await,
            "looks like the existing user \"Viewer\"",
        );
    }
    add(db, "viewer2", Role::Viewer).await;
    assert_eq!(s.count_users().await.unwrap(), 4);

    not_found(s.user(UserId(9999)).await, "user");
    not_found(s.record_login(UserId(9999), at(0)).await, "user");
    not_found(
        s.update_user(UserId(9999), &role(Role::Viewer), "cli")
            .await,
        "user",
    );

    s.record_login(viewer.id, at(5)).await.unwrap();
    assert_eq!(s.user(viewer.id).await.unwrap().last_login_at, Some(at(5)));

    let audit = s.audit_of("user", zh.id.0).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(
        (audit[0].actor.as_str(), audit[0].action.as_str()),
        ("cli", "user.create")
    );
    assert_eq!(audit[0].details["role"], "reviewer");
    assert!(
        !audit[0].details.to_string().contains("argon2"),
        "{}",
        audit[0].details
    );
}

pub async fn user_changes_are_audited_and_the_last_admin_stays(db: &TestDb) {
    let s = &db.store;
    let a = add(db, "alice", Role::Admin).await;
    let b = add(db, "bob", Role::Admin).await;
    let c = add(db, "carol", Role::Reviewer).await;

    // Two admins: one may go; the other is then the last and stays, demoted or disabled.
    let b2 = s
        .update_user(b.id, &role(Role::Reviewer), "alice")
        .await
        .unwrap();
    assert_eq!(b2.role, Role::Reviewer);
    conflict(
        s.update_user(a.id, &role(Role::Viewer), "alice").await,
        "\"alice\" is the last enabled admin",
    );
    conflict(
        s.update_user(a.id, &disabled(true), "alice").await,
        "last enabled admin",
    );
    // A disabled admin is no admin: promoting one still leaves alice the last enabled one.
    s.update_user(c.id, &disabled(true), "alice").await.unwrap();
    s.update_user(c.id, &role(Role::Admin), "alice")
        .await
        .unwrap();
    conflict(
        s.update_user(a.id, &disabled(true), "alice").await,
        "last enabled admin",
    );
    // Enabling carol makes two; alice may step down, and then carol may not.
    s.update_user(c.id, &disabled(false), "alice")
        .await
        .unwrap();
    s.update_user(a.id, &role(Role::Reviewer), "carol")
        .await
        .unwrap();
    conflict(
        s.update_user(c.id, &role(Role::Viewer), "carol").await,
        "\"carol\"",
    );
    assert_eq!(s.user(c.id).await.unwrap().role, Role::Admin);
    // Changes to the last admin that keep them an enabled admin are fine.
    let c2 = s
        .update_user(
            c.id,
            &UserChanges {
                role: Some(Role::Admin),
                disabled: Some(false),
                display_name: Some(Some("Carol Ünïcödé".into())),
                locale: Some(Some("zh-Hans".into())),
                email: Some(Some("carol@例子.中国".into())),
            },
            "carol",
        )
        .await
        .unwrap();
    assert_eq!(c2.display_name.as_deref(), Some("Carol Ünïcödé"));
    assert_eq!(c2.locale.as_deref(), Some("zh-Hans"));
    assert_eq!(c2.email.as_deref(), Some("carol@例子.中国"));
    let audit = s.audit_of("user", c.id.0).await.unwrap();
    let last = audit.last().unwrap();
    assert_eq!(
        (last.actor.as_str(), last.action.as_str()),
        ("carol", "user.update")
    );
    assert_eq!(
        last.details,
        serde_json::json!({
            "display_name": "Carol Ünïcödé", "locale": "zh-Hans", "email": "carol@例子.中国",
        })
    );
    // Clearing goes back to None; a change that changes nothing writes no audit row.
    let c3 = s
        .update_user(
            c.id,
            &UserChanges {
                display_name: Some(None),
                locale: Some(None),
                email: Some(None),
                ..UserChanges::default()
            },
            "carol",
        )
        .await
        .unwrap();
    assert_eq!((c3.display_name, c3.locale, c3.email), (None, None, None));
    let rows = s.audit_of("user", c.id.0).await.unwrap().len();
    s.update_user(c.id, &role(Role::Admin), "carol")
        .await
        .unwrap();
    s.update_user(c.id, &UserChanges::default(), "carol")
        .await
        .unwrap();
    assert_eq!(s.audit_of("user", c.id.0).await.unwrap().len(), rows);

    // A new password ends the user's sessions (only theirs) and is audited without its hash.
    s.create_session("h-a1", a.id, "csrf", at(60))
        .await
        .unwrap();
    s.create_session("h-a2", a.id, "csrf", at(60))
        .await
        .unwrap();
    s.create_session("h-c", c.id, "csrf", at(60)).await.unwrap();
    let reset = s
        .reset_password(a.id, "$argon2id$new-secret-hash", "cli")
        .await
        .unwrap();
    assert_eq!((reset.user.id, reset.sessions_ended), (a.id, 2));
    assert!(reset.tokens_revoked.is_empty());
    assert_eq!(
        s.user_login("alice").await.unwrap().unwrap().1,
        "$argon2id$new-secret-hash"
    );
    assert_eq!(s.session("h-a1", at(0)).await.unwrap(), None);
    assert_eq!(s.session("h-a2", at(0)).await.unwrap(), None);
    assert!(s.session("h-c", at(0)).await.unwrap().is_some());
    let last = s.audit_of("user", a.id.0).await.unwrap().pop().unwrap();
    assert_eq!(
        last.details,
        serde_json::json!({"password": "changed", "sessions_ended": 2, "api_tokens_revoked": []})
    );
    let missing = s.reset_password(UserId(9999), "x", "cli").await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );

    // Disabling ends the sessions too; enabling again does not bring them back.
    s.create_session("h-b", b.id, "csrf", at(60)).await.unwrap();
    let b3 = s.update_user(b.id, &disabled(true), "carol").await.unwrap();
    assert!(b3.disabled);
    s.update_user(b.id, &disabled(false), "carol")
        .await
        .unwrap();
    assert_eq!(s.session("h-b", at(0)).await.unwrap(), None);
    assert_eq!(s.delete_sessions_of(b.id).await.unwrap(), 0);
}

pub async fn sessions_live_until_they_expire_end_or_their_user_is_disabled(db: &TestDb) {
    let s = &db.store;
    let u = add(db, "ユーザー", Role::Viewer).await;
    let other = add(db, "other", Role::Admin).await;
    let end = at(30) + TimeDelta::milliseconds(500);
    s.create_session("hash-1", u.id, "csrf-ü-1", end)
        .await
        .unwrap();
    s.create_session("hash-2", u.id, "csrf-2", at(10))
        .await
        .unwrap();
    s.create_session("hash-3", other.id, "csrf-3", at(10))
        .await
        .unwrap();
    conflict(s.create_session("hash-1", u.id, "x", end).await, "");

    let got = s.session("hash-1", at(0)).await.unwrap().unwrap();
    assert_eq!(got.user, u);
    assert_eq!(got.csrf_token, "csrf-ü-1");
    assert_eq!(got.expires_at, end);
    // Last used when it started; a use is recorded as given (the idle timeout is the
    // caller's).
    let since_start = chrono::Utc::now() - got.last_seen_at;
    assert!(
        since_start >= TimeDelta::zero() && since_start < TimeDelta::minutes(5),
        "{since_start}"
    );
    s.touch_session("hash-1", at(5)).await.unwrap();
    assert_eq!(
        s.session("hash-1", at(0))
            .await
            .unwrap()
            .unwrap()
            .last_seen_at,
        at(5)
    );
    assert!(
        s.session("hash-2", at(0))
            .await
            .unwrap()
            .unwrap()
            .last_seen_at
            > at(5)
    );
    not_found(s.touch_session("missing", at(5)).await, "session");
    assert_eq!(s.session("missing", at(0)).await.unwrap(), None);
    // Live until its end, to the millisecond; not at it.
    assert!(s.session("hash-1", at(30)).await.unwrap().is_some());
    assert!(
        s.session("hash-1", end - TimeDelta::milliseconds(1))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(s.session("hash-1", end).await.unwrap(), None);

    s.extend_session("hash-1", at(90)).await.unwrap();
    assert_eq!(
        s.session("hash-1", at(60))
            .await
            .unwrap()
            .unwrap()
            .expires_at,
        at(90)
    );
    not_found(s.extend_session("missing", at(90)).await, "session");

    // Purging removes only what expired by then.
    assert_eq!(s.purge_expired_sessions(at(10)).await.unwrap(), 2);
    assert_eq!(s.purge_expired_sessions(at(10)).await.unwrap(), 0);
    assert!(s.session("hash-1", at(20)).await.unwrap().is_some());

    // A disabled user's session does not resolve, however it got there.
    db.execute(&format!(
        "UPDATE users SET disabled = TRUE WHERE id = {}",
        u.id
    ))
    .await;
    assert_eq!(s.session("hash-1", at(20)).await.unwrap(), None);
    db.execute(&format!(
        "UPDATE users SET disabled = FALSE WHERE id = {}",
        u.id
    ))
    .await;
    assert!(s.session("hash-1", at(20)).await.unwrap().is_some());

    s.delete_session("hash-1").await.unwrap();
    s.delete_session("hash-1").await.unwrap();
    assert_eq!(s.session("hash-1", at(20)).await.unwrap(), None);
    s.create_session("hash-4", u.id, "c", at(99)).await.unwrap();
    s.create_session("hash-5", u.id, "c", at(99)).await.unwrap();
    s.create_session("hash-6", other.id, "c", at(99))
        .await
        .unwrap();
    assert_eq!(s.delete_sessions_of(u.id).await.unwrap(), 2);
    assert!(s.session("hash-6", at(20)).await.unwrap().is_some());
}

pub async fn api_tokens_resolve_until_revoked_or_expired_and_note_use_sparingly(db: &TestDb) {
    let s = &db.store;
    let u = add(db, "бот", Role::Reviewer).await;
    let other = add(db, "other", Role::Admin).await;
    let hash = [0u8, 1, 2, 255, 0, 7];
    let t = s
        .create_api_token(u.id, "CI 🤖 upload", &hash, "chk_0123abcd", None, "other")
        .await
        .unwrap();
    assert_eq!(
        (
            t.user_id,
            t.username.as_str(),
            t.name.as_str(),
            t.prefix.as_str()
        ),
        (u.id, "бот", "CI 🤖 upload", "chk_0123abcd")
    );
    assert_eq!(
        (t.last_used_at, t.expires_at, t.revoked_at),
        (None, None, None)
    );
    conflict(
        s.create_api_token(other.id, "again", &hash, "chk_x", None, "other")
            .await,
        "",
    );
    not_found(
        s.create_api_token(UserId(9999), "x", b"h", "chk_x", None, "other")
            .await,
        "user",
    );
    let expiring = s
        .create_api_token(other.id, "week", b"hash-2", "chk_2", Some(at(100)), "other")
        .await
        .unwrap();
    assert_eq!(expiring.expires_at, Some(at(100)));

    // Resolving notes the use, then not again within a minute.
    let (got, user) = s.api_token_user(&hash, at(0)).await.unwrap().unwrap();
    assert_eq!((got.id, got.last_used_at), (t.id, Some(at(0))));
    assert_eq!(user, u);
    let (again, _) = s
        .api_token_user(&hash, at(0) + TimeDelta::seconds(59))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.last_used_at, Some(at(0)));
    let (later, _) = s.api_token_user(&hash, at(1)).await.unwrap().unwrap();
    assert_eq!(later.last_used_at, Some(at(1)));
    assert_eq!(
        s.api_tokens(Some(u.id)).await.unwrap()[0].last_used_at,
        Some(at(1))
    );

    assert!(s.api_token_user(b"unknown", at(0)).await.unwrap().is_none());
    assert!(s.api_token_user(&hash[..5], at(0)).await.unwrap().is_none());
    assert!(s.api_token_user(b"hash-2", at(99)).await.unwrap().is_some());
    assert!(
        s.api_token_user(b"hash-2", at(100))
            .await
            .unwrap()
            .is_none()
    );

    // A disabled user's tokens do not resolve.
    db.execute(&format!(
        "UPDATE users SET disabled = TRUE WHERE id = {}",
        u.id
    ))
    .await;
    assert!(s.api_token_user(&hash, at(2)).await.unwrap().is_none());
    db.execute(&format!(
        "UPDATE users SET disabled = FALSE WHERE id = {}",
        u.id
    ))
    .await;
    assert!(s.api_token_user(&hash, at(2)).await.unwrap().is_some());

    // Listed newest first, everyone's or one user's.
    let all: Vec<ApiTokenId> = s
        .api_tokens(None)
        .await
        .unwrap()
        .iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(all, [expiring.id, t.id]);
    let mine = s.api_tokens(Some(u.id)).await.unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].id, t.id);
    assert!(s.api_tokens(Some(UserId(9999))).await.unwrap().is_empty());

    // Revoked: it stops resolving, stays listed; twice is fine and audited once.
    s.revoke_api_token(t.id, "other").await.unwrap();
    s.revoke_api_token(t.id, "other").await.unwrap();
    assert!(s.api_token_user(&hash, at(3)).await.unwrap().is_none());
    let listed = s.api_tokens(Some(u.id)).await.unwrap();
    assert!(listed[0].revoked_at.is_some());
    not_found(
        s.revoke_api_token(ApiTokenId(9999), "other").await,
        "api token",
    );
    let audit = s.audit_of("api_token", t.id.0).await.unwrap();
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(actions, ["api_token.create", "api_token.revoke"]);
    assert_eq!(audit[0].actor, "other");
    assert_eq!(audit[0].details["prefix"], "chk_0123abcd");

    // A new password revokes the user's live tokens (not the revoked or expired ones, not
    // another user's) and says which, in its return and the audit log.
    let future = chrono::Utc::now() + TimeDelta::days(30);
    let live = s
        .create_api_token(u.id, "nightly", b"hash-3", "chk_3", Some(future), "бот")
        .await
        .unwrap();
    let forever = s
        .create_api_token(u.id, "forever", b"hash-4", "chk_4", None, "бот")
        .await
        .unwrap();
    let stale = s
        .create_api_token(u.id, "stale", b"hash-5", "chk_5", Some(at(100)), "бот")
        .await
        .unwrap();
    s.create_api_token(other.id, "theirs", b"hash-6", "chk_6", None, "other")
        .await
        .unwrap();
    let reset = s
        .reset_password(u.id, "$argon2id$new", "other")
        .await
        .unwrap();
    let revoked: Vec<ApiTokenId> = reset.tokens_revoked.iter().map(|t| t.id).collect();
    assert_eq!(revoked, [live.id, forever.id]);
    assert!(reset.tokens_revoked.iter().all(|t| t.revoked_at.is_some()));
    let now = chrono::Utc::now();
    assert!(s.api_token_user(b"hash-3", now).await.unwrap().is_none());
    assert!(s.api_token_user(b"hash-4", now).await.unwrap().is_none());
    assert!(s.api_token_user(b"hash-6", now).await.unwrap().is_some());
    let listed = s.api_tokens(Some(u.id)).await.unwrap();
    let stale_now = listed.iter().find(|t| t.id == stale.id).unwrap();
    assert_eq!(
        stale_now.revoked_at, None,
        "an expired token is left as it was"
    );
    let user_audit = s.audit_of("user", u.id.0).await.unwrap().pop().unwrap();
    assert_eq!(user_audit.actor, "other");
    assert_eq!(
        user_audit.details["api_tokens_revoked"],
        serde_json::json!([
            {"id": live.id.0, "prefix": "chk_3", "name": "nightly"},
            {"id": forever.id.0, "prefix": "chk_4", "name": "forever"},
        ])
    );
    let token_audit = s.audit_of("api_token", live.id.0).await.unwrap();
    assert_eq!(token_audit.last().unwrap().action, "api_token.revoke");
    assert_eq!(
        token_audit.last().unwrap().details["reason"],
        "password reset"
    );
}
