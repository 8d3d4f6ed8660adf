//! `copyhound users`: accounts and API tokens from the command line, on SQLite.

use crate::common;

use std::io::Write as _;
use std::process::Stdio;

use common::{Env, copyhound, json, ok, run_with};

/// Runs the binary with `input` on its standard input (a pipe, not a terminal).
async fn with_stdin(db: &str, input: &'static str, args: &[&str]) -> std::process::Output {
    let mut cmd = copyhound(db);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// Runs the binary, which must fail; its standard error.
async fn fails(db: &str, args: &[&str]) -> String {
    let out = run_with(db, &[], args).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded: {stderr}");
    stderr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_are_added_listed_and_changed() {
    let env = Env::new();
    let db = env.db.as_str();
    let pw = env.file("pw.txt", b"correct horse battery\n");
    let pw = pw.to_str().unwrap();
    let out = ok(
        db,
        &[
            "users",
            "add",
            "alice",
            "--role",
            "admin",
            "--display-name",
            "Alice A.",
            "--password-file",
            pw,
        ],
    )
    .await;
    assert!(out.contains("user alice (1) added as admin"), "{out}");

    // From standard input when it is not a terminal; the trailing newline is no part of it.
    let out = with_stdin(
        db,
        "another good one\r\n",
        &["users", "add", "李雷", "--role", "reviewer"],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let login = env.file("login.txt", b"another good one");
    let li = json(db, &["users", "list", "--json"]).await;
    assert_eq!(li.as_array().unwrap().len(), 2);

    // Refused: a taken name, a weak password (saying the rule, not the password), a bad
    // name, a bad role, no password at all.
    let err = fails(
        db,
        &[
            "users",
            "add",
            "alice",
            "--role",
            "viewer",
            "--password-file",
            pw,
        ],
    )
    .await;
    assert!(err.contains(r#"user name "alice" is taken"#), "{err}");
    let weak = env.file("weak.txt", b"hunter2\nsecond line ignored\n");
    let err = fails(
        db,
        &[
            "users",
            "add",
            "bob",
            "--role",
            "viewer",
            "--password-file",
            weak.to_str().unwrap(),
        ],
    )
    .await;
    assert!(
        err.contains("use at least 12") && !err.contains("hunter2"),
        "{err}"
    );
    let err = fails(
        db,
        &[
            "users",
            "add",
            "bob smith",
            "--role",
            "viewer",
            "--password-file",
            pw,
        ],
    )
    .await;
    assert!(
        err.contains("use letters, digits and . _ - @ only"),
        "{err}"
    );
    let err = fails(
        db,
        &[
            "users",
            "add",
            "bob",
            "--role",
            "root",
            "--password-file",
            pw,
        ],
    )
    .await;
    assert!(err.contains("use admin, reviewer or viewer"), "{err}");
    let out = with_stdin(db, "", &["users", "add", "bob", "--role", "viewer"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no password given"));

    let list = json(db, &["users", "list", "--json"]).await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice", "李雷"]);
    assert_eq!(list[0]["role"], "admin");
    assert_eq!(list[0]["display_name"], "Alice A.");
    assert_eq!(list[1]["role"], "reviewer");
    assert!(list[0].get("password_hash").is_none());
    let text = ok(db, &["users", "list"]).await;
    assert!(
        text.contains("alice") && text.contains("李雷") && text.contains("enabled"),
        "{text}"
    );

    // The last enabled admin cannot be demoted or disabled; with a second admin, it can.
    let err = fails(db, &["users", "set-role", "alice", "viewer"]).await;
    assert!(
        err.contains(r#""alice" is the last enabled admin"#),
        "{err}"
    );
    let err = fails(db, &["users", "disable", "alice"]).await;
    assert!(err.contains("last enabled admin"), "{err}");
    ok(db, &["users", "set-role", "李雷", "admin"]).await;
    let out = ok(db, &["users", "set-role", "alice", "viewer"]).await;
    assert!(out.contains("user alice is now viewer"), "{out}");
    let err = fails(db, &["users", "set-role", "nobody", "admin"]).await;
    assert!(err.contains(r#"no user is named "nobody""#), "{err}");

    ok(db, &["users", "disable", "alice"]).await;
    assert_eq!(
        json(db, &["users", "list", "--json"]).await[0]["disabled"],
        true
    );
    ok(db, &["users", "enable", "alice"]).await;
    assert_eq!(
        json(db, &["users", "list", "--json"]).await[0]["disabled"],
        false
    );

    // A new password, by file; the old one is gone (checked through the store).
    let new_pw = env.file("new.txt", b"a brand new passphrase\n");
    ok(
        db,
        &[
            "users",
            "passwd",
            "李雷",
            "--password-file",
            new_pw.to_str().unwrap(),
        ],
    )
    .await;
    let store = store::Store::open(db, &store::StoreSettings::default())
        .await
        .unwrap();
    assert!(
        accounts::authenticate(&store, "李雷", "a brand new passphrase")
            .await
            .unwrap()
            .is_some()
    );
    let old = std::fs::read_to_string(&login).unwrap();
    assert!(
        accounts::authenticate(&store, "李雷", &old)
            .await
            .unwrap()
            .is_none()
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_tokens_are_shown_once_listed_and_revoked() {
    let env = Env::new();
    let db = env.db.as_str();
    let pw = env.file("pw.txt", b"correct horse battery\n");
    ok(
        db,
        &[
            "users",
            "add",
            "ci",
            "--role",
            "reviewer",
            "--password-file",
            pw.to_str().unwrap(),
        ],
    )
    .await;
    assert!(ok(db, &["users", "tokens"]).await.contains("no API tokens"));

    let out = ok(
        db,
        &[
            "users",
            "token",
            "ci",
            "--name",
            "nightly upload",
            "--expires-days",
            "30",
        ],
    )
    .await;
    let mut lines = out.lines();
    let token = lines.next().unwrap();
    assert!(token.starts_with("chk_") && token.len() == 44, "{out}");
    assert!(
        lines.next().unwrap().contains("it will not be shown again"),
        "{out}"
    );
    ok(db, &["users", "token", "ci", "--name", "forever"]).await;
    let err = fails(db, &["users", "token", "nobody", "--name", "x"]).await;
    assert!(err.contains(r#"no user is named "nobody""#), "{err}");

    let tokens = json(db, &["users", "tokens", "--json"]).await;
    let tokens = tokens.as_array().unwrap();
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[0]["name"], "forever");
    assert_eq!(tokens[1]["name"], "nightly upload");
    assert_eq!(tokens[1]["prefix"], token[..12]);
    assert_eq!(tokens[1]["username"], "ci");
    assert!(tokens[1]["expires_at"].is_string());
    assert!(tokens[0]["expires_at"].is_null());
    let listed = serde_json::to_string(tokens).unwrap();
    assert!(!listed.contains(token), "the token itself is never listed");
    let text = ok(db, &["users", "tokens", "--user", "ci"]).await;
    assert!(
        text.contains("nightly upload") && text.contains("live"),
        "{text}"
    );

    let id = tokens[1]["id"].to_string();
    assert!(
        ok(db, &["users", "revoke-token", &id])
            .await
            .contains("revoked")
    );
    ok(db, &["users", "revoke-token", &id]).await;
    let tokens = json(db, &["users", "tokens", "--json"]).await;
    assert!(tokens[1]["revoked_at"].is_string());
    assert!(tokens[0]["revoked_at"].is_null());
    let err = fails(db, &["users", "revoke-token", "999"]).await;
    assert!(err.contains("api token 999 not found"), "{err}");

    // Issue #23: a new password revokes the tokens still live, and says so.
    let new_pw = env.file("new.txt", b"a brand new passphrase\n");
    let out = ok(
        db,
        &[
            "users",
            "passwd",
            "ci",
            "--password-file",
            new_pw.to_str().unwrap(),
        ],
    )
    .await;
    assert!(out.contains("1 API token(s) were revoked"), "{out}");
    let tokens = json(db, &["users", "tokens", "--json"]).await;
    assert!(tokens[0]["revoked_at"].is_string(), "{tokens}");

    let store = store::Store::open(db, &store::StoreSettings::default())
        .await
        .unwrap();
    assert!(accounts::token_user(&store, token).await.unwrap().is_none());
    store.close().await;
}
