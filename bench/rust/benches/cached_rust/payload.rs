//! The values the cases return: a small struct (R1, R2, R4) and the 23.5 KB
//! payload of the Python benchmarks (bench/python/payload.py, read through
//! python3 so the data is the same, not a copy of its generator).
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub id: u64,
    pub name: String,
    pub active: bool,
}

pub fn small_user(id: u64) -> User {
    User {
        id,
        name: format!("user {id}"),
        active: true,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Payload {
    pub users: Vec<PayloadUser>,
    pub count: u32,
    pub page: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PayloadUser {
    pub id: u64,
    pub name: String,
    pub email: String,
    pub active: bool,
    pub score: f64,
    pub tags: Vec<String>,
    pub address: Address,
    pub logins: Vec<u64>,
    pub bio: String,
    pub prefs: Prefs,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub zip: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prefs {
    pub theme: String,
    pub lang: String,
}

/// users_payload() of bench/python/payload.py.
pub fn python_payload() -> Payload {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../python");
    let out = std::process::Command::new("python3")
        .args(["-c", "import json, payload; print(json.dumps(payload.users_payload()))"])
        .current_dir(dir)
        .output()
        .expect("python3 runs bench/python/payload.py");
    assert!(
        out.status.success(),
        "payload.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the payload matches the Payload struct")
}
