//! The conformance cases of evidence timestamps (issue #12), run on both backends through
//! `conformance.rs`.

use store::testing::TestDb;
use store::{CaseId, MatchWrites, NewTimestamp, SnapshotId, Timestamps};

use super::cases::{at, found, not_found, snapshot_at, work};

fn token(tsa: &str, snapshot: SnapshotId, seed: u8) -> NewTimestamp {
    NewTimestamp {
        snapshot,
        tsa_url: tsa.to_owned(),
        // Every byte value, NULs included, and more than a page of them.
        token: (0..2000u32).map(|i| (i as u8).wrapping_add(seed)).collect(),
        gen_time: at(30) + chrono::Duration::milliseconds(250),
        hash_algorithm: "sha-256".into(),
    }
}

pub async fn timestamps_are_kept_once_per_snapshot_and_tsa(db: &TestDb) {
    let s = &db.store;
    let (a, b) = ("https://tsa.example/", "https://时间戳.example/tsa?x=1");
    let (w, ch) = work(s, "红楼梦 · 时间戳", 61).await;
    let p1 = snapshot_at(s, "https://盗版.example/ts/1", 11, at(1)).await;
    let p2 = snapshot_at(s, "https://盗版.example/ts/2", 12, at(2)).await;
    let lone = snapshot_at(s, "https://elsewhere.example/x", 13, at(3)).await;
    let case = s
        .record_matches(p1, &[found(w, ch[0], 0.9)], "test")
        .await
        .unwrap()
        .cases[0];
    s.record_matches(p2, &[found(w, ch[1], 0.8)], "test")
        .await
        .unwrap();

    assert_eq!(s.snapshot_sha256(p1).await.unwrap(), [11; 32]);
    assert_eq!(
        s.unstamped_case_snapshots(case, a).await.unwrap(),
        vec![(p1, [11; 32]), (p2, [12; 32])]
    );
    assert!(s.case_timestamps(case).await.unwrap().is_empty());

    // Stored once per TSA: a second token for the same snapshot and TSA keeps the first.
    assert!(s.insert_timestamp(&token(a, p1, 0)).await.unwrap());
    assert!(!s.insert_timestamp(&token(a, p1, 9)).await.unwrap());
    assert!(s.insert_timestamp(&token(b, p1, 1)).await.unwrap());
    assert!(s.insert_timestamp(&token(a, lone, 2)).await.unwrap());

    let got = s.case_timestamps(case).await.unwrap();
    assert_eq!(got.len(), 2, "the lone snapshot is in no case");
    let want = token(a, p1, 0);
    assert_eq!(got[0].snapshot, p1);
    assert_eq!(got[0].sha256, [11; 32]);
    assert_eq!(got[0].tsa_url, a);
    assert_eq!(got[0].token, want.token);
    assert_eq!(got[0].gen_time, want.gen_time);
    assert_eq!(got[0].hash_algorithm, "sha-256");
    assert!(got[0].created_at > at(0));
    assert_eq!(got[1].tsa_url, b);
    assert_eq!(got[1].token, token(b, p1, 1).token);
    assert_eq!(s.snapshot_timestamps(p1).await.unwrap(), got);
    assert!(s.snapshot_timestamps(p2).await.unwrap().is_empty());

    assert_eq!(
        s.unstamped_case_snapshots(case, a).await.unwrap(),
        vec![(p2, [12; 32])]
    );
    assert_eq!(
        s.unstamped_case_snapshots(case, "https://never.example/")
            .await
            .unwrap()
            .len(),
        2
    );

    let missing = SnapshotId(9_999_999);
    not_found(s.insert_timestamp(&token(a, missing, 0)).await, "snapshot");
    not_found(s.snapshot_sha256(missing).await, "snapshot");
    assert!(s.snapshot_timestamps(missing).await.unwrap().is_empty());
    not_found(s.case_timestamps(CaseId(9_999_999)).await, "case");
    not_found(
        s.unstamped_case_snapshots(CaseId(9_999_999), a).await,
        "case",
    );
}
