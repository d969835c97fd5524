use libcachekit::cached;

#[cached(namespace = "nsapi")]
fn get_user(id: u64) -> u64 {
    id
}

fn main() {}
