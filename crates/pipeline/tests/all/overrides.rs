//! The settings an admin changes in the UI over the settings file's, on both backends:
//! saved, in effect, cleared back to the file's value, refused as a whole when one value is
//! bad, audited; and the demo's sample rights holder filling only what nobody set.

use jobs::Problem;
use store::testing::TestDb;
use store::{AuditLog, SettingOverrides};
use takedown::NoticeSettings;
use takedown::overrides::{self, Source};

fn file() -> NoticeSettings {
    let mut file = NoticeSettings::default();
    file.rights_holder.name = "File Press".into();
    file.rights_holder.email = "legal@file.example".into();
    file
}

fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

async fn saved_values_override_the_file_until_cleared(db: &TestDb) {
    let store = &db.store;
    let file = file();
    let first = overrides::effective(store, &file).await.unwrap();
    assert_eq!(first.notices, file);
    assert!(first.fields.iter().all(|f| f.source == Source::File));

    let changed = overrides::save(
        store,
        &file,
        &form(&[
            ("notices.rights_holder.name", "示例出版社"),
            // The file's value again: no override.
            ("notices.rights_holder.email", "legal@file.example"),
            ("notices.time_zone", "europe/berlin"),
            ("notices.template", "CN"),
        ]),
        "alice",
    )
    .await
    .unwrap();
    assert_eq!(changed.len(), 3, "{changed:?}");
    let now = overrides::effective(store, &file).await.unwrap();
    assert_eq!(now.notices.rights_holder.name, "示例出版社");
    assert_eq!(now.notices.rights_holder.email, "legal@file.example");
    assert_eq!(now.notices.time_zone, "Europe/Berlin");
    assert_eq!(now.notices.template, "cn");
    let name = now.field("notices.rights_holder.name").unwrap();
    assert!(matches!(&name.source, Source::Saved { by, .. } if by == "alice"));
    assert_eq!(name.file_value, "File Press");
    assert_eq!(
        now.field("notices.rights_holder.email").unwrap().source,
        Source::File
    );

    // One bad value refuses the whole save, each refusal by its key.
    let err = overrides::save(
        store,
        &file,
        &form(&[
            ("notices.rights_holder.name", "Another"),
            ("notices.time_zone", "Mars/Olympus"),
            ("notices.rights_holder.email", "nobody"),
        ]),
        "bob",
    )
    .await
    .unwrap_err();
    let jobs::Error::Settings(refusals) = &err else {
        panic!("{err}");
    };
    let problems: Vec<(&str, Problem)> = refusals
        .iter()
        .map(|r| (r.key.as_str(), r.problem))
        .collect();
    assert_eq!(
        problems,
        [
            ("notices.time_zone", Problem::UnknownTimeZone),
            ("notices.rights_holder.email", Problem::NotAnEmail)
        ]
    );
    assert_eq!(
        overrides::effective(store, &file)
            .await
            .unwrap()
            .notices
            .rights_holder
            .name,
        "示例出版社"
    );

    // Cleared: the file's values again, and every change in the audit log.
    overrides::save(
        store,
        &file,
        &form(&[
            ("notices.rights_holder.name", ""),
            ("notices.time_zone", "UTC"),
            ("notices.template", "dmca"),
        ]),
        "bob",
    )
    .await
    .unwrap();
    assert_eq!(
        overrides::effective(store, &file).await.unwrap().notices,
        file
    );
    assert!(store.setting_overrides().await.unwrap().is_empty());
    let audit = store.recent_audit(None, 10).await.unwrap();
    let actors: Vec<&str> = audit
        .iter()
        .filter(|a| a.action == "settings.change")
        .map(|a| a.actor.as_str())
        .collect();
    assert_eq!(actors, ["bob", "alice"]);
}

async fn the_demo_fills_only_what_nobody_set(db: &TestDb) {
    let store = &db.store;
    let file = file();
    let filled = pipeline::demo::fill_sample_rights_holder(store, &file)
        .await
        .unwrap();
    // The file's name and email stay; the rest is the sample's.
    assert_eq!(
        filled,
        [
            "notices.rights_holder.address",
            "notices.rights_holder.phone",
            "notices.rights_holder.signatory"
        ]
    );
    let now = overrides::effective(store, &file).await.unwrap();
    assert!(now.notices.rights_holder.missing().is_empty());
    assert_eq!(now.notices.rights_holder.name, "File Press");
    assert!(now.notices.rights_holder.signatory.contains("demo"));
    // A second run finds nothing to fill.
    assert!(
        pipeline::demo::fill_sample_rights_holder(store, &file)
            .await
            .unwrap()
            .is_empty()
    );
    // With no profile at all, the whole sample, clearly marked.
    let bare = NoticeSettings::default();
    store
        .save_setting_overrides(
            &overrides::KEYS.map(|key| store::SettingChange {
                key: key.to_owned(),
                value: None,
            }),
            "test",
        )
        .await
        .unwrap();
    pipeline::demo::fill_sample_rights_holder(store, &bare)
        .await
        .unwrap();
    let now = overrides::effective(store, &bare).await.unwrap();
    assert_eq!(now.notices.rights_holder.name, "示例出版社 (demo)");
}

store::on_both_backends!(
    saved_values_override_the_file_until_cleared,
    the_demo_fills_only_what_nobody_set,
);
