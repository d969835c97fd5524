//! Builds or finds libcachekit, then compiles the layout probe (layout/layout.c)
//! that tests/layout.rs reads.
//!
//! `bundled` (the default feature): compiles the core's C++ sources the crate
//! carries (core/src, core/include: symlinks into the repository, real folders in
//! the packaged .crate) with the `cc` crate into a static library, and links the
//! system libraries the core needs (found with pkg-config).
//!
//! `system` (feature), CACHEKIT_SYSTEM=1, or CACHEKIT_LIB_DIR + CACHEKIT_INCLUDE_DIR:
//! an installed or uninstalled libcachekit.so instead, found with pkg-config (module
//! `cachekit`; a meson build tree: PKG_CONFIG_PATH=<build>/meson-uninstalled) or in
//! the two folders named. Either choice wins over `bundled`, since features add up
//! and a dependency may keep the default on.
//!
//! docs.rs sets DOCS_RS and has no libcachekit: then nothing is built or linked and
//! no probe is compiled, so `cargo doc` builds (the bindings are only declared).
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "build/sources.rs"]
mod sources;

const HELP: &str = "libcachekit-sys: cannot find libcachekit (the `system` path was chosen).
  Installed library: install libcachekit (its cachekit.pc must be on pkg-config's path;
    set PKG_CONFIG_PATH to the folder holding cachekit.pc, e.g. /usr/local/lib/x86_64-linux-gnu/pkgconfig).
  A meson build tree of libcachekit: PKG_CONFIG_PATH=<build>/meson-uninstalled
    (and LD_LIBRARY_PATH=<build>/src to run).
  Without pkg-config: set CACHEKIT_LIB_DIR (folder of libcachekit.so) and
    CACHEKIT_INCLUDE_DIR (folder holding cachekit/cachekit.h and cachekit/version.h).
  Or build the core into the crate: the default feature `bundled`, without the `system`
    feature and with CACHEKIT_SYSTEM unset.";

const BUNDLED_HELP: &str = "libcachekit-sys: the `bundled` build needs a C++20 compiler (g++ 10+ or clang 10+),
  pkg-config and the development packages of lz4, xxhash, libsodium (1.0.18+), hiredis,
  OpenSSL (1.1.1+) and msgpack-cxx (header-only), e.g. on Debian/Ubuntu:
    apt-get install g++ pkg-config liblz4-dev libxxhash-dev libsodium-dev libhiredis-dev libssl-dev libmsgpack-cxx-dev
  Or use an installed libcachekit: feature `system` or CACHEKIT_SYSTEM=1.";

/// The system libraries the core links (pkg-config module, lowest version).
const CORE_DEPS: &[(&str, &str)] = &[
    ("liblz4", "1.8"),
    ("libxxhash", "0.7"),
    ("libsodium", "1.0.18"),
    ("hiredis", "0.14"),
    ("openssl", "1.1.1"),
];

fn main() {
    for var in [
        "CACHEKIT_SYSTEM",
        "CACHEKIT_LIB_DIR",
        "CACHEKIT_INCLUDE_DIR",
        "PKG_CONFIG_PATH",
        "DOCS_RS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=layout/layout.c");
    println!("cargo:rerun-if-changed=build/sources.rs");
    if env::var_os("DOCS_RS").is_some() {
        // A documentation build: rustdoc links nothing, and docs.rs has no libcachekit.
        return;
    }

    let include_dirs = if use_system() { system() } else { bundled() };
    // For dependents' build scripts (DEP_CACHEKIT_INCLUDE), if they want the headers.
    if let Some(first) = include_dirs.first() {
        println!("cargo:include={}", first.display());
    }

    let mut probe = cc::Build::new();
    probe.file("layout/layout.c").warnings(true);
    for dir in &include_dirs {
        probe.include(dir);
    }
    probe.compile("cachekit_layout_probe");
}

/// The system library unless the bundled build is both enabled and not overridden.
fn use_system() -> bool {
    let system_env = env::var("CACHEKIT_SYSTEM").is_ok_and(|v| !v.is_empty() && v != "0");
    let dirs_given = env::var_os("CACHEKIT_LIB_DIR").is_some() || env::var_os("CACHEKIT_INCLUDE_DIR").is_some();
    let bundled = env::var_os("CARGO_FEATURE_BUNDLED").is_some();
    let system = env::var_os("CARGO_FEATURE_SYSTEM").is_some();
    system || system_env || dirs_given || !bundled
}

