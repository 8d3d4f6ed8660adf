//! The `copyhound bench` and `copyhound config` commands, run as a user would run them.

use std::process::{Command, Output};

fn copyhound() -> Command {
    Command::new(env!("CARGO_BIN_EXE_copyhound"))
}

/// Runs the command and insists it succeeded, showing its stderr if not.
fn success(command: &mut Command) -> Output {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn bench_fingerprint_json_has_every_kind() {
    let out = success(copyhound().args([
        "bench",
        "fingerprint",
        "--json",
        "--seconds",
        "0",
        "--threads",
        "2",
    ]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["docs"].as_u64().unwrap() > 30);
    assert!(v["bytes"].as_u64().unwrap() > 250_000);
    assert_eq!(v["threads"], 2);
    for kind in [
        "normalize",
        "minhash",
        "simhash",
        "winnow",
        "winnow_normalized",
        "pinyin_winnow",
        "sentences",
        "dna",
        "all",
        "jieba_cut",
    ] {
        let k = &v["kinds"][kind];
        assert!(k["docs_per_s"].as_f64().unwrap() > 0.0, "{kind}");
        assert!(k["mb_per_s"].as_f64().unwrap() > 0.0, "{kind}");
    }
}

#[test]
fn bench_fingerprint_reads_a_directory() {
    let dir = std::env::temp_dir().join(format!("copyhound-bench-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::write(
        dir.join("nested/a.txt"),
        "第一回\n天下大势，分久必合，合久必分。\n".repeat(500),
    )
    .unwrap();
    std::fs::write(dir.join("bad.txt"), [0xff, 0xfe, 0x00]).unwrap();
    std::fs::write(dir.join("ignored.md"), "not a txt").unwrap();
    let out = copyhound()
        .args([
            "bench",
            "fingerprint",
            "--json",
            "--seconds",
            "0",
            "--input",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("skipping") && stderr.contains("bad.txt"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["bytes"].as_u64().unwrap(),
        ("第一回\n天下大势，分久必合，合久必分。\n".len() * 500) as u64
    );
}

#[test]
fn bench_fingerprint_refuses_bad_arguments() {
    let out = copyhound()
        .args(["bench", "fingerprint", "--threads", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--threads") && stderr.contains("is not a count"),
        "{stderr}"
    );
    let out = copyhound()
        .args(["bench", "fingerprint", "--input", "/nonexistent/copyhound"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/copyhound"));
}

#[test]
fn config_prints_effective_settings_and_warns_on_unknown_keys() {
    let out = success(
        copyhound()
            .arg("config")
            .env("COPYHOUND_FINGERPRINT__WINNOW_W", "44")
            .env("COPYHOUND_FINGERPRINT__NO_SUCH_KEY", "1"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("winnow_w = 44"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown setting `fingerprint.no_such_key` ignored"),
        "{stderr}"
    );
}

#[test]
fn bad_config_file_is_a_clear_error() {
    let out = copyhound()
        .args(["config", "--config", "/nonexistent/copyhound.toml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("reading config file /nonexistent/copyhound.toml")
    );
}

#[test]
fn bench_extract_measures_parse_and_extraction_of_real_pages() {
    let out = success(copyhound().args(["bench", "extract", "--json", "--seconds", "0"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pages"], 3);
    assert!(v["bytes"].as_u64().unwrap() > 50_000);
    for kind in ["parse", "extract"] {
        assert!(v[kind]["mb_per_s"].as_f64().unwrap() > 0.0, "{kind}");
    }
    let out = success(copyhound().args(["bench", "extract", "--seconds", "0"]));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("pages/s") && table.contains("extract"),
        "{table}"
    );
    let out = copyhound()
        .args(["bench", "extract", "--threads", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--threads") && stderr.contains("is not a count"),
        "{stderr}"
    );
}

#[test]
fn bench_index_json_has_the_issue_figures() {
    let out = success(copyhound().args([
        "bench",
        "index",
        "--chapters",
        "2000",
        "--pages",
        "1",
        "--repeat",
        "1",
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["chapters"], 2000);
    let bytes = v["bytes_per_chapter"].as_f64().unwrap();
    assert!(bytes > 100.0 && bytes < 4096.0, "{v}");
    assert!(v["load_s_store"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["page_p99_ms"].as_f64().unwrap() > 0.0, "{v}");
    let recall = v["recall"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&recall), "{v}");
    // The snapshot load is measured too, from a snapshot of the same index.
    assert!(v["load_s_snapshot"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["snapshot_bytes"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn bench_index_refuses_fewer_chapters_than_the_corpus() {
    let out = copyhound()
        .args(["bench", "index", "--chapters", "3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--chapters 3 is fewer than the"), "{err}");
}
