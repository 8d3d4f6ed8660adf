//! `copyhound serve` as a process: the first start creates an admin with a one-time
//! password, the UI answers on the address it prints, the password logs in, and SIGTERM
//! stops it cleanly.

use crate::common;

use std::io::{BufReader, Read};
use std::process::Stdio;
use std::time::Duration;

#[test]
fn serve_prints_a_one_time_admin_password_that_logs_in_and_stops_on_sigterm() {
    let env = common::Env::new();
    let uploads = env.dir.path().join("uploads");
    let mut child = common::copyhound(&env.db)
        .args(["serve", "--listen", "127.0.0.1:0", "--upload-dir"])
        .arg(&uploads)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (mut password, mut addr) = (None, None);
    common::read_until(&mut stderr, Duration::from_secs(60), |line| {
        if let Some(rest) = line.split("one-time password ").nth(1) {
            password = Some(rest.trim().to_owned());
        }
        if let Some(rest) = line.split("serving http://").nth(1) {
            addr = Some(rest.split('/').next().unwrap().to_owned());
        }
        addr.is_some()
    });
    let (password, addr) = (password.expect("a one-time password"), addr.unwrap());
    assert!(password.len() >= 16, "{password}");

    let answer = common::login(&addr, "admin", &password);
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    assert!(answer.contains("location: /cases"), "{answer}");
    let cookie = answer
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .expect("a session cookie")
        .to_owned();
    let page = common::http(
        &addr,
        &format!(
            "GET /cases HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("Review queue"), "{page}");

    common::terminate(&mut child, Duration::from_secs(40));
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("workers stopped"), "{rest}");

    // The admin it created is an account like any other.
    let out = common::copyhound(&env.db)
        .args(["users", "list"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("admin"));
}
