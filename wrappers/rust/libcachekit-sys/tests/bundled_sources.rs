//! The `bundled` build compiles what meson compiles: the .cpp files build.rs
//! finds by walking core/src are the ones src/**/meson.build name (all of them,
//! hiredis-only files too: the bundled build always has hiredis), and the
//! version.h it writes fills the placeholders meson's configure_data fills.
//! Runs in the repository and in the unpacked .crate (both carry core/).
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "../build/sources.rs"]
mod sources;

fn core() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("core")
}

/// The single-quoted strings of a meson.build that end in `suffix` (comments skipped:
/// an apostrophe in one is no string).
fn quoted(text: &str, suffix: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut current: Option<String> = None;
        for ch in line.chars() {
            match (&mut current, ch) {
                (None, '#') => break,
                (None, '\'') => current = Some(String::new()),
                (Some(s), '\'') => {
                    found.push(std::mem::take(s));
                    current = None;
                }
                (Some(s), c) => s.push(c),
                (None, _) => {}
            }
        }
    }
    found.retain(|s| s.ends_with(suffix));
    found
}

/// Every `'name.cpp'` of every meson.build under `dir`, relative to `root`.
fn meson_sources(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if fs::metadata(&path).unwrap().is_dir() {
            meson_sources(root, &path, out);
        } else if path.file_name().is_some_and(|n| n == "meson.build") {
            let prefix = path
                .parent()
                .unwrap()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            for name in quoted(&fs::read_to_string(&path).unwrap(), ".cpp") {
                out.insert(if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                });
            }
        }
    }
}

#[test]
fn walk_matches_the_meson_lists() {
    let src = core().join("src");
    let walked: BTreeSet<String> = sources::core_sources(&src).unwrap().into_iter().collect();
    let mut listed = BTreeSet::new();
    meson_sources(&src, &src, &mut listed);
    for (name, _) in sources::EXCLUDED {
        listed.remove(*name);
    }
    assert!(
        walked.len() > 50,
        "the walk found only {} sources under {}",
        walked.len(),
        src.display()
    );
    let only_walked: Vec<_> = walked.difference(&listed).collect();
    let only_listed: Vec<_> = listed.difference(&walked).collect();
    assert!(
        only_walked.is_empty() && only_listed.is_empty(),
        "the bundled build and meson disagree.\n  in the tree, in no meson.build: {only_walked:?}\n  \
         in a meson.build, not compiled: {only_listed:?}\n  A file meson builds only under an option \
         the bundled build lacks goes into build/sources.rs's EXCLUDED, with the reason."
    );
}

#[test]
fn exclusions_name_files_that_exist() {
    for (name, why) in sources::EXCLUDED {
        assert!(
            core().join("src").join(name).is_file(),
            "EXCLUDED names {name} ({why}), which is gone"
        );
    }
}

#[test]
fn version_h_placeholders_are_the_ones_meson_sets() {
    let include = core().join("include/cachekit");
    let template = fs::read_to_string(include.join("version.h.in")).unwrap();
    let used: BTreeSet<String> = template.split('@').skip(1).step_by(2).map(str::to_owned).collect();
    let meson = fs::read_to_string(include.join("meson.build")).unwrap();
    let set: BTreeSet<String> = meson
        .lines()
        .filter_map(|line| line.trim().strip_prefix("version_conf.set('"))
        .filter_map(|rest| rest.split('\'').next().map(str::to_owned))
        .collect();
    let filled: BTreeSet<String> = ["MAJOR", "MINOR", "PATCH", "VERSION"].map(String::from).into();
    assert_eq!(
        used, set,
        "version.h.in's placeholders vs include/cachekit/meson.build's version_conf"
    );
    assert_eq!(
        set, filled,
        "build.rs's write_version_h fills these; meson sets others now"
    );
}

/// build.rs takes the library's version from the crate's; meson's project() is the source.
#[test]
fn crate_version_is_the_projects() {
    let root_meson = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../meson.build");
    let Ok(text) = fs::read_to_string(&root_meson) else {
        return; // the unpacked .crate: no repository around it
    };
    let project = text.split("project(").nth(1).expect("meson.build has project()");
    let version = project
        .split("version: '")
        .nth(1)
        .and_then(|v| v.split('\'').next())
        .expect("project() version");
    assert_eq!(
        env!("CARGO_PKG_VERSION"),
        version,
        "wrappers/rust/Cargo.toml's version vs meson.build's project()"
    );
}
