//! Notices mailed over SMTP (issue #29) against a real SMTP server on 127.0.0.1 (aiosmtpd,
//! `tests/smtp/server.py`): the notice with its text, HTML and evidence zip received as sent
//! (its SHA-256 is of the bytes the server got), marked sent only on acceptance; a server
//! that refuses, stalls or drops the connection leaves a draft with the reason; an attempt
//! cut off mid-send is not repeated unless asked, and then keeps its Message-ID; a web form
//! is not mailed; a package over the limit is linked. STARTTLS with a test CA, on its own.

use crate::common;

use std::io::Read;
use std::time::Duration;

use casework::RecheckSettings;
use common::smtp::{Mode, SmtpServer};
use jobs::Error;
use notification::{Mailer, NotifySettings};
use sha2::Digest;
use store::testing::TestDb;
use store::{CaseReads, CaseStatus, NoticeStatus, Notices, Rechecks, SendStart, WorkReads};
use takedown::sending::{self, EvidenceSent, SendSettings};
use takedown::{NoticeSettings, NoticeTemplate, notices};

const SERVER_FROM: &str = "copyhound <alerts@press.example>";

struct World {
    notices: NoticeSettings,
    notify: NotifySettings,
    rechecks: RecheckSettings,
}

impl World {
    fn settings(&self) -> SendSettings<'_> {
        SendSettings {
            notices: &self.notices,
            notify: &self.notify,
            rechecks: &self.rechecks,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The names of the files in a zip.
fn zip_names(zip: &[u8]) -> Vec<String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut sink = Vec::new();
            file.read_to_end(&mut sink).unwrap();
            file.name().unwrap().into_owned()
        })
        .collect()
}

