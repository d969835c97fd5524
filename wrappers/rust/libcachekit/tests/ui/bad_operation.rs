use libcachekit::cached;

#[cached(namespace = "users", operation = "get..user")]
fn get_user(id: u64) -> u64 {
    id
}

fn main() {}
