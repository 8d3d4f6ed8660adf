//! The browser's memory as a whole, capped: V8's `--max-old-space-size` holds a page's
//! JavaScript heap only, while canvases, decoded images, array buffers and extra renderer
//! processes live outside it (one page held 3 GiB, issue #43).
//!
//! A thread per browser sums the proportional set size (`Pss` in `/proc/PID/smaps_rollup`:
//! shared pages split between the processes that map them, so Chromium's shared code is not
//! counted once per process) of chromedriver and every process under it, a few times a
//! second; over the cap it kills the whole tree and says so. A memory cgroup would let the
//! kernel enforce the cap instead, but creating one needs a writable, delegated cgroup tree
//! (root, or systemd's delegation), which a container rarely grants; `RLIMIT_AS` caps
//! address space, which V8 reserves by the terabyte at start. Reading `/proc` works as any
//! user, wherever the renderer runs.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc;
use std::time::Duration;

/// How often the tree is measured: a page allocating as fast as it can (about a GiB a second
/// here) overshoots the cap by at most this much time's worth.
const EVERY: Duration = Duration::from_millis(100);

/// Watches one process tree until dropped.
pub(super) struct Watchdog {
    stop: Option<mpsc::Sender<()>>,
    over: tokio::sync::watch::Receiver<Option<u64>>,
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // The thread ends at its next tick, when it finds the channel closed.
        self.stop.take();
    }
}

impl Watchdog {
    /// Watches the tree under `root` (a process group leader): over `max_bytes`, every
    /// process in it is killed.
    pub(super) fn start(root: u32, max_bytes: u64) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let (tell, over) = tokio::sync::watch::channel(None);
        let spawned = std::thread::Builder::new()
            .name(format!("render-watchdog-{root}"))
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(EVERY) {
                    let tree = tree(root);
                    let used: u64 = tree.iter().map(|&pid| memory(pid)).sum();
                    if used > max_bytes {
                        // Told first: the render then blames the cap, not the dead
                        // chromedriver the kill leaves it talking to.
                        let _ = tell.send(Some(used));
                        kill(root, &tree);
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            // Without a thread there is no cap: say so rather than render unguarded.
            tracing::error!(error = %e, "cannot start the browser's memory watchdog");
        }
        Self {
            stop: Some(stop),
            over,
        }
    }

    /// The memory the tree was killed at, bytes; `None` while it is under the cap.
    pub(super) fn tripped(&self) -> Option<u64> {
        *self.over.borrow()
    }

    /// Resolves with the memory the tree was killed at, bytes.
    pub(super) async fn killed(&self) -> u64 {
        let mut over = self.over.clone();
        let used = over.wait_for(Option::is_some).await.map(|used| *used);
        match used {
            Ok(used) => used.unwrap_or_default(),
            // The thread ended without a kill (it could not start): never resolves.
            Err(_) => std::future::pending().await,
        }
    }
}

/// `root` and every process under it, by parent, and every process in its process group
/// (a child that re-parented itself to init but kept the group).
pub(super) fn tree(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![root];
    };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut members = HashSet::from([root]);
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Some((parent, group)) = parent_and_group(pid) else {
            continue;
        };
        children.entry(parent).or_default().push(pid);
        if group == root {
            members.insert(pid);
        }
    }
    let mut todo: Vec<u32> = members.iter().copied().collect();
    while let Some(pid) = todo.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if members.insert(child) {
                todo.push(child);
            }
        }
    }
    let mut tree: Vec<u32> = members.into_iter().collect();
    tree.sort_unstable();
    tree
}

/// The parent and process group of `pid` (fields 4 and 5 of `/proc/PID/stat`, after the
/// command name, which may hold spaces and parentheses).
fn parent_and_group(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let _state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some((parent, group))
}

/// The memory `pid` holds, bytes: its proportional set size, or its resident set where the
/// kernel has no `smaps_rollup` (before Linux 4.14); 0 once it is gone.
pub(super) fn memory(pid: u32) -> u64 {
    if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
        return rollup
            .lines()
            .find_map(|l| l.strip_prefix("Pss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024);
    }
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        // Linux's page size on every platform the Dockerfile builds for.
        .map_or(0, |pages| pages * 4096)
}

/// Kills `root`'s process group and each process of `tree` (one that left the group too).
pub(super) fn kill(root: u32, tree: &[u32]) {
    let mut targets = vec![format!("-{root}")];
    targets.extend(tree.iter().map(u32::to_string));
    let _ = std::process::Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .args(&targets)
        .stderr(std::process::Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_holds_its_children_and_their_memory_is_counted() {
        use std::os::unix::process::CommandExt;
        // A shell in a group of its own with a child that holds ~64 MiB of touched memory.
        let mut shell = std::process::Command::new("sh")
            .args([
                "-c",
                "python3 -c 'import time; b = bytes([1]) * (64 << 20); print(\"ready\", flush=True); time.sleep(60)' & wait",
            ])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(shell.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line, "ready\n");
        let root = shell.id();
        let members = tree(root);
        assert!(members.len() >= 2, "{members:?}");
        let used: u64 = members.iter().map(|&p| memory(p)).sum();
        assert!(used > 64 << 20, "{used}");
        kill(root, &members);
        let ended = shell.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&ended),
            Some(9)
        );
    }
}
