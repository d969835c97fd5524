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
]
