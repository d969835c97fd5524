//! `Error`: one variant per C status (cachekit_status), each carrying the
//! message of the same C call (its `cachekit_error`).
use core::ffi::CStr;
use libcachekit_sys as sys;

macro_rules! statuses {
    ($($(#[$doc:meta])* $variant:ident = $code:ident;)*) => {
        /// A failure of a libcachekit call. The variant is the C status; its name
        /// (`name()`) is the stable name the C library and `cachekit codec` use,
        /// and `message()` the text of that same call.
        #[non_exhaustive]
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Error {
            $($(#[$doc])* $variant { message: String },)*
            /// A status this crate does not know (a newer library).
            Unknown { code: i32, message: String },
        }

        impl Error {
            /// Build the error of a status code and its message.
            pub fn from_code(code: i32, message: impl Into<String>) -> Error {
                let message = message.into();
                match code {
                    $(sys::$code => Error::$variant { message },)*
                    _ => Error::Unknown { code, message },
                }
            }

            /// The C status code (negative).
            pub fn code(&self) -> i32 {
                match self {
                    $(Error::$variant { .. } => sys::$code,)*
                    Error::Unknown { code, .. } => *code,
                }
            }

            /// The stable name, e.g. "InvalidSegment" (the C library's
            /// cachekit_error_name).
            pub fn name(&self) -> &'static str {
                match self {
                    $(Error::$variant { .. } => stringify!($variant),)*
                    Error::Unknown { .. } => "Unknown",
                }
            }

            /// The message of the call that failed ("" when it had none).
            pub fn message(&self) -> &str {
                match self {
                    $(Error::$variant { message })|* => message,
                    Error::Unknown { message, .. } => message,
                }
            }
        }
    };
}

statuses! {
    /// A miss, where a call reports it as an error (lookups return `None` instead).
    NotFound = CACHEKIT_ENOTFOUND;
    InvalidArgument = CACHEKIT_EINVAL;
    OutOfMemory = CACHEKIT_ENOMEM;
    /// A stored entry failed its checks.
    Corrupt = CACHEKIT_ECORRUPT;
    InputTooLarge = CACHEKIT_ETOOBIG;
    BackendError = CACHEKIT_EBACKEND;
    Timeout = CACHEKIT_ETIMEOUT;
    /// A loader failed (another caller's, when this caller waited on it).
    UserError = CACHEKIT_EUSER;
    DeserializationFailed = CACHEKIT_EDESERIALIZE;
    DecompressionBomb = CACHEKIT_EBOMB;
    DecompressionFailed = CACHEKIT_EDECOMPRESS;
    ChecksumMismatch = CACHEKIT_ECHECKSUM;
    SizeValidationFailed = CACHEKIT_ESIZE;
    DepthExceeded = CACHEKIT_EDEPTH;
    Overclaim = CACHEKIT_EOVERCLAIM;
    Truncated = CACHEKIT_ETRUNCATED;
    TrailingBytes = CACHEKIT_ETRAILING;
    UnsupportedType = CACHEKIT_EUNSUPPORTED;
    InvalidSegment = CACHEKIT_ESEGMENT;
    InvalidKey = CACHEKIT_EKEY;
    InvalidCiphertext = CACHEKIT_ECIPHERTEXT;
    AuthenticationFailed = CACHEKIT_EAUTH;
    KeyNotFound = CACHEKIT_EKEYNOTFOUND;
    InvalidFrame = CACHEKIT_EFRAME;
    CryptoUnavailable = CACHEKIT_ECRYPTO_UNAVAILABLE;
    NonceExhausted = CACHEKIT_ENONCE;
    Internal = CACHEKIT_EINTERNAL;
    Busy = CACHEKIT_EBUSY;
    Deadlock = CACHEKIT_EDEADLOCK;
    CircuitOpen = CACHEKIT_ECIRCUIT_OPEN;
}

impl Error {
    /// The error a C call wrote into its `cachekit_error`.
    ///
    /// # Safety
    /// `err` points to a slot whose `code` and `message` up to a NUL are
    /// initialised (the bytes after the NUL may not be: only raw pointers
    /// are used, no reference to the whole struct).
    pub(crate) unsafe fn from_c(err: *const sys::cachekit_error) -> Error {
        let code = core::ptr::addr_of!((*err).code).read();
        let message = CStr::from_ptr(core::ptr::addr_of!((*err).message) as *const core::ffi::c_char);
        Error::from_code(code, message.to_string_lossy())
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            message: message.into(),
        }
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.message().is_empty() {
            write!(f, "{}", self.name())
        } else {
            write!(f, "{}: {}", self.name(), self.message())
        }
    }
}

impl std::error::Error for Error {}
