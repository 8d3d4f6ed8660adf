//! Shared by the examples: the corpus they run over.

/// Every UTF-8 `.txt` file directly under `dir` (sorted by name), cut at line ends into
/// chapters of about 8 KB.
pub fn chapters(dir: &str) -> Vec<String> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    let mut docs = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let mut chapter = String::new();
        for line in text.split_inclusive('\n') {
            chapter.push_str(line);
            if chapter.len() >= 8192 {
                docs.push(std::mem::take(&mut chapter));
            }
        }
        docs.push(chapter);
    }
    docs
}
