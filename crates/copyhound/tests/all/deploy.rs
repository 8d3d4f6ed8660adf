//! The deployment files checked against the code they deploy: `docker-compose.yml` (services,
//! health checks, ports, secrets and every `COPYHOUND_*` variable, loaded as settings),
//! the `Dockerfile` (stages, user, command) and `config/production.example.toml` (every key
//! of the settings with its variable). `docker compose config` validates the compose file
//! too where the tool is installed. The commands the files run are checked by the binary
//! itself: `copyhound <the command> --help` parses them with the real command line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use settings::Settings;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// docker-compose.yml as JSON, YAML merge keys applied.
fn compose() -> Value {
    let mut yaml: serde_norway::Value =
        serde_norway::from_str(&read("docker-compose.yml")).unwrap();
    yaml.apply_merge().unwrap();
    serde_json::to_value(yaml).unwrap()
}

/// Every settings key (dotted), leaves only; unset options (`null`) included.
fn setting_keys() -> BTreeSet<String> {
    fn walk(value: &Value, path: &str, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (k, v) in map {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(v, &p, out);
                }
            }
            // An empty map (abuse_contacts) is a section of free keys, not a setting.
            Value::Object(_) => {}
            _ => {
                out.insert(path.to_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(
        &serde_json::to_value(Settings::default()).unwrap(),
        "",
        &mut out,
    );
    out
}

fn env_var(key: &str) -> String {
    format!("COPYHOUND_{}", key.to_uppercase().replace('.', "__"))
}

/// The variables the command line reads (global flags, the log's, the database's file):
/// every `COPYHOUND_*` name its `--help` documents.
fn cli_vars() -> BTreeSet<String> {
    let help = copyhound(&["--help"]);
    let vars: BTreeSet<String> = help
        .split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .filter(|w| w.starts_with("COPYHOUND_") && w.len() > "COPYHOUND_".len())
        .map(str::to_owned)
        .collect();
    for var in [
        "COPYHOUND_CONFIG",
        "COPYHOUND_LOG",
        settings::DATABASE_URL_VAR,
        &format!("{}_FILE", settings::DATABASE_URL_VAR),
    ] {
        assert!(vars.contains(var), "--help names {var}: {vars:?}");
    }
    vars
}

/// What `copyhound ARGS` prints on standard output; panics when it fails.
fn copyhound(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_copyhound"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "copyhound {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A command line the binary accepts: `copyhound ARGS --help` parses every option before
/// the help, so an unknown option or a bad value fails it.
fn check_command_line(args: &[String]) {
    let mut with_help: Vec<&str> = args.iter().map(String::as_str).collect();
    with_help.push("--help");
    copyhound(&with_help);
}

/// The value of `--flag VALUE` (or `--flag=VALUE`) in a command line.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let inline = format!("{flag}=");
    args.iter().enumerate().find_map(|(i, a)| {
        if a == flag {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix(&inline).map(str::to_owned)
        }
    })
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// A service's command, checked by the real command line.
fn parse_command(service: &Value) -> Vec<String> {
    let args = strings(&service["command"]);
    check_command_line(&args);
    args
}

/// The port a `bash /dev/tcp` health check asks, and the path.
fn health_port(service: &Value) -> u16 {
    let test = strings(&service["healthcheck"]["test"]).join(" ");
    assert!(test.contains("GET /readyz"), "{test}");
    let rest = test.split("/dev/tcp/127.0.0.1/").nth(1).unwrap();
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The container side of a `HOST_IP:HOST:CONTAINER` port mapping.
fn container_port(mapping: &str) -> u16 {
    mapping.rsplit(':').next().unwrap().parse().unwrap()
}

/// The settings a service runs with: production.example.toml (what its config points at by
/// default) and its environment, secrets replaced by sample files.
fn service_settings(service: &Value, secrets_dir: &Path) -> Settings {
    let env = service["environment"].as_object().unwrap();
    let known = setting_keys();
    let cli = cli_vars();
    let mut vars = Vec::new();
    for (name, value) in env {
        assert!(name.starts_with("COPYHOUND_"), "{name}");
        let value = value.as_str().unwrap().to_owned();
        if cli.contains(name) {
            continue;
        }
        let key = name.trim_end_matches("_FILE");
        assert!(
            known.iter().any(|k| env_var(k) == key),
            "{name} sets no setting (known: {known:?})"
        );
        if name.ends_with("_FILE") {
            let secret = value.strip_prefix("/run/secrets/").unwrap();
            assert!(
                strings(&service["secrets"]).iter().any(|s| s == secret),
                "{name} reads secret {secret}, which the service does not mount"
            );
            let sample = secrets_dir.join(secret);
            std::fs::write(&sample, "0123456789abcdef0123456789abcdef\n").unwrap();
            vars.push((name.clone(), sample.display().to_string()));
        } else {
            vars.push((name.clone(), value));
        }
    }
    assert_eq!(
        env["COPYHOUND_CONFIG"].as_str(),
        Some("/etc/copyhound/copyhound.toml")
    );
    assert!(
        strings(&service["volumes"]).contains(
            &"${COPYHOUND_CONFIG_FILE:-./config/production.example.toml}:/etc/copyhound/copyhound.toml:ro"
                .to_owned()
        ),
        "the settings file is mounted where COPYHOUND_CONFIG points"
    );
    let loaded = settings::load(Some(&repo().join("config/production.example.toml")), vars)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(loaded.unknown_keys.is_empty(), "{:?}", loaded.unknown_keys);
    loaded.settings
}

/// The working directory of the runtime image (the last stage).
fn image_workdir() -> String {
    read("Dockerfile")
        .lines()
        .filter_map(|l| l.strip_prefix("WORKDIR "))
        .next_back()
        .unwrap()
        .trim()
        .to_owned()
}

#[test]
fn compose_services_ports_and_variables_match_the_settings() {
    let compose = compose();
    let services = compose["services"].as_object().unwrap();
    let names: BTreeSet<&str> = services.keys().map(String::as_str).collect();
    assert_eq!(names, BTreeSet::from(["postgres", "serve", "worker"]));

    let postgres = &services["postgres"];
    let test = strings(&postgres["healthcheck"]["test"]).join(" ");
    assert!(test.contains("pg_isready"), "{test}");
    assert_eq!(
        postgres["environment"]["POSTGRES_PASSWORD_FILE"],
        "/run/secrets/postgres_password"
    );

    let secrets = compose["secrets"].as_object().unwrap();
    let volumes = compose["volumes"].as_object().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workdir = image_workdir();
    for name in ["serve", "worker"] {
        let service = &services[name];
        assert_eq!(
            service["depends_on"]["postgres"]["condition"], "service_healthy",
            "{name}"
        );
        for secret in strings(&service["secrets"]) {
            assert!(secrets[&secret]["file"].is_string(), "{name}: {secret}");
        }
        for mount in strings(&service["volumes"]) {
            // A named volume, or a file of the checkout.
            let volume = mount.split(':').next().unwrap();
            assert!(
                volumes.contains_key(volume) || mount.starts_with("${COPYHOUND_CONFIG_FILE:-./"),
                "{name}: {mount}"
            );
        }
        let settings = service_settings(service, dir.path());
        // Uploads land in the volume the other service mounts too.
        let uploads = format!("{workdir}/{}", settings.server.upload_dir.display());
        assert!(
            strings(&service["volumes"]).contains(&format!("uploads:{uploads}")),
            "{name}: uploads go to {uploads}"
        );
        assert!(settings.server.metrics_token.is_some(), "{name}");
        let args = parse_command(service);
        match args.first().map(String::as_str) {
            Some("serve") => {
                assert_eq!(name, "serve");
                let listen: std::net::SocketAddr = flag_value(&args, "--listen")
                    .map_or(settings.server.listen, |l| l.parse().unwrap());
                assert!(listen.ip().is_unspecified(), "{listen}");
                let ports = strings(&service["ports"]);
                assert_eq!(ports.len(), 1);
                assert_eq!(container_port(&ports[0]), listen.port());
                // Published on loopback only: TLS goes in front.
                assert!(ports[0].starts_with("127.0.0.1:"), "{}", ports[0]);
                assert_eq!(health_port(service), listen.port());
            }
            Some("worker") => {
                assert_eq!(name, "worker");
                // `--scale worker=N`: no host port to collide on.
                assert!(service.get("ports").is_none());
                let metrics: std::net::SocketAddr = flag_value(&args, "--metrics-listen")
                    .expect("workers serve /metrics")
                    .parse()
                    .unwrap();
                assert_eq!(strings(&service["expose"]), [metrics.port().to_string()]);
                assert_eq!(health_port(service), metrics.port());
            }
            other => panic!("{name} runs {other:?}"),
        }
    }
}

#[test]
fn the_dockerfile_builds_in_stages_and_runs_unprivileged() {
    let dockerfile = read("Dockerfile");
    let stages: Vec<&str> = dockerfile.split("\nFROM ").skip(1).collect();
    assert!(stages.len() >= 2, "a build stage and a runtime stage");
    let runtime = stages.last().unwrap();
    assert!(runtime.contains("COPY --from=build"), "{runtime}");
    assert!(
        !runtime.contains("cargo "),
        "the runtime stage compiles nothing"
    );
    let user = runtime
        .lines()
        .filter_map(|l| l.strip_prefix("USER "))
        .next_back()
        .expect("a USER line");
    assert!(
        !user.starts_with("root") && !user.starts_with('0'),
        "{user}"
    );
    let json_list = |prefix: &str| -> Vec<String> {
        let line = runtime
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix}"));
        serde_json::from_str(line).unwrap()
    };
    let entrypoint = json_list("ENTRYPOINT ");
    assert_eq!(entrypoint.last().map(String::as_str), Some("copyhound"));
    let args = json_list("CMD ");
    check_command_line(&args);
    assert_eq!(
        args.first().map(String::as_str),
        Some("serve"),
        "the image serves by default: {args:?}"
    );
    let listen: std::net::SocketAddr = flag_value(&args, "--listen").unwrap().parse().unwrap();
    let expose = runtime
        .lines()
        .find_map(|l| l.strip_prefix("EXPOSE "))
        .unwrap();
    assert_eq!(expose.trim(), listen.port().to_string());
    // The default database and uploads are relative: they must land in the volume.
    let volume = runtime
        .lines()
        .find_map(|l| l.strip_prefix("VOLUME "))
        .unwrap();
    let volume: Vec<String> = serde_json::from_str(volume).unwrap();
    let data = settings::DEFAULT_DATABASE_URL
        .strip_prefix("sqlite://")
        .unwrap();
    assert!(
        Path::new(&image_workdir())
            .join(data)
            .starts_with(&volume[0]),
        "{data} under {volume:?}"
    );
}

#[test]
fn the_production_example_names_every_key_and_its_variable() {
    let text = read("config/production.example.toml");
    let lines: Vec<&str> = text.lines().collect();
    // Where each key's line is, by section.
    let mut section = String::new();
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    let mut sections = BTreeSet::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            sections.insert(section.clone());
            continue;
        }
        let key_line = line.strip_prefix("# ").unwrap_or(line);
        if let Some((key, _)) = key_line.split_once(" = ")
            && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        {
            found.insert(format!("{section}.{key}"), i);
        }
    }
    let mut problems = Vec::new();
    for key in setting_keys() {
        let Some(&at) = found.get(&key) else {
            problems.push(format!("{key} is missing"));
            continue;
        };
        let var = env_var(&key);
        let named = lines[at.saturating_sub(4)..at]
            .iter()
            .any(|l| l.trim_start_matches('#').trim() == format!("env {var}"));
        if !named {
            problems.push(format!("{key}: no `#   env {var}` line just above it"));
        }
        // A comment says what it is: a line of prose in the key's section before it.
        let section_start = lines[..at]
            .iter()
            .rposition(|l| l.starts_with('['))
            .unwrap();
        let prose = lines[section_start.saturating_sub(4)..at].iter().any(|l| {
            l.starts_with("# ")
                && !l.contains(" = ")
                && !l.trim_start_matches('#').trim_start().starts_with("env ")
        });
        if !prose {
            problems.push(format!("{key} has no comment"));
        }
    }
    assert!(
        problems.is_empty(),
        "production.example.toml: {problems:#?}"
    );
    assert!(sections.contains("notices.abuse_contacts"));
    // As it stands the example is a valid configuration that sets nothing unknown.
    let loaded = settings::load(
        Some(&repo().join("config/production.example.toml")),
        Vec::new(),
    )
    .unwrap();
    assert!(loaded.unknown_keys.is_empty(), "{:?}", loaded.unknown_keys);
    assert_ne!(loaded.settings, Settings::default());
}

/// `docker compose config` (or the older `docker-compose`) on a copy of the compose file with
/// sample secrets beside it.
#[test]
fn docker_compose_accepts_the_compose_file_where_installed() {
    let tool: Option<Vec<&str>> = [vec!["docker", "compose"], vec!["docker-compose"]]
        .into_iter()
        .find(|cmd| {
            std::process::Command::new(cmd[0])
                .args(&cmd[1..])
                .arg("version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let Some(tool) = tool else {
        eprintln!("SKIPPED: neither `docker compose` nor `docker-compose` is installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("docker-compose.yml"),
        dir.path().join("docker-compose.yml"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    std::fs::copy(
        repo().join("config/production.example.toml"),
        dir.path().join("config/production.example.toml"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
    for secret in ["postgres_password", "database_url", "metrics_token"] {
        std::fs::write(dir.path().join("secrets").join(secret), "sample\n").unwrap();
    }
    let out = std::process::Command::new(tool[0])
        .args(&tool[1..])
        .args(["--file", "docker-compose.yml", "config", "--quiet"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} config: {}",
        tool.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}
