use libcachekit::cached;

#[cached(namespace = "users", skip = [conn])]
fn get_user(id: u64) -> u64 {
    id
}

fn main() {}
