use libcachekit::cached;

#[cached(namespace = "users")]
fn touch(id: u64) {
    let _ = id;
}

fn main() {}
