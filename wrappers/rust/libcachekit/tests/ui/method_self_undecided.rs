use libcachekit::cached;

struct Repo;

impl Repo {
    #[cached(namespace = "users")]
    fn get_user(&self, id: u64) -> u64 {
        id
    }
}

fn main() {}
