//! The core's C++ sources for the `bundled` build: every `.cpp` under core/src,
//! found by walking the folder, so a file added to the tree is compiled without a
//! list here to update. Shared by build.rs and tests/bundled_sources.rs, which
//! checks the walk against the files the meson.build files name.
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Sources the walk finds that the bundled build leaves out, with the reason.
/// Empty today: the bundled build always has hiredis (CACHEKIT_HAVE_HIREDIS), so
/// the files meson builds only when hiredis is found are all compiled too.
pub const EXCLUDED: &[(&str, &str)] = &[];

/// Every `.cpp` under `src_root`, as paths relative to it with `/` separators, sorted,
/// minus EXCLUDED.
pub fn core_sources(src_root: &Path) -> io::Result<Vec<String>> {
    let mut found = Vec::new();
    walk(src_root, src_root, &mut found)?;
    found.retain(|rel| !EXCLUDED.iter().any(|(name, _)| name == rel));
    found.sort();
    Ok(found)
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path: PathBuf = entry?.path();
        // metadata() follows symlinks: the crate's core/src is one inside the repository.
        if fs::metadata(&path)?.is_dir() {
            walk(root, &path, found)?;
        } else if path.extension().is_some_and(|ext| ext == "cpp") {
            let rel = path.strip_prefix(root).expect("walked below the root");
            let parts: Vec<_> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            found.push(parts.join("/"));
        }
    }
    Ok(())
}
