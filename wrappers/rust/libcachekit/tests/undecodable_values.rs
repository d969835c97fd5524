//! A stored value that the caller's type cannot represent is a miss that
//! recomputes and rewrites, never an error that lasts until the TTL: for
//! `get_or_load` and for sync and async `#[cached]`. And the documents other
//! readers serve (an application ext type, a MessagePack timestamp) are
//! served as `Value` here too, without running the loader.
use libcachekit::{cached, decode_value, encode_value, interop_key, Cache, Timestamp, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// interop-mode.json `reader_ext_type`: fixext1, type 1, body 0x2a.
const EXT_TYPE: &[u8] = &[0xd4, 0x01, 0x2a];
/// A MessagePack timestamp (fixext4, type -1): one second after the epoch.
const TIMESTAMP: &[u8] = &[0xd6, 0xff, 0x00, 0x00, 0x00, 0x01];

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("an L1-only cache"))
}

fn never<T>() -> Result<T, String> {
    panic!("the loader ran for a value the reader can serve")
}

#[test]
fn get_or_load_serves_an_ext_type_and_a_timestamp_as_value() {
    let c = cache();
    c.set_bytes("undecodable", "undecodable:ext:1", EXT_TYPE, None).unwrap();
    let ext: Value = c.get_or_load("undecodable", "undecodable:ext:1", None, never).unwrap();
    assert_eq!(ext, Value::Ext(1, vec![0x2a]));

    c.set_bytes("undecodable", "undecodable:ts:1", TIMESTAMP, None).unwrap();
    let ts: Value = c.get_or_load("undecodable", "undecodable:ts:1", None, never).unwrap();
    let one = Timestamp {
        seconds: 1,
        nanoseconds: 0,
    };
    assert_eq!(ts, Value::Timestamp(one));
    let typed: Timestamp = c.get_or_load("undecodable", "undecodable:ts:1", None, never).unwrap();
    assert_eq!(typed, one);
}

#[test]
fn timestamp_ext_forms_decode_and_bad_ones_are_refused() {
    // The 8-byte form: 30 bits of nanoseconds (5) over 34 bits of seconds (7).
    let v: u64 = (5 << 34) | 7;
    let mut eight = vec![0xd7, 0xff];
    eight.extend(v.to_be_bytes());
    assert_eq!(
        decode_value::<Timestamp>(&eight).unwrap(),
        Timestamp {
            seconds: 7,
            nanoseconds: 5
        }
    );
    // The 12-byte form carries negative seconds.
    let mut twelve = vec![0xc7, 12, 0xff];
    twelve.extend(9u32.to_be_bytes());
    twelve.extend((-2i64).to_be_bytes());
    assert_eq!(
        decode_value::<Timestamp>(&twelve).unwrap(),
        Timestamp {
            seconds: -2,
            nanoseconds: 9
        }
    );
    // A timestamp body of 2 bytes, and nanoseconds past 1e9: errors with a message.
    for bad in [
        &[0xd5, 0xff, 0, 0][..],
        &[0xd7, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0][..],
    ] {
        let e = decode_value::<Value>(bad).unwrap_err();
        assert_eq!(e.name(), "DeserializationFailed");
        assert!(e.message().contains("timestamp"), "{e}");
    }
}

#[test]
fn ext_types_and_timestamps_are_read_but_not_written_as_values() {
    // The interop value profile has no ext types: the core refuses them, so a
    // revived Value::Ext or Value::Timestamp is not stored again as it came.
    for v in [
        Value::Ext(1, vec![0x2a]),
        Value::Timestamp(Timestamp {
            seconds: 1,
            nanoseconds: 0,
        }),
    ] {
        let e = encode_value(&v).unwrap_err();
        assert_eq!(e.name(), "UnsupportedType", "{v:?}: {e}");
    }
}

#[test]
fn get_or_load_recomputes_and_rewrites_a_value_of_another_type() {
    let c = cache();
    let key = "undecodable:u32:1";
    c.set_bytes("undecodable", key, EXT_TYPE, None).unwrap();
    let runs = AtomicUsize::new(0);
    let load = || {
        runs.fetch_add(1, Ordering::SeqCst);
        Ok::<u32, String>(7)
    };
    assert_eq!(c.get_or_load::<u32, _, _>("undecodable", key, None, load).unwrap(), 7);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Rewritten: the next call is a hit of the new value.
    assert_eq!(
        c.get_bytes("undecodable", key).unwrap().unwrap(),
        encode_value(&7u32).unwrap()
    );
    assert_eq!(c.get_or_load::<u32, _, _>("undecodable", key, None, load).unwrap(), 7);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The loader's own error still reaches the caller.
    c.set_bytes("undecodable", key, EXT_TYPE, None).unwrap();
    let failed = c.get_or_load::<u32, _, _>("undecodable", key, None, || Err::<u32, _>("no"));
    assert!(matches!(failed, Err(libcachekit::LoadError::Loader("no"))));
}

static SYNC_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "undecodable", operation = "sync_count", cache = cache())]
fn sync_count(id: u64) -> u32 {
    SYNC_RUNS.fetch_add(1, Ordering::SeqCst);
    id as u32 + 1
}

#[cached(namespace = "undecodable", operation = "sync_any", cache = cache())]
fn sync_any(id: u64) -> Value {
    assert_eq!(id, 0, "ran for a stored value the reader can serve");
    Value::Nil
}

#[test]
fn cached_sync_serves_an_ext_type_and_recomputes_another_type() {
    let any_key = interop_key("undecodable", "sync_any", &(1u64,)).unwrap();
    cache().set_bytes("undecodable", &any_key, EXT_TYPE, None).unwrap();
    assert_eq!(sync_any(1), Value::Ext(1, vec![0x2a]));

    let key = interop_key("undecodable", "sync_count", &(1u64,)).unwrap();
    cache().set_bytes("undecodable", &key, EXT_TYPE, None).unwrap();
    assert_eq!(sync_count(1), 2);
    assert_eq!(sync_count(1), 2);
    assert_eq!(SYNC_RUNS.load(Ordering::SeqCst), 1, "recomputed once, then a hit");
    assert_eq!(cache().get::<u32>("undecodable", &key).unwrap(), Some(2));
}

static ASYNC_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "undecodable", operation = "async_count", cache = cache())]
async fn async_count(id: u64) -> u32 {
    ASYNC_RUNS.fetch_add(1, Ordering::SeqCst);
    id as u32 + 1
}

#[cached(namespace = "undecodable", operation = "async_any", cache = cache())]
async fn async_any(id: u64) -> Value {
    assert_eq!(id, 0, "ran for a stored value the reader can serve");
    Value::Nil
}

#[tokio::test(flavor = "current_thread")]
async fn cached_async_serves_a_timestamp_and_recomputes_another_type() {
    let any_key = interop_key("undecodable", "async_any", &(1u64,)).unwrap();
    cache().set_bytes("undecodable", &any_key, TIMESTAMP, None).unwrap();
    assert_eq!(
        async_any(1).await,
        Value::Timestamp(Timestamp {
            seconds: 1,
            nanoseconds: 0
        })
    );

    let key = interop_key("undecodable", "async_count", &(1u64,)).unwrap();
    cache().set_bytes("undecodable", &key, TIMESTAMP, None).unwrap();
    assert_eq!(async_count(1).await, 2);
    assert_eq!(async_count(1).await, 2);
    assert_eq!(ASYNC_RUNS.load(Ordering::SeqCst), 1, "recomputed once, then a hit");
    assert_eq!(cache().get::<u32>("undecodable", &key).unwrap(), Some(2));
}
