use libcachekit::cached;

#[cached(ttl = 60)]
fn get_user(id: u64) -> u64 {
    id
}

fn main() {}
