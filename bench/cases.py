"""The registry of benchmark cases that bench/run knows: each pairs a figure
with an anchor measured in the same process run, as the JSON-lines contract
of docs/performance.md says."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    id: str
    binary: str          # Google Benchmark executable under the build's bench/ folder
    figure: str          # benchmark name prefix of the measured side
    anchor: str          # benchmark name prefix of the anchor
    metric: str          # "cpu_time", "real_time", "items_per_second" or a user counter name
    unit: str
    target: float
    better: str          # "lower" or "higher"
    anchor_desc: str
    anchor_metric: str = ""  # when the anchor is another counter of the same run (H1)
    env: tuple = ()          # (name, value) pairs set for the binary's run (E2-*-openssl)


CASES = [
    Case("E1-1k", "codec_bench", "E1-1k/cachekit", "E1-1k/anchor", "cpu_time", "ns", 1.15, "lower",
         "raw LZ4_compress_default + LZ4_decompress_safe + 2x XXH3_64bits on the same 1 KiB"),
    Case("E1-14k", "codec_bench", "E1-14k/cachekit", "E1-14k/anchor", "cpu_time", "ns", 1.15, "lower",
         "raw LZ4_compress_default + LZ4_decompress_safe + 2x XXH3_64bits on the same 14 KiB"),
    Case("E1-1m", "codec_bench", "E1-1m/cachekit", "E1-1m/anchor", "cpu_time", "us", 1.15, "lower",
         "raw LZ4_compress_default + LZ4_decompress_safe + 2x XXH3_64bits on the same 1 MiB"),
    Case("E2-1k", "codec_bench", "E2-1k/cachekit", "E2-1k/anchor", "cpu_time", "ns", 1.15, "lower",
         "raw libsodium AES-256-GCM seal + open (precomputed key) on the same 1 KiB"),
    Case("E2-1m", "codec_bench", "E2-1m/cachekit", "E2-1m/anchor", "cpu_time", "us", 1.15, "lower",
         "raw libsodium AES-256-GCM seal + open (precomputed key) on the same 1 MiB"),
    # The OpenSSL provider (the path of CPUs without AES-NI/PCLMUL), forced for the whole run.
    Case("E2-1k-openssl", "codec_bench", "E2evp-1k/cachekit", "E2evp-1k/anchor", "cpu_time", "ns", 1.05, "lower",
         "raw OpenSSL EVP AES-256-GCM seal + open (keyed context, nonce set per message) on the same 1 KiB",
         env=(("CACHEKIT_AES_GCM_PROVIDER", "openssl"),)),
    Case("E2-1m-openssl", "codec_bench", "E2evp-1m/cachekit", "E2evp-1m/anchor", "cpu_time", "us", 1.05, "lower",
         "raw OpenSSL EVP AES-256-GCM seal + open (keyed context, nonce set per message) on the same 1 MiB",
         env=(("CACHEKIT_AES_GCM_PROVIDER", "openssl"),)),
    Case("B1", "l1_bench", "B1pair", "B1pair", "ns_l1", "ns", 0.7, "lower",
         "naive std::mutex + std::unordered_map + std::list LRU, copy-out, same keys and Zipf reads; "
         "alternating 50 ms slices, median of 21 pairs", anchor_metric="ns_naive"),
    Case("B2-read100", "l1_bench", "B2pair/l1/read100", "B2pair/l1/read100", "ops_2threads", "ops/s", 1.7, "higher",
         "the same L1 with 1 thread (100% reads) just before; ratio = 2 threads / 1, median of 9 pairs",
         anchor_metric="ops_1thread"),
    Case("B2-read75", "l1_bench", "B2pair/l1/read75", "B2pair/l1/read75", "ops_2threads", "ops/s", 1.0, "higher",
         "the same L1 with 1 thread (75% reads) just before; ratio = 2 threads / 1, median of 9 pairs",
         anchor_metric="ops_1thread"),
    Case("H1", "l1_bench", "H1", "H1", "hit_ratio_l1", "ratio", 1.0, "higher",
         "plain exact LRU at equal memory on the same Zipf trace", anchor_metric="hit_ratio_lru"),
    Case("B3", "cache/cache_bench", "B3/cachekit", "B3/anchor", "cpu_time", "ns", 1.2, "lower",
         "the raw L1 engine hit (cachekit::l1::L1Cache::get) of the same 100 B value"),
    Case("E3", "cache/cache_bench", "E3/encrypted", "E3/plain", "cpu_time", "ns", 0.0, "lower",
         "a plaintext L1 hit of the same 1 KiB value (report only)"),
    Case("B8c-100", "cache/cache_redis_bench", "B8c-100/cachekit", "B8c-100/anchor", "real_time", "us", 1.2, "lower",
         "raw hiredis GET of the same stored bytes on its own connection (L1 off)"),
    Case("B8c-14k", "cache/cache_redis_bench", "B8c-14k/cachekit", "B8c-14k/anchor", "real_time", "us", 1.2, "lower",
         "raw hiredis GET of the same stored bytes on its own connection (L1 off)"),
    Case("KR1", "cache/cache_redis_bench", "KR1/registry", "KR1/plain", "real_time", "us", 1.2, "lower",
         "the same put (100 B, L1 off) for a function not declared for the key registry: SET alone"),
    Case("C3-hit", "cache/coherence_bench", "C3hit/tracking", "C3hit/off", "cpu_time", "ns", 1.05, "lower",
         "the same L1 hit (100 B, C API) on a cache without coherence"),
    Case("C3-lag", "cache/coherence_bench", "C3lag", "C3lag", "lag_p99_us", "us", 0.0, "lower",
         "the raw SET's own round trip p99 in the same run (report only; target: lag p99 < 2000 us absolute)",
         anchor_metric="rtt_p99_us"),
    Case("B8-100", "redis/redis_bench", "B8-100/cachekit", "B8-100/anchor", "real_time", "us", 1.15, "lower",
         "raw hiredis GET of the same key (100 B) on its own connection"),
    Case("B8-14k", "redis/redis_bench", "B8-14k/cachekit", "B8-14k/anchor", "real_time", "us", 1.15, "lower",
         "raw hiredis GET of the same key (14 KiB) on its own connection"),
    Case("B8TLS-100", "redis/redis_tls_bench", "B8TLS-100/tls", "B8TLS-100/anchor", "real_time", "us", 1.15,
         "lower", "raw OpenSSL client GET (SSL_write, SSL_read into hiredis's reader) of the same key (100 B) on the same TLS server"),
    Case("B8TLS-14k", "redis/redis_tls_bench", "B8TLS-14k/tls", "B8TLS-14k/anchor", "real_time", "us", 1.15,
         "lower", "raw OpenSSL client GET (SSL_write, SSL_read into hiredis's reader) of the same key (14 KiB) on the same TLS server"),
    # What a reconnect costs over TLS (report only): a full handshake against plain TCP, and a
    # resumed one against the full one; resumed_share in the JSON says every connection resumed.
    Case("B8TLS-handshake", "redis/redis_tls_bench", "B8TLS-connect/full", "B8TLS-connect/plain", "real_time", "us",
         0.0, "lower", "TCP connect + PING + close on the same server's plain port"),
    Case("B8TLS-resume", "redis/redis_tls_bench", "B8TLS-connect/resumed", "B8TLS-connect/full", "real_time", "us",
         0.0, "lower", "the same connection with a full TLS handshake (TCP connect, handshake, PING, close)"),
    Case("C1", "cluster/cluster_bench", "C1/cachekit", "C1/anchor", "real_time", "us", 1.15, "lower",
         "raw hiredis GET of the same key (100 B) sent to the node that owns its slot, on its own connection"),
    Case("C2", "cluster/cluster_bench", "C2/spread", "C2/one-node", "items_per_second", "keys/s", 2.0, "higher",
         "get_many of 100 keys that all live on one node (one hash tag), through the same cluster backend; "
         "ratio = spread keys/s / one-node keys/s"),
    Case("C3-hit-cluster", "cluster/cluster_bench", "C3hit-cluster/tracking", "C3hit-cluster/off", "cpu_time", "ns",
         1.05, "lower", "the same L1 hit (100 B, C API) on a cache without coherence, on the same cluster"),
    Case("C3-lag-cluster", "cluster/cluster_bench", "C3lag-cluster", "C3lag-cluster", "lag_p99_us", "us", 0.0, "lower",
         "the raw SET's own round trip p99 to the key's primary in the same run (report only; target: lag p99 "
         "< 2000 us absolute)", anchor_metric="rtt_p99_us"),
    Case("B10", "redis/redis_bench", "B10/batch", "B10/sequential", "items_per_second", "keys/s", 10.0, "higher",
         "100 sequential Backend::get calls; ratio = batch keys/s / sequential keys/s"),
    # H2 (issue 18): report only; docs/performance.md says what the figures mean for admission.
    Case("H2-zipf", "h2_bench", "H2/zipf", "H2/zipf", "hit_ratio_l1", "ratio", 0.0, "higher",
         "exact LRU at equal memory on the same trace (Zipf 0.8)", anchor_metric="hit_ratio_lru"),
    Case("H2-zipf-tlfu", "h2_bench", "H2/zipf", "H2/zipf", "hit_ratio_wtinylfu", "ratio", 0.0, "higher",
         "exact LRU at equal memory (Zipf 0.8); the figure is the L1 with l1_admission = tinylfu",
         anchor_metric="hit_ratio_lru"),
    Case("H2-scan", "h2_bench", "H2/scan", "H2/scan", "hit_ratio_l1", "ratio", 0.0, "higher",
         "exact LRU at equal memory on the same trace (Zipf 0.8 with one-use scans)", anchor_metric="hit_ratio_lru"),
    Case("H2-scan-tlfu", "h2_bench", "H2/scan", "H2/scan", "hit_ratio_wtinylfu", "ratio", 0.0, "higher",
         "exact LRU at equal memory (Zipf 0.8 with one-use scans); the figure is the L1 with l1_admission = tinylfu",
         anchor_metric="hit_ratio_lru"),
    Case("H2-loop", "h2_bench", "H2/loop", "H2/loop", "hit_ratio_l1", "ratio", 0.0, "higher",
         "exact LRU at equal memory on the same trace (a loop 1.5x the budget)", anchor_metric="hit_ratio_lru"),
    Case("H2-loop-tlfu", "h2_bench", "H2/loop", "H2/loop", "hit_ratio_wtinylfu", "ratio", 0.0, "higher",
         "exact LRU at equal memory (a loop 1.5x the budget); the figure is the L1 with l1_admission = tinylfu",
         anchor_metric="hit_ratio_lru"),
]
