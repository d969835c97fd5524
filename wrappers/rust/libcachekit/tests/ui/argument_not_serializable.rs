use libcachekit::cached;

struct Connection;

#[cached(namespace = "users")]
fn get_user(conn: &Connection, id: u64) -> u64 {
    let _ = conn;
    id
}

fn main() {}
