//! `#[cached]`: memoise a function's return value in a libcachekit cache.
//!
//! Use it through the `libcachekit` crate (`libcachekit::cached`), whose
//! `__private` module holds the runtime the expansion calls. See docs/rust.md,
//! "The #[cached] attribute and async".
use proc_macro::TokenStream;

mod args;
mod expand;
mod segments;

/// Cache the function's value under the interop key
/// `{namespace}:{operation}:{hash of the arguments}`.
///
/// Options: `namespace = "..."` (required), `operation = "..."` (default:
/// the function's name), `ttl = SECONDS`, `cache = EXPR` (an expression
/// yielding `&libcachekit::Cache`; default: a process-wide cache built from
/// the environment), `skip = [self, conn]` (or `#[skip]` on a parameter)
/// and `key = EXPR` (the key's arguments, replacing the parameters).
#[proc_macro_attribute]
pub fn cached(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(attr as args::CachedArgs);
    let func = syn::parse_macro_input!(item as syn::ItemFn);
    expand::expand(args, func)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
