//! The examples of docs/rust.md, "The #[cached] attribute and async": built
//! by `cargo test` (tests/docs_examples.rs checks that every code block of
//! that section is a piece of this file). Run it with
//! `cargo run --example cached` (L1 only, no Redis needed).
use libcachekit::{cached, Cache};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

// [doc: free function]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

// Key: users:get_user:{blake2b-256 of [id]}; the value: User as a MessagePack map.
#[cached(namespace = "users", ttl = 60)]
fn get_user(id: u64) -> User {
    User {
        id,
        name: format!("user {id}"),
    } // runs on a miss only
}
// [end]

// [doc: handle]
fn app_cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("an L1-only cache"))
}

#[cached(namespace = "users", operation = "get_user.v2", cache = app_cache())]
fn get_user_v2(id: u64) -> Result<User, std::io::Error> {
    if id == 0 {
        return Err(std::io::Error::other("no user 0")); // returned, never cached
    }
    Ok(User {
        id,
        name: format!("user {id}"),
    }) // cached
}
// [end]

// [doc: methods]
struct Db; // not Serialize: it cannot be part of a key

struct Repo {
    cache: Cache,
}

impl Repo {
    // self and the connection are left out of the key: [id, lang].
    #[cached(namespace = "repo", cache = &self.cache, skip = [self, db])]
    fn title(&self, db: &Db, id: u32, lang: &str) -> String {
        let _ = db;
        format!("{lang}:{id}")
    }

    // The same with a parameter attribute, and the key given explicitly.
    #[cached(namespace = "repo", cache = &self.cache, key = (id / 100,))]
    fn bucket(&self, #[skip] db: &Db, id: u32) -> u32 {
        let _ = db;
        id / 100
    }
}
// [end]

// [doc: async]
#[cached(namespace = "users", ttl = 60, cache = app_cache())]
async fn fetch_user(id: u64) -> Result<User, std::io::Error> {
    // On a miss: one caller per key runs this, the others await its value.
    Ok(User {
        id,
        name: format!("remote user {id}"),
    })
}
// [end]

fn main() {
    let _ = get_user; // would use the default cache (the environment's L2)
    println!("{:?}", get_user_v2(7).unwrap());
    assert!(get_user_v2(0).is_err());
    let repo = Repo {
        cache: Cache::builder().l1_only().build().unwrap(),
    };
    println!("{} {}", repo.title(&Db, 1, "en"), repo.bucket(&Db, 250));
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    println!("{:?}", rt.block_on(fetch_user(3)).unwrap());
}