async fn mailed_notices(db: &TestDb) {
    let Some(server) = SmtpServer::start(Mode::Accept).await else {
        return;
    };
    let store = &db.store;
    let case = common::confirmed_case(store, "https://pirate.test/book/2.html").await;
    let mut world = World {
        notices: common::profile(),
        notify: NotifySettings {
            smtp: server.settings(SERVER_FROM),
            ..NotifySettings::default()
        },
        rechecks: RecheckSettings::default(),
    };
    let mailer = Mailer::new(&world.notify.smtp).unwrap();
    let draft = |template| {
        notices::create_notice(
            store,
            &world.notices,
            None,
            case,
            template,
            Some("abuse@pirate.test"),
            "alice",
        )
    };

    // A web form takes no mail: nothing is begun.
    let form = draft(NoticeTemplate::Dmca).await.unwrap();
    notices::edit_draft(
        store,
        form.id,
        "https://pirate.test/report",
        &form.body_text,
        "alice",
    )
    .await
    .unwrap();
    let err = sending::send_notice(store, world.settings(), &mailer, form.id, false, "alice")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Notice(m) if m.contains("web form")),
        "{err}"
    );
    let form = store.notice(form.id).await.unwrap();
    assert_eq!((form.message_id, form.sending_since), (None, None));

    // The notice, accepted: received as sent, marked sent, re-checks started.
    let cn = draft(NoticeTemplate::Cn).await.unwrap();
    let sent = sending::send_notice(store, world.settings(), &mailer, cn.id, false, "alice")
        .await
        .unwrap();
    assert!(!sent.already_sent);
    let n = &sent.notice;
    assert_eq!(n.status, NoticeStatus::Sent);
    assert_eq!(n.sending_since, None);
    assert!(n.smtp_reply.as_deref().unwrap().starts_with("250"), "{n:?}");
    assert_eq!(
        store.case(case).await.unwrap().status,
        CaseStatus::NoticeSent
    );
    assert!(store.case_recheck(case).await.unwrap().is_some());
    let received = server.received();
    assert_eq!(received.len(), 1);
    let mail = &received[0];
    assert_eq!(
        n.sent_sha256.as_deref(),
        Some(hex(&sha2::Sha256::digest(&mail.raw)).as_str()),
        "the SHA-256 recorded is of the bytes the server received"
    );
    let message_id = n.message_id.as_deref().unwrap();
    assert_eq!(mail.header("Message-ID"), format!("<{message_id}>"));
    assert!(message_id.ends_with("@press.example"), "{message_id}");
    assert_eq!(
        mail.json["rcpt_tos"],
        serde_json::json!(["abuse@pirate.test"])
    );
    // From the rights holder; the server's sender takes the bounces.
    assert_eq!(
        mail.header("From"),
        "Fengshen Press 封神出版社 <legal@press.example>"
    );
    assert_eq!(mail.header("Sender"), SERVER_FROM);
    assert_eq!(mail.json["mail_from"], "alerts@press.example");
    assert_eq!(mail.header("Subject"), cn.subject);
    assert_eq!(
        mail.text("text/plain").replace("\r\n", "\n").trim_end(),
        cn.body_text.trim_end()
    );
    assert!(
        mail.text("text/html")
            .contains("《信息网络传播权保护条例》第十四条")
    );
    let types: Vec<&str> = mail
        .parts()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "multipart/mixed",
            "multipart/alternative",
            "text/plain",
            "text/html",
            "application/zip"
        ]
    );
    let zip = mail.attachment(&format!("case-{case}-evidence.zip"));
    assert_eq!(
        sent.evidence,
        Some(EvidenceSent::Attached {
            bytes: zip.len() as u64
        })
    );
    let names = zip_names(&zip);
    for file in [
        "case.warc.gz",
        "manifest.json",
        "README.txt",
        "passages.json",
    ] {
        assert!(names.iter().any(|n| n == file), "{file} in {names:?}");
    }

    // Sent already: sending again mails nothing.
    let again = sending::send_notice(store, world.settings(), &mailer, cn.id, false, "worker")
        .await
        .unwrap();
    assert!(again.already_sent);
    assert_eq!(server.received().len(), 1);

    // Cut off mid-send (a crash between the record and the reply): not sent again unless
    // asked, and then with the same Message-ID.
    let dmca = draft(NoticeTemplate::Dmca).await.unwrap();
    let SendStart::Begun(begun) = store
        .begin_notice_send(
            dmca.id,
            "crashed@press.example",
            chrono::Utc::now(),
            false,
            "worker",
        )
        .await
        .unwrap()
    else {
        panic!("a draft's send begins");
    };
    let err = sending::send_notice(store, world.settings(), &mailer, dmca.id, false, "worker")
        .await
        .unwrap_err();
    let said = jobs::chain(&err);
    assert!(said.contains("<crashed@press.example>"), "{said}");
    assert_eq!(server.received().len(), 1, "nothing was mailed");
    let resent = sending::send_notice(store, world.settings(), &mailer, dmca.id, true, "bob")
        .await
        .unwrap();
    assert_eq!(resent.notice.message_id, begun.message_id);
    assert_eq!(
        server.received()[1].header("Message-ID"),
        "<crashed@press.example>"
    );

    // Over the attachment limit, the package is written to the share folder and linked.
    let share = tempfile::tempdir().unwrap();
    world.notify.max_attachment_bytes = 1;
    world.notify.share_dir = Some(share.path().to_owned());
    world.notify.share_url = "https://files.press.example/evidence/".into();
    let linked = draft(NoticeTemplate::Dmca).await.unwrap();
    let sent = sending::send_notice(store, world.settings(), &mailer, linked.id, false, "alice")
        .await
        .unwrap();
    let Some(EvidenceSent::Linked { url, bytes }) = sent.evidence else {
        panic!("linked: {:?}", sent.evidence);
    };
    let name = url
        .strip_prefix("https://files.press.example/evidence/")
        .unwrap_or_else(|| panic!("{url}"));
    assert!(
        name.starts_with(&format!("case-{case}-")) && name.len() > 40,
        "{name}"
    );
    let shared = std::fs::read(share.path().join(name)).unwrap();
    assert_eq!(shared.len() as u64, bytes);
    assert!(zip_names(&shared).contains(&"manifest.json".to_owned()));
    let mail = &server.received()[2];
    assert!(mail.text("text/plain").contains(&url), "the text links it");
    assert!(mail.text("text/html").contains(&url), "the HTML links it");
    assert!(
        !mail.parts().iter().any(|p| p["type"] == "application/zip"),
        "nothing attached"
    );
    // Without a share folder such a notice is not mailed, and nothing is begun.
    world.notify.share_dir = None;
    world.notify.share_url = String::new();
    let big = draft(NoticeTemplate::Cn).await.unwrap();
    let err = sending::send_notice(store, world.settings(), &mailer, big.id, false, "alice")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("notify.share_dir"), "{err}");
    assert_eq!(store.notice(big.id).await.unwrap().message_id, None);

    // The case, notice_sent, in a bulk-removal submission file: its URL, a tab, the work.
    let mut file = Vec::new();
    let written = casework::removals::export_removals(
        store,
        &[CaseStatus::Confirmed, CaseStatus::NoticeSent],
        &mut file,
    )
    .await
    .unwrap();
    assert_eq!((written.cases, written.urls), (1, 1));
    let work = store
        .work(store.case(case).await.unwrap().work_id)
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(file).unwrap(),
        format!("https://pirate.test/book/2.html\t{}\n", work.title)
    );
    let mut none = Vec::new();
    casework::removals::export_removals(store, &[CaseStatus::Removed], &mut none)
        .await
        .unwrap();
    assert!(none.is_empty());
}

