//! The conformance cases of rendered fetches and their screenshots (issue #25), run on both
//! backends through `conformance.rs`.

use store::testing::TestDb;
use store::{NewRender, NewScreenshot, Renders, ScreenshotToken, SnapshotId};

use super::cases::{at, snapshot_at};

fn render(snapshot: SnapshotId, png: &[u8], minute: i64) -> NewRender {
    NewRender {
        snapshot,
        final_url: "https://盗版.example/书/1.html".into(),
        html_zstd: vec![0, 1, 2, 255],
        html_len: 4096,
        text: "话说天下大势，分久必合。".into(),
        screenshot: Some(NewScreenshot {
            sha256: [png[0]; 32],
            png: png.to_vec(),
            width: 1280,
            height: 20_000,
        }),
        rendered_at: at(minute),
        timed_out: false,
        requests: 12,
        refused: 1,
    }
}

pub async fn renders_keep_each_screenshot_once_and_the_newest_is_read(db: &TestDb) {
    let s = &db.store;
    let page = snapshot_at(s, "https://盗版.example/书/1.html", 21, at(1)).await;
    let other = snapshot_at(s, "https://盗版.example/书/2.html", 22, at(2)).await;
    assert!(s.latest_render(page).await.unwrap().is_none());
    assert!(s.latest_screenshot(page).await.unwrap().is_none());

    // Every byte value, NULs included: a PNG is binary.
    let png: Vec<u8> = (0..3000u32).map(|i| (i % 256) as u8).collect();
    let first = s.insert_render(&render(page, &png, 5)).await.unwrap();
    // The same screenshot again (an unchanged page), on another snapshot: stored once.
    s.insert_render(&render(other, &png, 6)).await.unwrap();
    // A render without a screenshot is newer, but not the newest screenshot.
    let bare = NewRender {
        screenshot: None,
        timed_out: true,
        ..render(page, &png, 7)
    };
    let second = s.insert_render(&bare).await.unwrap();
    assert!(second > first);

    let newest = s.latest_render(page).await.unwrap().unwrap();
    assert_eq!(newest.id, second);
    assert!(newest.timed_out);
    assert!(newest.screenshot.is_none());
    let shot = s.latest_screenshot(page).await.unwrap().unwrap();
    assert_eq!(shot.id, first);
    assert_eq!(shot.snapshot, page);
    assert_eq!(shot.final_url, "https://盗版.example/书/1.html");
    assert_eq!(shot.text, "话说天下大势，分久必合。");
    assert_eq!(shot.rendered_at, at(5));
    assert_eq!((shot.requests, shot.refused, shot.html_len), (12, 1, 4096));
    let info = shot.screenshot.unwrap();
    assert_eq!(info.sha256, [0; 32]);
    assert_eq!((info.width, info.height, info.bytes), (1280, 20_000, 3000));
    assert_eq!(s.screenshot_png(&info.sha256).await.unwrap().unwrap(), png);
    assert!(s.screenshot_png(&[9; 32]).await.unwrap().is_none());
    assert_eq!(
        s.render_html(first).await.unwrap().unwrap(),
        (vec![0, 1, 2, 255], 4096)
    );
    assert!(s.render_html(first + 1000).await.unwrap().is_none());
    // A render of an unknown snapshot is refused by its foreign key.
    assert!(
        s.insert_render(&render(SnapshotId(999_999), &png, 8))
            .await
            .is_err()
    );

    // A screenshot's RFC 3161 token: the first one is kept.
    assert!(s.screenshot_token(&info.sha256).await.unwrap().is_none());
    let token = |seed: u8| ScreenshotToken {
        tsa_url: "https://tsa.example/".into(),
        token: (0..500u32).map(|i| (i as u8).wrapping_add(seed)).collect(),
        gen_time: at(9),
    };
    assert!(s.stamp_screenshot(&info.sha256, &token(0)).await.unwrap());
    assert!(!s.stamp_screenshot(&info.sha256, &token(1)).await.unwrap());
    assert!(!s.stamp_screenshot(&[7; 32], &token(2)).await.unwrap());
    assert_eq!(
        s.screenshot_token(&info.sha256).await.unwrap(),
        Some(token(0))
    );
}
