//! The attribute's arguments: `#[cached(namespace = "users", ttl = 60, ...)]`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{bracketed, Expr, Ident, LitInt, LitStr, Token};

use crate::segments::{namespace_problem, segment_problem};

pub struct CachedArgs {
    pub namespace: LitStr,
    pub operation: Option<LitStr>,
    pub ttl: Option<LitInt>,
    pub cache: Option<Expr>,
    /// Parameter names (or `self`) left out of the key.
    pub skip: Vec<Ident>,
    pub key: Option<Expr>,
}

impl Parse for CachedArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut namespace = None;
        let mut operation = None;
        let mut ttl = None;
        let mut cache = None;
        let mut skip = Vec::new();
        let mut key = None;
        while !input.is_empty() {
            let name: Ident = if input.peek(Token![self]) {
                return Err(input.error("expected an option name (namespace, operation, ttl, cache, skip, key)"));
            } else {
                input.parse()?
            };
            input.parse::<Token![=]>()?;
            match name.to_string().as_str() {
                "namespace" => {
                    let lit: LitStr = input.parse()?;
                    if let Some(why) = namespace_problem(&lit.value()) {
                        return Err(syn::Error::new(lit.span(), format!("bad namespace {:?}: {why}; a namespace fully matches ^[a-z0-9][a-z0-9._-]{{0,63}}$ without \"..\"", lit.value())));
                    }
                    set_once(&mut namespace, lit, &name)?;
                }
                "operation" => {
                    let lit: LitStr = input.parse()?;
                    if let Some(why) = segment_problem(&lit.value()) {
                        return Err(syn::Error::new(lit.span(), format!("bad operation {:?}: {why}; an operation fully matches ^[a-z0-9][a-z0-9._-]{{0,63}}$ without \"..\"", lit.value())));
                    }
                    set_once(&mut operation, lit, &name)?;
                }
                "ttl" => {
                    let lit: LitInt = input.parse()?;
                    lit.base10_parse::<u64>()?;
                    set_once(&mut ttl, lit, &name)?;
                }
                "cache" => set_once(&mut cache, input.parse()?, &name)?,
                "key" => set_once(&mut key, input.parse()?, &name)?,
                "skip" => {
                    let content;
                    bracketed!(content in input);
                    let names = Punctuated::<Ident, Token![,]>::parse_terminated_with(&content, Ident::parse_any)?;
                    skip.extend(names);
                }
                other => {
                    return Err(syn::Error::new(
                        name.span(),
                        format!("unknown option `{other}` (expected namespace, operation, ttl, cache, skip, key)"),
                    ))
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        let namespace = namespace.ok_or_else(|| {
            syn::Error::new(
                Span::call_site(),
                "#[cached] needs `namespace = \"...\"` (the key's first segment)",
            )
        })?;
        Ok(CachedArgs {
            namespace,
            operation,
            ttl,
            cache,
            skip,
            key,
        })
    }
}

fn set_once<T>(slot: &mut Option<T>, value: T, name: &Ident) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(name.span(), format!("`{name}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}
