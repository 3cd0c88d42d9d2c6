//! Content-addressed plan bodies: identical bytes are stored once; a body is stored raw,
//! deflated, or as a splice against an earlier body, whichever is smallest. Every read is
//! verified against its SHA-256.

use std::io::{Read, Write};

use rusqlite::{OptionalExtension, Transaction, params};

use crate::Result;
use crate::error::corrupt;

/// Longest chain of deltas before a body is stored whole: bounds the work of one read.
const MAX_DEPTH: i64 = 16;
/// Delta format: a splice (common prefix and suffix kept, the middle stored).
const DELTA_V1: u8 = 1;
/// Delta format: a zstd frame compressed with the base body as its dictionary (zstd's
/// `--patch-from`), so edits anywhere in the plan, several in one revision, cost what they change.
const DELTA_ZSTD: u8 = 2;
/// zstd's level for plan deltas: plans are small and written once per revision.
const ZSTD_LEVEL: i32 = 19;

/// How a stored body was encoded, and its stored size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// `raw`, `deflate` or `delta`.
    pub encoding: &'static str,
    /// Bytes stored in the row (0 when the body already existed).
    pub stored_bytes: usize,
}

fn deflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    encoder.finish()
}

fn inflate(bytes: &[u8], limit: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(limit);
    flate2::read::DeflateDecoder::new(bytes)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// A splice: keep `prefix` bytes and `suffix` bytes of the base, put `middle` between them.
fn splice_delta(base: &[u8], new: &[u8]) -> std::io::Result<Vec<u8>> {
    let prefix = base.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = base.len().min(new.len()) - prefix;
    let suffix = base
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let middle = &new[prefix..new.len() - suffix];
    let mut out = Vec::with_capacity(middle.len() + 32);
    out.push(DELTA_V1);
    out.extend_from_slice(&(prefix as u64).to_le_bytes());
    out.extend_from_slice(&(suffix as u64).to_le_bytes());
    let packed = deflate(middle)?;
    if packed.len() < middle.len() {
        out.push(1);
        out.extend_from_slice(&packed);
    } else {
        out.push(0);
        out.extend_from_slice(middle);
    }
    Ok(out)
}

/// `new` as a zstd frame whose dictionary is `base`.
fn zstd_delta(base: &[u8], new: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut compressor = zstd::bulk::Compressor::with_dictionary(ZSTD_LEVEL, base)?;
    let frame = compressor.compress(new)?;
    let mut out = Vec::with_capacity(frame.len() + 1);
    out.push(DELTA_ZSTD);
    out.extend_from_slice(&frame);
    Ok(out)
}

fn apply_delta(base: &[u8], delta: &[u8], size: usize) -> Option<Vec<u8>> {
    let (&version, rest) = delta.split_first()?;
    if version == DELTA_ZSTD {
        let mut decompressor = zstd::bulk::Decompressor::with_dictionary(base).ok()?;
        // The capacity bounds what a corrupt frame can make us allocate.
        return decompressor.decompress(rest, size).ok();
    }
    if version != DELTA_V1 || rest.len() < 17 {
        return None;
    }
    let prefix = usize::try_from(u64::from_le_bytes(rest[..8].try_into().ok()?)).ok()?;
    let suffix = usize::try_from(u64::from_le_bytes(rest[8..16].try_into().ok()?)).ok()?;
    let middle = match rest[16] {
        0 => rest[17..].to_vec(),
        1 => inflate(&rest[17..], size).ok()?,
        _ => return None,
    };
    if prefix.checked_add(suffix)? > base.len() {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&base[..prefix]);
    out.extend_from_slice(&middle);
    out.extend_from_slice(&base[base.len() - suffix..]);
    Some(out)
}

/// Stores `bytes` (if not stored yet), trying a delta against `base_sha256`.
pub(crate) fn put(
    tx: &Transaction<'_>,
    bytes: &[u8],
    base_sha256: Option<&str>,
) -> Result<(String, Stored)> {
    let sha = planhost_core::sha256_hex(bytes);
    let exists: Option<i64> = tx
        .prepare_cached("SELECT 1 FROM plan_blobs WHERE sha256 = ?1")?
        .query_row([&sha], |r| r.get(0))
        .optional()?;
    if exists.is_some() {
        return Ok((
            sha,
            Stored {
                encoding: "raw",
                stored_bytes: 0,
            },
        ));
    }
    let io = |e: std::io::Error| corrupt("plan_blobs", e);
    let mut best: (&'static str, Vec<u8>, Option<String>, i64) = ("raw", bytes.to_vec(), None, 0);
    let packed = deflate(bytes).map_err(io)?;
    if packed.len() < best.1.len() {
        best = ("deflate", packed, None, 0);
    }
    if let Some(base) = base_sha256 {
        let depth: Option<i64> = tx
            .prepare_cached("SELECT depth FROM plan_blobs WHERE sha256 = ?1")?
            .query_row([base], |r| r.get(0))
            .optional()?;
        if let Some(depth) = depth.filter(|d| *d < MAX_DEPTH) {
            let base_bytes = get(tx, base)?;
            for delta in [
                splice_delta(&base_bytes, bytes).map_err(io)?,
                zstd_delta(&base_bytes, bytes).map_err(io)?,
            ] {
                if delta.len() < best.1.len() {
                    best = ("delta", delta, Some(base.to_owned()), depth + 1);
                }
            }
        }
    }
    let size = i64::try_from(bytes.len()).map_err(|e| corrupt("plan_blobs", e))?;
    tx.prepare_cached(
        "INSERT INTO plan_blobs (sha256, size_bytes, encoding, base_sha256, depth, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![sha, size, best.0, best.2, best.3, best.1])?;
    Ok((
        sha,
        Stored {
            encoding: best.0,
            stored_bytes: best.1.len(),
        },
    ))
}

/// Reads a body back, following deltas, and checks its digest. A chain longer than any this
/// store writes (a corrupt or cyclic one) and an impossible size are corruption, reported, never
/// a crash.
pub(crate) fn get(tx: &Transaction<'_>, sha256: &str) -> Result<Vec<u8>> {
    // Walk down to the whole body, remembering the deltas on the way.
    let mut chain: Vec<(String, usize, Vec<u8>)> = Vec::new();
    let mut current = sha256.to_owned();
    let mut bytes = loop {
        if chain.len() > MAX_DEPTH as usize {
            return Err(corrupt(
                "plan_blobs",
                format!("delta chain of {sha256} is too long or cyclic"),
            ));
        }
        let row: Option<(i64, String, Option<String>, Vec<u8>)> = tx
            .prepare_cached(
                "SELECT size_bytes, encoding, base_sha256, data FROM plan_blobs WHERE sha256 = ?1",
            )?
            .query_row([&current], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()?;
        let Some((size, encoding, base, data)) = row else {
            return Err(corrupt("plan_blobs", format!("missing body {current}")));
        };
        let size = usize::try_from(size)
            .ok()
            .filter(|s| *s <= planhost_core::MAX_PLAN_BYTES)
            .ok_or_else(|| {
                corrupt(
                    "plan_blobs",
                    format!("body {current} has an impossible size"),
                )
            })?;
        let whole = match (encoding.as_str(), base) {
            ("raw", None) => data,
            ("deflate", None) => inflate(&data, size).map_err(|e| corrupt("plan_blobs", e))?,
            ("delta", Some(base)) => {
                chain.push((current, size, data));
                current = base;
                continue;
            }
            (other, _) => return Err(corrupt("plan_blobs", format!("bad encoding {other}"))),
        };
        verify(&whole, size, &current)?;
        break whole;
    };
    // Then apply the deltas back up, verifying every level.
    while let Some((sha, size, delta)) = chain.pop() {
        bytes =
            apply_delta(&bytes, &delta, size).ok_or_else(|| corrupt("plan_blobs", "bad delta"))?;
        verify(&bytes, size, &sha)?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod delta_tests {
    use super::*;

    /// 50 KiB of varied prose, deterministic (seed 004's benchmark size).
    fn plan() -> Vec<u8> {
        let words = [
            "add", "the", "handler", "validate", "session", "cache", "retry", "queue",
        ];
        let mut state: u64 = 7;
        let mut out = String::new();
        let mut step = 1;
        while out.len() < 50 * 1024 {
            out.push_str(&format!("{step}. "));
            for _ in 0..12 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                out.push_str(words[(state >> 33) as usize % words.len()]);
                out.push(' ');
            }
            out.push('\n');
            step += 1;
        }
        out.into_bytes()
    }

    #[test]
    fn two_edits_far_apart_cost_what_they_change() {
        let base = plan();
        let mut new = base.clone();
        new.splice(100..100, b"(reviewed) ".iter().copied());
        let at = new.len() - 200;
        new.splice(at..at + 6, b"rework".iter().copied());
        let splice = splice_delta(&base, &new).unwrap();
        let zstd = zstd_delta(&base, &new).unwrap();
        // The splice stores everything between the two edits (deflated); the zstd delta only
        // the edits: well under seed 004's 10 % per revision.
        assert!(zstd.len() <= base.len() / 100, "{} bytes", zstd.len());
        assert!(
            splice.len() > 10 * zstd.len(),
            "{} vs {}",
            splice.len(),
            zstd.len()
        );
        assert_eq!(apply_delta(&base, &zstd, new.len()).unwrap(), new);
        assert_eq!(apply_delta(&base, &splice, new.len()).unwrap(), new);
        // A frame that claims more than the recorded size is refused, not allocated.
        assert_eq!(apply_delta(&base, &zstd, new.len() - 1), None);
    }
}

fn verify(bytes: &[u8], size: usize, sha256: &str) -> Result<()> {
    if bytes.len() != size || planhost_core::sha256_hex(bytes) != sha256 {
        return Err(corrupt(
            "plan_blobs",
            format!("body {sha256} does not match its digest"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cyclic_or_oversized_chain_is_corruption_not_a_crash() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::schema::SCHEMA_V1).unwrap();
        conn.execute_batch(crate::schema::SCHEMA_V2).unwrap();
        let tx = conn.transaction().unwrap();
        let (a, _) = put(&tx, b"first body, long enough to delta against", None).unwrap();
        let (b, _) = put(&tx, b"first body, long enough to delta against!", Some(&a)).unwrap();
        // Corrupt it by hand: A's base is B, B's base is A.
        tx.execute_batch("PRAGMA ignore_check_constraints = ON")
            .unwrap();
        tx.execute(
            "UPDATE plan_blobs SET encoding = 'delta', base_sha256 = ?2 WHERE sha256 = ?1",
            [&a, &b],
        )
        .unwrap();
        let err = get(&tx, &b).unwrap_err();
        assert_eq!(err.code().as_str(), "STORE_CORRUPT", "{err}");
        tx.execute(
            "UPDATE plan_blobs SET size_bytes = 1 << 40 WHERE sha256 = ?1",
            [&b],
        )
        .unwrap();
        assert_eq!(get(&tx, &b).unwrap_err().code().as_str(), "STORE_CORRUPT");
    }

    #[test]
    fn splice_round_trips_every_shape() {
        let cases: [(&[u8], &[u8]); 6] = [
            (b"abcdef", b"abXYZef"),
            (b"abcdef", b"abcdef"),
            (b"", b"new"),
            (b"old", b""),
            (b"aaaa", b"aaaaaa"),
            (b"aaaaaa", b"aaaa"),
        ];
        for (base, new) in cases {
            let delta = splice_delta(base, new).unwrap();
            assert_eq!(
                apply_delta(base, &delta, new.len()).as_deref(),
                Some(new),
                "{base:?} -> {new:?}"
            );
        }
    }
}
