//! The expansion: the body moves into a closure (or an async block) that the
//! runtime in `libcachekit::__private` calls on a miss.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType, Type};

use crate::args::CachedArgs;
use crate::segments::segment_problem;

const SKIP_ATTR: &str = "skip";

pub fn expand(args: CachedArgs, mut func: ItemFn) -> syn::Result<TokenStream> {
    let sig = &func.sig;
    let ret_ty: Type = match &sig.output {
        ReturnType::Default => {
            return Err(syn::Error::new(
                sig.ident.span(),
                "#[cached] needs a return type: the value it caches (a function returning () has nothing to cache)",
            ))
        }
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    if let Type::ImplTrait(_) = ret_ty {
        return Err(syn::Error::new(
            ret_ty.span(),
            "#[cached] caches a concrete serde type, not `impl Trait`",
        ));
    }
    let operation = operation_of(&args, &sig.ident)?;
    let key_tuple = key_arguments(&args, &mut func)?;

    let sig = &func.sig;
    let (mode, value_ty) = match result_ok_type(&ret_ty) {
        Some(ok) => (quote!(::libcachekit::__private::OkOnly), ok),
        None => (quote!(::libcachekit::__private::Plain), ret_ty.clone()),
    };
    let assert_value = quote_spanned! {ret_ty.span()=>
        ::libcachekit::__private::assert_cacheable::<#value_ty>();
    };
    let ns = &args.namespace;
    let ttl = match &args.ttl {
        Some(secs) => quote!(::core::option::Option::Some(::core::time::Duration::from_secs(#secs))),
        None => quote!(::core::option::Option::None),
    };
    let cache = match &args.cache {
        Some(expr) => quote_spanned! {expr.span()=> {
            let __ck_handle: &::libcachekit::Cache = #expr;
            ::core::option::Option::Some(__ck_handle)
        }},
        None => quote!(::libcachekit::__private::default_cache()),
    };
    let block = &func.block;
    let call = if sig.asyncness.is_some() {
        quote! {
            ::libcachekit::__private::cached_async::<#mode, #ret_ty, _>(
                __ck_cache, #ns, __ck_key, #ttl,
                async move { let __ck_value: #ret_ty = #block; __ck_value },
            ).await
        }
    } else {
        quote! {
            ::libcachekit::__private::cached_sync::<#mode, #ret_ty, _>(
                __ck_cache, #ns, __ck_key, #ttl,
                move || -> #ret_ty #block,
            )
        }
    };
    let attrs = &func.attrs;
    let vis = &func.vis;
    Ok(quote! {
        #(#attrs)*
        #vis #sig {
            #assert_value
            let __ck_cache: ::core::option::Option<&::libcachekit::Cache> = #cache;
            let __ck_key = ::libcachekit::__private::key(#ns, #operation, &#key_tuple);
            #call
        }
    })
}

/// The operation literal: the option, else the function's name when it is a
/// valid segment.
fn operation_of(args: &CachedArgs, name: &Ident) -> syn::Result<syn::LitStr> {
    if let Some(op) = &args.operation {
        return Ok(op.clone());
    }
    let name_str = name.to_string();
    let name_str = name_str.strip_prefix("r#").unwrap_or(&name_str);
    if let Some(why) = segment_problem(name_str) {
        return Err(syn::Error::new(
            name.span(),
            format!("the function name {name_str:?} is not a valid operation segment ({why}): give one with `operation = \"...\"`"),
        ));
    }
    Ok(syn::LitStr::new(name_str, name.span()))
}

/// The tuple of references the key hashes: `key = EXPR`, else every
/// parameter not skipped, in order. Removes the `#[skip]` parameter attributes.
fn key_arguments(args: &CachedArgs, func: &mut ItemFn) -> syn::Result<TokenStream> {
    let mut skipped: Vec<String> = args.skip.iter().map(|i| i.to_string()).collect();
    let mut used = vec![false; skipped.len()];
    let mut parts = Vec::new();
    let mut receiver_span = None;
    for input in func.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                if let Some(i) = skipped.iter().position(|s| s == "self") {
                    used[i] = true;
                } else {
                    receiver_span = Some(r.span());
                }
            }
            FnArg::Typed(pt) => {
                let before = pt.attrs.len();
                pt.attrs.retain(|a| !a.path().is_ident(SKIP_ATTR));
                let attr_skip = pt.attrs.len() != before;
                let ident = match &*pt.pat {
                    Pat::Ident(p) => Some(p.ident.clone()),
                    _ => None,
                };
                let listed = ident.as_ref().and_then(|id| skipped.iter().position(|s| id == s));
                if let Some(i) = listed {
                    used[i] = true;
                }
                if attr_skip || listed.is_some() || args.key.is_some() {
                    continue;
                }
                let Some(ident) = ident else {
                    return Err(syn::Error::new(
                        pt.pat.span(),
                        "#[cached] keys on parameters by name: bind this pattern to a name, skip it (#[skip]) or give `key = ...`",
                    ));
                };
                let ty_span = pt.ty.span();
                parts.push(quote_spanned! {ty_span=> ::libcachekit::__private::key_arg(&#ident)});
            }
        }
    }
    if let Some(i) = used.iter().position(|u| !u) {
        let name = skipped.swap_remove(i);
        return Err(syn::Error::new(
            args.skip[i].span(),
            format!("`skip` names `{name}`, which is not a parameter"),
        ));
    }
    if let Some(expr) = &args.key {
        return Ok(quote_spanned! {expr.span()=> (#expr)});
    }
    if let Some(span) = receiver_span {
        return Err(syn::Error::new(
            span,
            "#[cached] on a method: say whether `self` is part of the key: `skip = [self]`, or `key = (...)`",
        ));
    }
    Ok(if parts.is_empty() {
        quote!([(); 0])
    } else {
        quote!((#(#parts,)*))
    })
}

/// `T` when the return type is `Result<T, E>` (or an alias `Result<T>`).
fn result_ok_type(ty: &Type) -> Option<Type> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(ab) = &last.arguments else {
        return None;
    };
    match ab.args.first()? {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    }
}
