use libcachekit::cached;

#[cached(namespace = "users")]
fn _get_user(id: u64) -> u64 {
    id
}

fn main() {}
