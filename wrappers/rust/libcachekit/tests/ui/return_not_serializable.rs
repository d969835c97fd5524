use libcachekit::cached;

struct Handle;

#[cached(namespace = "users")]
fn open(id: u64) -> Handle {
    let _ = id;
    Handle
}

fn main() {}
