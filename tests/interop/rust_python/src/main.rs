//! `libcachekit-interop-rust-python side '<json job>'`: our Rust `#[cached]` side
//! (src/ours_side.rs) of tests/interop/rust_python/run.py, the scenarios
//! tests/interop/python_rust_interop.py runs against cachekit-rs with this program as
//! the Rust half.
mod ours_side;
mod side_job;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.as_slice() {
        [cmd, job] if cmd == "side" => ours_side::run(job),
        _ => Err("usage: libcachekit-interop-rust-python side '<json job>'".into()),
    };
    if let Err(e) = outcome {
        eprintln!("libcachekit-interop-rust-python: {e}");
        std::process::exit(2);
    }
}
