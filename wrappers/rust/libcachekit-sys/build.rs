//! Finds libcachekit with pkg-config (module `cachekit`) and compiles the
//! layout probe (layout/layout.c) that tests/layout.rs reads.
//!
//! Uninstalled build tree: PKG_CONFIG_PATH=<build>/meson-uninstalled picks up
//! cachekit-uninstalled.pc. Without pkg-config, CACHEKIT_LIB_DIR and
//! CACHEKIT_INCLUDE_DIR name the library and header folders directly.
//!
//! docs.rs sets DOCS_RS and has no libcachekit: then nothing is linked and no
//! probe is compiled, so `cargo doc` builds (the bindings are only declared).
use std::env;
use std::path::PathBuf;

const HELP: &str = "libcachekit-sys: cannot find libcachekit.
  Installed library: install libcachekit (its cachekit.pc must be on pkg-config's path;
    set PKG_CONFIG_PATH to the folder holding cachekit.pc, e.g. /usr/local/lib/x86_64-linux-gnu/pkgconfig).
  A meson build tree of libcachekit: PKG_CONFIG_PATH=<build>/meson-uninstalled
    (and LD_LIBRARY_PATH=<build>/src to run).
  Without pkg-config: set CACHEKIT_LIB_DIR (folder of libcachekit.so) and
    CACHEKIT_INCLUDE_DIR (folder holding cachekit/cachekit.h and cachekit/version.h).";

fn main() {
    for var in ["CACHEKIT_LIB_DIR", "CACHEKIT_INCLUDE_DIR", "PKG_CONFIG_PATH", "DOCS_RS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=layout/layout.c");
    if env::var_os("DOCS_RS").is_some() {
        // A documentation build: rustdoc links nothing, and docs.rs has no libcachekit.
        return;
    }

    let include_dirs = match (env::var_os("CACHEKIT_LIB_DIR"), env::var_os("CACHEKIT_INCLUDE_DIR")) {
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
    };
    // For the libcachekit crate's own build script, if it wants them.
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
