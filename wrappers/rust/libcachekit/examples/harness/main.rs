//! The wrapper harness (shared/spec/wrapper-harness.md): JSON lines on
//! standard input, answered through the crate's public API (typed key builder
//! and value serializer). Run: `cargo run -q --release --example harness`.
mod tagged_json;

use libcachekit::codec::{envelope_unwrap, Keyring};
use libcachekit::{decode_value, encode_value, interop_key_raw, interop_key_with_canonical, Error, Value};
use serde_json::{json, Map, Value as Json};
use std::io::{BufRead, Write};
use tagged_json::{from_tagged, hex_decode, hex_encode, to_tagged};

/// A failure to answer: a protocol error (BadRequest) or the library's.
enum Failure {
    BadRequest(String),
    Lib(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Lib(e)
    }
}

fn field<'a>(req: &'a Map<String, Json>, name: &str) -> Result<&'a Json, Failure> {
    req.get(name)
        .ok_or_else(|| Failure::BadRequest(format!("missing field {name}")))
}

fn string<'a>(req: &'a Map<String, Json>, name: &str) -> Result<&'a str, Failure> {
    field(req, name)?
        .as_str()
        .ok_or_else(|| Failure::BadRequest(format!("{name} must be a string")))
}

fn hex(req: &Map<String, Json>, name: &str) -> Result<Vec<u8>, Failure> {
    hex_decode(string(req, name)?).map_err(|_| Failure::BadRequest(format!("{name} must be lowercase hex")))
}

fn answer(req: &Map<String, Json>) -> Result<Map<String, Json>, Failure> {
    let mut out = Map::new();
    match string(req, "op")? {
        "key.interop.typed" => {
            let args = from_tagged(field(req, "args_json")?)?;
            if !matches!(args, Value::Array(_)) {
                return Err(Failure::BadRequest("args_json must be a JSON array".into()));
            }
            let (key, _) = interop_key_with_canonical(string(req, "namespace")?, string(req, "operation")?, &args)?;
            out.insert("key".into(), json!(key));
        }
        "value.encode" => {
            let value = from_tagged(field(req, "value_json")?)?;
            out.insert("data".into(), json!(hex_encode(&encode_value(&value)?)));
        }
        "value.decode" => {
            let value: Value = decode_value(&hex(req, "data")?)?;
            out.insert("value_json".into(), to_tagged(&value));
        }
        "key.interop" => {
            let (key, canonical) = interop_key_raw(
                string(req, "namespace")?,
                string(req, "operation")?,
                &hex(req, "args")?,
                true,
            )?;
            out.insert("key".into(), json!(key));
            out.insert("canonical".into(), json!(hex_encode(&canonical)));
        }
        "envelope.unwrap" => {
            let (data, format) = envelope_unwrap(&hex(req, "envelope")?)?;
            out.insert("data".into(), json!(hex_encode(&data)));
            out.insert("format".into(), json!(format));
        }
        "crypto.decrypt" => {
            if req.contains_key("key") {
                return Err(Failure::BadRequest(
                    "this harness decrypts with master_key (+ previous_keys), not a derived key".into(),
                ));
            }
            let previous: Vec<String> = match req.get("previous_keys") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(items)) => items
                    .iter()
                    .map(|k| {
                        k.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| Failure::BadRequest("previous_keys holds strings".into()))
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(Failure::BadRequest("previous_keys must be a list".into())),
            };
            let previous: Vec<&str> = previous.iter().map(String::as_str).collect();
            let ring = Keyring::new(string(req, "master_key")?, &previous)?;
            let fingerprint = match req.get("fingerprint") {
                None | Some(Json::Null) => None,
                Some(_) => {
                    let fp = hex(req, "fingerprint")?;
                    Some(
                        <[u8; 16]>::try_from(fp.as_slice())
                            .map_err(|_| Failure::BadRequest("fingerprint must be 16 bytes".into()))?,
                    )
                }
            };
            let tenant = req.get("tenant").and_then(Json::as_str);
            let opened = ring.decrypt(
                tenant,
                fingerprint.as_ref(),
                &hex(req, "aad")?,
                &hex(req, "ciphertext")?,
            )?;
            out.insert("plaintext".into(), json!(hex_encode(&opened.plaintext)));
            out.insert("key_index".into(), json!(opened.key_index));
        }
        other => return Err(Failure::BadRequest(format!("unknown op {other}"))),
    }
    Ok(out)
}

fn respond(line: &str) -> Json {
    let req = match serde_json::from_str::<Json>(line) {
        Ok(Json::Object(map)) => map,
        Ok(_) => return json!({"ok": false, "error": "BadRequest", "message": "a request is a JSON object"}),
        Err(e) => return json!({"ok": false, "error": "BadRequest", "message": format!("bad JSON: {e}")}),
    };
    let mut resp = match answer(&req) {
        Ok(mut fields) => {
            fields.insert("ok".into(), json!(true));
            fields
        }
        Err(Failure::BadRequest(message)) => json!({"ok": false, "error": "BadRequest", "message": message})
            .as_object()
            .unwrap()
            .clone(),
        Err(Failure::Lib(e)) => json!({"ok": false, "error": e.name(), "message": e.message()})
            .as_object()
            .unwrap()
            .clone(),
    };
    if let Some(id) = req.get("id") {
        resp.insert("id".into(), id.clone());
    }
    Json::Object(resp)
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        // Never crash: a panic answering one line is reported as Internal.
        let resp = std::panic::catch_unwind(|| respond(&line)).unwrap_or_else(
            |_| json!({"ok": false, "error": "Internal", "message": "the harness panicked on this line"}),
        );
        if writeln!(stdout, "{resp}").and_then(|_| stdout.flush()).is_err() {
            break;
        }
    }
}
