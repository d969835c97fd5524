//! What the expansion knows at compile time about one `#[cached]` function:
//! its namespace and operation, also as C strings, so a call copies neither.
use core::ffi::CStr;

pub struct Site {
    pub(crate) ns: &'static str,
    pub(crate) op: &'static str,
    pub(crate) ns_c: &'static CStr,
    pub(crate) op_c: &'static CStr,
}

impl Site {
    /// `ns_nul` and `op_nul` are `ns` and `op` with a NUL appended (the
    /// macro writes both; the segment rule keeps NUL out of them).
    pub const fn new(ns: &'static str, op: &'static str, ns_nul: &'static [u8], op_nul: &'static [u8]) -> Site {
        Site {
            ns,
            op,
            ns_c: c_str(ns_nul),
            op_c: c_str(op_nul),
        }
    }
}

const fn c_str(bytes: &'static [u8]) -> &'static CStr {
    match CStr::from_bytes_with_nul(bytes) {
        Ok(c) => c,
        Err(_) => panic!("a #[cached] segment is not one NUL-terminated string"),
    }
}
