//! Stale-while-revalidate: the one caller handed the refresh claim reloads
//! inline (a synchronous API has no runtime of its own), and lookups report it.
use libcachekit::{interop_key, Cache};
use std::time::Duration;

fn swr_cache() -> Cache {
    // Stale after ttl x 0.1 (x 0.9..1.1 jitter): 0.22 s at most, expired after 2 s.
    Cache::builder()
        .l1_only()
        .swr(true, 0.1)
        .default_ttl(Duration::from_secs(2))
        .build()
        .unwrap()
}

#[test]
fn a_stale_hit_is_refreshed_by_its_claimant() {
    let cache = swr_cache();
    assert!(cache.swr());
    let key = interop_key("feed", "latest", &(1u64,)).unwrap();
    let v: u32 = cache.get_or_load("feed", &key, None, || Ok::<_, ()>(1)).unwrap();
    assert_eq!(v, 1);
    std::thread::sleep(Duration::from_millis(500));
    let v: u32 = cache.get_or_load("feed", &key, None, || Ok::<_, ()>(2)).unwrap();
    assert_eq!(v, 2, "the claimant reloads");
    assert_eq!(cache.get::<u32>("feed", &key).unwrap(), Some(2));
    let stats = cache.stats(None).unwrap();
    assert_eq!((stats.stale_served, stats.refreshes), (1, 1));
}

#[test]
fn lookups_report_the_claim_and_put_refresh_lands_it() {
    let cache = swr_cache();
    let key = interop_key("feed", "latest", &(2u64,)).unwrap();
    cache.set("feed", &key, &1u32, None).unwrap();
    let (_, fresh) = cache.get_bytes_with_info("feed", &key).unwrap().unwrap();
    assert_eq!((fresh.source, fresh.refresh_claim), (1, None));
    std::thread::sleep(Duration::from_millis(500));
    let (stale, info) = cache.get_bytes_with_info("feed", &key).unwrap().unwrap();
    assert_eq!(stale, [0x01]);
    let claim = info.refresh_claim.expect("the first stale lookup gets the claim");
    // Exactly one claimant per stale period.
    let (_, other) = cache.get_bytes_with_info("feed", &key).unwrap().unwrap();
    assert_eq!(other.refresh_claim, None);
    assert!(cache.put_refresh("feed", &key, &[0x02], None, claim).unwrap());
    assert_eq!(cache.get::<u32>("feed", &key).unwrap(), Some(2));
    // A claim lands at most once.
    assert!(!cache.put_refresh("feed", &key, &[0x03], None, claim).unwrap());
}
