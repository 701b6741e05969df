//! Finding one byte in a short slice: a tab in a SAM field, the NUL that ends an aux string.
//! These are a few to a few dozen bytes long, too short for memchr's set-up to pay off (memchr
//! was 20 % of SAM parsing), and a byte loop takes a branch a byte; so eight bytes at a time.

/// The first `needle` in `haystack`.
///
/// The zero-byte test of "Bit Twiddling Hacks" on the bytes XOR `needle`: a borrow can only mark
/// bytes above the first zero, so the lowest marked byte is the first match.
#[inline]
pub fn first_byte(haystack: &[u8], needle: u8) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let pattern = ONES * needle as u64;
    let (words, _) = haystack.as_chunks::<8>();
    for (i, w) in words.iter().enumerate() {
        let x = u64::from_le_bytes(*w) ^ pattern;
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(i * 8 + (zero.trailing_zeros() / 8) as usize);
        }
    }
    let tail = words.len() * 8;
    haystack[tail..].iter().position(|&b| b == needle).map(|n| tail + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_match_at_any_offset() {
        for needle in [b'\t', 0, 0x80, 0xff] {
            for len in 0..40 {
                for at in 0..=len {
                    // Bytes one bit away from the needle (borrows and carries), and a second
                    // match after the first.
                    let mut s: Vec<u8> = (0..len)
                        .map(|i| {
                            [needle ^ 1, needle ^ 2, needle ^ 0x80, needle.wrapping_add(1)][i % 4]
                        })
                        .collect();
                    if at < len {
                        s[at] = needle;
                        if at + 3 < len {
                            s[at + 3] = needle;
                        }
                    }
                    let want = s.iter().position(|&b| b == needle);
                    assert_eq!(first_byte(&s, needle), want, "needle {needle} len {len} at {at}");
                }
            }
        }
    }
}
