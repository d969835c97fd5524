use libcachekit::cached;

#[cached(namespace = "users", tll = 60)]
fn get_user(id: u64) -> u64 {
    id
}

fn main() {}
