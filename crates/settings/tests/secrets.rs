//! No secret of the settings is shown by `doctor`, whatever a check quotes, nor by the log.

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A URL given to `doctor --probe` carries the metrics token (a user pasted a scrape URL):
/// the finding quotes the URL, with the token masked; and so does the database's password.
#[tokio::test]
async fn doctor_masks_every_secret_a_finding_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let token = "metrics-token-0123456789abcdef";
    let smtp_password = "smtp-password-quoted";
    let vars = vars(&[
        ("COPYHOUND_SERVER__METRICS_TOKEN", token),
        ("COPYHOUND_NOTIFY__SMTP__PASSWORD", smtp_password),
    ]);
    let database = format!("sqlite://{}/copyhound.db", dir.path().display());
    let probe = format!("ftp://127.0.0.1/metrics?token={token}&p={smtp_password}");
    let findings = settings::diagnose(
        None,
        vars,
        &database,
        &store::StoreSettings::default(),
        Some(&probe),
    )
    .await;
    let probe = findings
        .iter()
        .find(|f| f.check == "probe")
        .expect("a probe finding");
    let shown = probe.to_string();
    assert!(shown.contains("is not an http(s) URL"), "{shown}");
    assert!(
        shown.contains(&format!("token={}&p={}", bounds::MASK, bounds::MASK)),
        "{shown}"
    );
    for finding in &findings {
        let shown = format!("{finding} {:?}", finding.fix);
        assert!(!shown.contains(token), "{shown}");
        assert!(!shown.contains(smtp_password), "{shown}");
    }
}

/// The password of the database URL is a secret too: once the URL is read, no error or log
/// line that quotes it shows it.
#[test]
fn the_database_password_is_masked_once_read() {
    let url = settings::database_url(Some(
        "postgres://copyhound:db-password-4711@127.0.0.1:1/x".to_owned(),
    ))
    .unwrap();
    assert_eq!(
        bounds::mask_known(&format!("cannot connect to {url}")),
        "cannot connect to postgres://copyhound:********@127.0.0.1:1/x"
    );
}
