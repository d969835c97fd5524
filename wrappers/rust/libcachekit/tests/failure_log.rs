//! Failures a user can see (issue 25): a cache on a refused port logs one
//! `Warn` record with target `cachekit::backend_down` naming the URL and the
//! cause, one `cachekit::breaker_open`, nothing more for many failing calls,
//! and `Cache::health` says the breaker is open, with the cause.
use libcachekit::{Cache, HealthState};
use std::net::TcpListener;
use std::sync::Mutex;

struct Recorder(Mutex<Vec<(String, log::Level, String)>>);

impl log::Log for Recorder {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        self.0
            .lock()
            .unwrap()
            .push((r.target().to_owned(), r.level(), r.args().to_string()));
    }
    fn flush(&self) {}
}

static RECORDER: Recorder = Recorder(Mutex::new(Vec::new()));

#[test]
fn refused_port_logs_once_and_health_shows_it() {
    log::set_logger(&RECORDER).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("redis://127.0.0.1:{port}");
    let cache = Cache::builder().backend_url(url.clone()).l1(false).build().unwrap();
    for _ in 0..200 {
        assert_eq!(cache.get::<String>("rslog", "k").unwrap(), None); // fail-open: a miss
    }
    let records = RECORDER.0.lock().unwrap().clone();
    let ours: Vec<_> = records.iter().filter(|r| r.0.starts_with("cachekit::")).collect();
    let down: Vec<_> = ours.iter().filter(|r| r.0 == "cachekit::backend_down").collect();
    assert_eq!(down.len(), 1, "{ours:?}");
    assert_eq!(down[0].1, log::Level::Warn);
    assert!(
        down[0].2.starts_with(&format!("{url}: ")) && down[0].2.contains("refused"),
        "{}",
        down[0].2
    );
    assert_eq!(
        ours.iter().filter(|r| r.0 == "cachekit::breaker_open").count(),
        1,
        "{ours:?}"
    );
    assert_eq!(ours.len(), 2, "200 failing calls: {ours:?}");

    let h = cache.health().unwrap();
    assert_eq!(h.state, HealthState::BreakerOpen);
    assert_eq!(h.backend, url);
    assert!(h.last_error.as_deref().unwrap_or("").contains("refused"), "{h:?}");
    assert!(h.last_error_at.is_some());
}
