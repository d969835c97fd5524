//! The core's failure events (docs/operations.md, "Seeing failures") as `log`
//! records: target `cachekit::<event>` (so a `cachekit` filter takes them
//! all), `Warn` for backend_down, breaker_open and coherence_suspended, `Info`
//! for backend_recovered and coherence_resumed. Installed once, by the first
//! `CacheBuilder::build`.
use crate::sys;
use core::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Once;

static INSTALL: Once = Once::new();

pub(crate) fn install() {
    // SAFETY: a static function; the core keeps only the pointer.
    INSTALL.call_once(|| unsafe { sys::cachekit_set_log_handler(Some(on_event), core::ptr::null_mut()) });
}

// Called on any thread (a coherence feed's too). A panic (in a logger) must
// not unwind into C: it is caught and dropped.
unsafe extern "C" fn on_event(level: c_int, event: *const c_char, message: *const c_char, _: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the core passes NUL-terminated strings valid for this call.
        let (event, message) = unsafe { (CStr::from_ptr(event), CStr::from_ptr(message)) };
        let level = if level >= sys::CACHEKIT_LOG_WARNING {
            log::Level::Warn
        } else {
            log::Level::Info
        };
        let target = format!("cachekit::{}", event.to_string_lossy());
        log::log!(target: &target, level, "{}", message.to_string_lossy());
    });
}