/// Servers that do not take the message: the notice stays a draft, saying why.
async fn servers_that_do_not_take_it(db: &TestDb) {
    let store = &db.store;
    let case = common::confirmed_case(store, "https://pirate.test/book/2.html").await;
    for (mode, expected, permanent) in [
        (Mode::Refuse, "550", true),
        (Mode::Stall, "did not answer within", false),
        (Mode::Drop, "did not take the message", false),
    ] {
        let Some(server) = SmtpServer::start(mode).await else {
            return;
        };
        let mut smtp = server.settings(SERVER_FROM);
        // The stalled server never answers: the deadline over the whole exchange ends it.
        smtp.timeout = Duration::from_secs(2);
        let world = World {
            notices: common::profile(),
            notify: NotifySettings {
                smtp,
                ..NotifySettings::default()
            },
            rechecks: RecheckSettings::default(),
        };
        let mailer = Mailer::new(&world.notify.smtp).unwrap();
        let notice = notices::create_notice(
            store,
            &world.notices,
            None,
            case,
            NoticeTemplate::Dmca,
            Some("abuse@pirate.test"),
            "alice",
        )
        .await
        .unwrap();
        let err = sending::send_notice(store, world.settings(), &mailer, notice.id, false, "alice")
            .await
            .unwrap_err();
        let Error::Mail(not_sent) = &err else {
            panic!("{mode:?}: {err}");
        };
        assert!(not_sent.reason.contains(expected), "{mode:?}: {not_sent}");
        assert_eq!(not_sent.permanent, permanent, "{mode:?}: {not_sent}");
        let after = store.notice(notice.id).await.unwrap();
        assert_eq!(after.status, NoticeStatus::Draft, "{mode:?}");
        assert_eq!(after.sending_since, None, "{mode:?}: the attempt ended");
        assert_eq!(after.send_error.as_deref(), Some(not_sent.reason.as_str()));
        assert!(after.message_id.is_some(), "{mode:?}");
        assert_eq!(
            store.case(case).await.unwrap().status,
            CaseStatus::Confirmed
        );
        assert!(store.case_recheck(case).await.unwrap().is_none());
    }
}

store::on_both_backends!(mailed_notices, servers_that_do_not_take_it);

/// `notify test` over STARTTLS with the server's certificate from a test CA: accepted over
/// TLS when the CA is trusted, refused when it is not, and a client that will not do TLS is
/// turned away by a server that requires it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starttls_with_a_test_certificate() {
    let Some(server) = SmtpServer::start(Mode::Starttls).await else {
        return;
    };
    let settings = server.settings(SERVER_FROM);
    let accepted = Mailer::new(&settings)
        .unwrap()
        .send_test("someone@press.example")
        .await
        .unwrap();
    assert!(accepted.reply.starts_with("250"), "{accepted:?}");
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].json["tls"], true);
    assert_eq!(received[0].header("Subject"), "copyhound: test message");
    assert_eq!(
        accepted.sha256,
        hex(&sha2::Sha256::digest(&received[0].raw))
    );

    let untrusted = notification::SmtpSettings {
        ca_certificates: None,
        ..settings.clone()
    };
    let err = Mailer::new(&untrusted)
        .unwrap()
        .send_test("someone@press.example")
        .await
        .unwrap_err();
    assert!(
        jobs::chain(&err).to_lowercase().contains("certificate"),
        "{}",
        jobs::chain(&err)
    );

    let plain = notification::SmtpSettings {
        tls: notification::SmtpTls::None,
        ..settings
    };
    let err = Mailer::new(&plain)
        .unwrap()
        .send_test("someone@press.example")
        .await
        .unwrap_err();
    assert!(jobs::chain(&err).contains("530"), "{}", jobs::chain(&err));
    assert_eq!(server.received().len(), 1, "nothing more was received");
}

/// `doctor`'s SMTP check: a server that answers over STARTTLS is fine and nothing is mailed;
/// one whose certificate is not trusted, one that stalls and an address nobody listens on
/// fail, each saying why; no server configured is fine and says that nothing is mailed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_the_smtp_server() {
    use pipeline::doctor::{self, Level};
    let none = doctor::smtp(&notification::SmtpSettings::default()).await;
    assert_eq!(none.level, Level::Ok, "{none}");
    assert!(none.detail.contains("not mailed"), "{none}");

    let Some(server) = SmtpServer::start(Mode::Starttls).await else {
        return;
    };
    let settings = server.settings(SERVER_FROM);
    let fine = doctor::smtp(&settings).await;
    assert_eq!(fine.level, Level::Ok, "{fine}");
    assert!(fine.detail.contains("STARTTLS"), "{fine}");
    assert!(server.received().is_empty(), "the check mails nothing");

    let untrusted = notification::SmtpSettings {
        ca_certificates: None,
        ..settings.clone()
    };
    let bad = doctor::smtp(&untrusted).await;
    assert_eq!(bad.level, Level::Fail, "{bad}");
    assert!(bad.detail.to_lowercase().contains("certificate"), "{bad}");
    assert!(bad.fix.as_deref().unwrap().contains("notify test"), "{bad}");

    let Some(stalled) = SmtpServer::start(Mode::Stall).await else {
        return;
    };
    let mut stall = stalled.settings(SERVER_FROM);
    stall.timeout = Duration::from_secs(2);
    let bad = doctor::smtp(&stall).await;
    assert_eq!(bad.level, Level::Fail, "{bad}");
    assert!(bad.detail.contains("did not answer within"), "{bad}");

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let nobody = notification::SmtpSettings {
        port: closed,
        ..stall
    };
    let bad = doctor::smtp(&nobody).await;
    assert_eq!(bad.level, Level::Fail, "{bad}");
    assert!(bad.detail.contains(&format!("127.0.0.1:{closed}")), "{bad}");
}
