//! The public decoder (`decode_value`) against hostile documents (issue 25):
//! every decode-bounds.json vector, then a deterministic mutation run seeded
//! with them (bytes flipped, cut, repeated, headers widened). Each input is
//! decoded as `Value` and as a few typed shapes, on the test harness's own
//! 2 MiB thread; none may panic, overflow the stack or allocate past what the
//! input can back (the run would abort), nor accept a reject vector.
mod support;
#[path = "../examples/harness/tagged_json.rs"]
#[allow(dead_code)]
mod tagged_json;

use libcachekit::{decode_value, Bytes, Value};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use support::vectors::{decode_bounds, name, rows};
use tagged_json::hex_decode;

/// input = repeat_hex x count + suffix_hex (the file's construction rule).
fn construct(row: &Json) -> Vec<u8> {
    let c = &row["construction"];
    let repeat = hex_decode(c["repeat_hex"].as_str().unwrap_or("")).unwrap();
    let suffix = hex_decode(c["suffix_hex"].as_str().unwrap_or("")).unwrap();
    let count = c["count"].as_u64().unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(repeat.len() * count + suffix.len());
    for _ in 0..count {
        out.extend_from_slice(&repeat);
    }
    out.extend_from_slice(&suffix);
    out
}

/// Decodes `input` every way a caller might; true when the `Value` read accepted it.
fn decode_all(input: &[u8]) -> bool {
    let accepted = decode_value::<Value>(input).is_ok();
    let _ = decode_value::<Vec<Value>>(input);
    let _ = decode_value::<BTreeMap<String, Value>>(input);
    let _ = decode_value::<Vec<String>>(input);
    let _ = decode_value::<Bytes>(input);
    let _ = decode_value::<(i64, String, Vec<u8>)>(input);
    accepted
}

/// xorshift64*: the same mutations on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

// Header bytes that declare the largest counts and lengths.
const WIDE: &[u8] = &[0xdd, 0xdf, 0xdb, 0xc6, 0xc9, 0xdc, 0xde, 0xda, 0xc5, 0xc8];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(5) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 if !b.is_empty() => b.truncate(rng.below(b.len())),
            2 => {
                let i = rng.below(b.len() + 1);
                b.insert(i, WIDE[rng.below(WIDE.len())]);
                for _ in 0..4 {
                    b.insert(i + 1, 0xff);
                }
            }
            3 if !b.is_empty() => {
                let i = rng.below(b.len());
                let n = 1 + rng.below(16.min(b.len() - i));
                let piece = b[i..i + n].to_vec();
                b.splice(i..i, piece);
            }
            _ => b.push(rng.next() as u8),
        }
    }
    b
}

#[test]
fn decode_bounds_vectors_and_their_mutations() {
    let Some(file) = decode_bounds() else {
        return;
    };
    let mut seeds = Vec::new();
    for row in rows(&file, "reject_vectors") {
        let input = construct(row);
        assert!(
            !decode_all(&input),
            "decode-bounds.json:{}: a reject vector was accepted",
            name(row)
        );
        println!("ok decode-bounds.json:{} (rejected)", name(row));
        seeds.push(input);
    }
    for row in rows(&file, "accept_vectors") {
        let input = construct(row);
        assert!(
            decode_all(&input),
            "decode-bounds.json:{}: an accept vector was refused",
            name(row)
        );
        println!("ok decode-bounds.json:{} (accepted)", name(row));
        seeds.push(input);
    }
    // The five bytes that made Go's decoder ask for 2^32 slots.
    seeds.push(vec![0xdd, 0xff, 0xff, 0xff, 0xff]);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut accepted = 0usize;
    const ROUNDS: usize = 200;
    for seed in &seeds {
        for _ in 0..ROUNDS {
            let input = mutate(&mut rng, seed);
            if decode_all(&input) {
                accepted += 1;
            }
        }
    }
    println!(
        "decode fuzz: {} seeds x {ROUNDS} mutations decoded 6 ways, {accepted} accepted as Value, no panic",
        seeds.len()
    );
}
