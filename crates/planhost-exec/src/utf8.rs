//! Streaming UTF-8 decoding that never splits a character across chunks.

/// Decodes a byte stream piecewise with the same result as `String::from_utf8_lossy` on the
/// whole stream: incomplete trailing sequences wait for the next piece.
#[derive(Debug, Default)]
pub(crate) struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Decodes `bytes`, holding back an incomplete character at the end.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> String {
        if self.pending.is_empty() {
            let (text, rest) = decode(bytes);
            self.pending.extend_from_slice(rest);
            return text;
        }
        let mut joined = std::mem::take(&mut self.pending);
        joined.extend_from_slice(bytes);
        let (text, rest) = decode(&joined);
        self.pending = rest.to_vec();
        text
    }

    /// Flushes what is held back at end of stream (an incomplete character becomes U+FFFD).
    pub(crate) fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&rest).into_owned()
    }
}

/// Decodes the longest prefix that cannot change with more input; returns the undecided rest.
fn decode(mut bytes: &[u8]) -> (String, &[u8]) {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return (out, &[]);
            }
            Err(e) => {
                let (valid, after) = bytes.split_at(e.valid_up_to());
                // `valid_up_to` guarantees this prefix is UTF-8, so the default never happens.
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        bytes = &after[n..];
                    }
                    None => return (out, after),
                }
            }
        }
    }
}

/// The length of the longest prefix of `bytes` that does not end inside an incomplete character.
pub(crate) fn complete_prefix_len(bytes: &[u8]) -> usize {
    // Find the last sequence start among the final four bytes and check it is complete.
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let at = len - back;
        let b = bytes[at];
        if is_continuation(b) {
            continue;
        }
        let need = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        return if back < need { at } else { len };
    }
    len
}

/// The smallest `n >= start` such that `bytes[n..]` does not begin inside a character.
pub(crate) fn ceil_char_boundary(bytes: &[u8], start: usize) -> usize {
    let mut i = start.min(bytes.len());
    let mut steps = 0;
    while i < bytes.len() && is_continuation(bytes[i]) && steps < 3 {
        i += 1;
        steps += 1;
    }
    i
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chunked(bytes: &[u8], cuts: &[usize]) -> (Vec<String>, String) {
        let mut dec = Utf8Stream::default();
        let mut pieces = Vec::new();
        let mut at = 0;
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        for cut in cuts.into_iter().chain([bytes.len()]) {
            pieces.push(dec.push(&bytes[at..cut]));
            at = cut;
        }
        pieces.push(dec.finish());
        let whole = pieces.concat();
        (pieces, whole)
    }

    #[test]
    fn split_euro_sign_is_emitted_whole() {
        let euro = "€".as_bytes();
        let (pieces, whole) = chunked(euro, &[1, 2]);
        assert_eq!(whole, "€");
        assert!(pieces.iter().all(|p| p.is_empty() || p == "€"));
    }

    #[test]
    fn invalid_bytes_become_replacement() {
        let (_, whole) = chunked(b"a\xffb\xe2\x82", &[2]);
        assert_eq!(whole, "a\u{FFFD}b\u{FFFD}");
    }

    proptest! {
        #[test]
        fn any_split_equals_lossy_whole(
            bytes in proptest::collection::vec(
                prop_oneof![any::<u8>(), Just(0xE2u8), Just(0x82u8), Just(0xACu8), Just(0xF0u8)],
                0..64,
            ),
            cuts in proptest::collection::vec(any::<usize>(), 0..6),
        ) {
            // A character split across pieces would decode as two U+FFFD and break equality.
            let (_, whole) = chunked(&bytes, &cuts);
            prop_assert_eq!(whole, String::from_utf8_lossy(&bytes).into_owned());
        }

        #[test]
        fn boundaries_never_cut_a_character(s in "\\PC{0,40}", n in 0usize..200) {
            let b = s.as_bytes();
            let n = n.min(b.len());
            let f = complete_prefix_len(&b[..n]);
            let c = ceil_char_boundary(b, n);
            prop_assert!(s.is_char_boundary(f) && s.is_char_boundary(c));
            prop_assert!(f <= n && n - f <= 3 && c >= n && c - n <= 3);
            // Nothing closer: no boundary strictly between f and n.
            prop_assert!((f + 1..n).all(|i| !s.is_char_boundary(i)));
        }
    }
}