/// Links an installed (or uninstalled) libcachekit.so; returns its include folders.
fn system() -> Vec<PathBuf> {
    match (env::var_os("CACHEKIT_LIB_DIR"), env::var_os("CACHEKIT_INCLUDE_DIR")) {
        (Some(lib), Some(include)) => {
            println!("cargo:rustc-link-search=native={}", PathBuf::from(lib).display());
            println!("cargo:rustc-link-lib=dylib=cachekit");
            vec![PathBuf::from(include)]
        }
        (None, None) => match pkg_config::Config::new().atleast_version("0.2").probe("cachekit") {
            Ok(lib) => lib.include_paths,
            Err(err) => {
                eprintln!("{HELP}\n  pkg-config said: {err}");
                panic!("libcachekit-sys: libcachekit not found (what to install or set is printed above)");
            }
        },
        _ => panic!("libcachekit-sys: set both CACHEKIT_LIB_DIR and CACHEKIT_INCLUDE_DIR, or neither\n{HELP}"),
    }
}

/// Compiles the core into a static library and links its system libraries; returns
/// the include folder holding cachekit/cachekit.h and the generated cachekit/version.h.
fn bundled() -> Vec<PathBuf> {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let core = manifest.join("core");
    let (src, include) = (core.join("src"), core.join("include"));
    if !src.join("capi").is_dir() || !include.join("cachekit/cachekit.h").is_file() {
        panic!(
            "libcachekit-sys: the core's sources are missing from {} (core/src and core/include: \
             symlinks to the repository's src/ and include/, or real folders in the packaged crate)",
            core.display()
        );
    }
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-changed={}", include.display());

    // The public headers as installed: cachekit.h next to the version.h meson would generate.
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let out_include = out.join("include");
    let out_cachekit = out_include.join("cachekit");
    fs::create_dir_all(&out_cachekit).expect("create OUT_DIR/include/cachekit");
    fs::copy(include.join("cachekit/cachekit.h"), out_cachekit.join("cachekit.h")).expect("copy cachekit.h");
    write_version_h(&include.join("cachekit/version.h.in"), &out_cachekit.join("version.h"));

    // Their include folders first: the compile fails with a clear message if one is missing.
    let mut libs = Vec::new();
    for (module, version) in CORE_DEPS {
        match pkg_config::Config::new()
            .atleast_version(version)
            .cargo_metadata(false)
            .probe(module)
        {
            Ok(lib) => libs.push(lib),
            Err(err) => {
                eprintln!("{BUNDLED_HELP}\n  pkg-config said: {err}");
                panic!("libcachekit-sys: {module} {version}+ not found for the bundled build (what to install is printed above)");
            }
        }
    }

    let sources = sources::core_sources(&src).expect("list core/src");
    let mut core_build = cc::Build::new();
    core_build
        .cpp(true)
        .flag("-std=c++20")
        .include(&out_include)
        .include(&src)
        // src/meson.build's core_args, hiredis found. As -D flags: the docs suite reads a
        // quoted CACHEKIT_ name in a build script as an environment variable.
        .flag("-DCACHEKIT_BUILDING_LIBRARY")
        .flag("-DMSGPACK_NO_BOOST")
        .flag("-DCACHEKIT_HAVE_HIREDIS")
        // As meson's gnu_symbol_visibility: 'hidden': the C API is marked for export.
        .flag("-fvisibility=hidden")
        .flag_if_supported("-Wno-missing-field-initializers")
        .flag_if_supported("-Wshadow=local");
    for lib in &libs {
        core_build.includes(&lib.include_paths);
        for (name, value) in &lib.defines {
            core_build.define(name, value.as_deref());
        }
    }
    core_build.files(sources.iter().map(|rel| src.join(rel)));
    // Emits the static library and the C++ runtime (stdc++) before the libraries it needs.
    core_build.compile("cachekit_core");

    for lib in &libs {
        for dir in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        for name in &lib.libs {
            println!("cargo:rustc-link-lib={name}");
        }
    }
    println!("cargo:rustc-link-lib=pthread");
    vec![out_include]
}

/// version.h from version.h.in with the values meson's configure_data sets
/// (include/cachekit/meson.build): the crate's version is the library's.
fn write_version_h(template: &Path, out: &Path) {
    let text = fs::read_to_string(template).expect("read version.h.in");
    let text = text
        .replace("@MAJOR@", &env::var("CARGO_PKG_VERSION_MAJOR").unwrap())
        .replace("@MINOR@", &env::var("CARGO_PKG_VERSION_MINOR").unwrap())
        .replace("@PATCH@", &env::var("CARGO_PKG_VERSION_PATCH").unwrap())
        .replace("@VERSION@", &env::var("CARGO_PKG_VERSION").unwrap());
    assert!(
        !text.contains('@'),
        "version.h.in has a placeholder build.rs does not fill"
    );
    fs::write(out, text).expect("write version.h");
}
