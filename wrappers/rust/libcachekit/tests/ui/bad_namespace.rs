use libcachekit::cached;

#[cached(namespace = "Users")]
fn get_user(id: u64) -> u64 {
    id
}

fn main() {}
