//! Block compression methods told apart as `cram-size` tells them (samtools 1.24
//! `cram_size.c` `enum comp_expanded`, from htslib's `cram_expand_method`): the method byte and
//! what the stored data's first bytes say (gzip and bzip2 levels, rANS orders and transforms).

/// How many kinds there are (`COMP_MAX`).
pub const COUNT: usize = 53;

/// Each kind's one-letter form (the short report's Method column).
const CHARS: &[u8; COUNT] = b".gblr0afn_GbbbbbbbbBrR010101014545454582aAaAaAaAaaanN";

/// Each kind's name (`-v`).
const NAMES: [&str; COUNT] = [
    "raw",
    "gzip",
    "bzip2",
    "lzma",
    "r4x8",
    "rNx16",
    "arith",
    "fqzcomp",
    "tok3",
    "gzip-min",
    "gzip-max",
    "bzip2-1",
    "bzip2-2",
    "bzip2-3",
    "bzip2-4",
    "bzip2-5",
    "bzip2-6",
    "bzip2-7",
    "bzip2-8",
    "bzip2-9",
    "r4x8-o0",
    "r4x8-o1",
    "r4x16-o0",
    "r4x16-o1",
    "r4x16-o0R",
    "r4x16-o1R",
    "r4x16-o0P",
    "r4x16-o1P",
    "r4x16-o0PR",
    "r4x16-o1PR",
    "r32x16-o0",
    "r32x16-o1",
    "r32x16-o0R",
    "r32x16-o1R",
    "r32x16-o0P",
    "r32x16-o1P",
    "r32x16-o0PR",
    "r32x16-o1PR",
    "rNx16-xo0",
    "rNx16-cat",
    "arith-o0",
    "arith-o1",
    "arith-o0R",
    "arith-o1R",
    "arith-o0P",
    "arith-o1P",
    "arith-o0PR",
    "arith-o1PR",
    "arith-stripe",
    "arith-cat",
    "arith-ext",
    "tok3-rans",
    "tok3-arith",
];

const GZIP_MIN: usize = 9;
const BZIP2_1: usize = 11;
const RANS4X8_O0: usize = 20;
const RANS4X16_O0: usize = 22;
const RANSNX16_STRIPE: usize = 38;
const RANSNX16_CAT: usize = 39;
const ARITH_O0: usize = 40;
const ARITH_STRIPE: usize = 48;
const ARITH_CAT: usize = 49;
const ARITH_EXT: usize = 50;
const TOK3_RANS: usize = 51;

/// The rANS Nx16 and arithmetic coder flags of the first byte.
const X32: u8 = 0x04;
const STRIPE: u8 = 0x08;
const CAT: u8 = 0x20;
const RLE: u8 = 0x40;
const PACK: u8 = 0x80;

/// The kind of a block stored with `method` (0–8) whose stored bytes are `data`; `None` for a
/// method htslib does not know.
pub fn expand(method: u8, data: &[u8]) -> Option<usize> {
    let first = data.first().copied().unwrap_or(0);
    let flag = |f: u8| usize::from(first & f != 0);
    Some(match method {
        // gzip's XFL byte: 4 fastest, 2 best compression.
        1 => match data.get(8).filter(|_| data.len() > 8) {
            Some(4) => GZIP_MIN,
            Some(2) => GZIP_MIN + 1,
            _ => 1,
        },
        // bzip2's "BZh" then the block size digit.
        2 => match data.get(3) {
            Some(&d @ b'1'..=b'9') => BZIP2_1 + usize::from(d - b'1'),
            _ => 2,
        },
        4 => RANS4X8_O0 + usize::from(first == 1),
        5 if first & STRIPE != 0 => RANSNX16_STRIPE,
        5 if first & CAT != 0 => RANSNX16_CAT,
        5 => RANS4X16_O0 + flag(1) + 2 * flag(RLE) + 4 * flag(PACK) + 8 * flag(X32),
        6 if first & STRIPE != 0 => ARITH_STRIPE,
        6 if first & CAT != 0 => ARITH_CAT,
        6 if first & 4 != 0 => ARITH_EXT,
        // htslib takes two order bits here, so order 2 or 3 lands on a neighbour's name.
        6 => ARITH_O0 + usize::from(first & 3) + 2 * flag(RLE) + 4 * flag(PACK),
        // The tokeniser's level byte: 1 for its arithmetic coder.
        8 => TOK3_RANS + usize::from(data.len() > 8 && data[8] == 1),
        0 | 3 | 7 => usize::from(method),
        _ => return None,
    })
}

/// The kind's one-letter form.
pub fn letter(kind: usize) -> u8 {
    CHARS[kind]
}

/// The kind's name.
pub fn name(kind: usize) -> &'static str {
    NAMES[kind]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_stored_bytes() {
        assert_eq!(name(expand(0, b"").unwrap()), "raw");
        assert_eq!(name(expand(1, &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4]).unwrap()), "gzip-min");
        assert_eq!(name(expand(1, &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0]).unwrap()), "gzip");
        assert_eq!(name(expand(2, b"BZh6").unwrap()), "bzip2-6");
        assert_eq!(name(expand(4, &[1]).unwrap()), "r4x8-o1");
        assert_eq!(name(expand(5, &[0]).unwrap()), "r4x16-o0");
        assert_eq!(name(expand(5, &[0x45]).unwrap()), "r32x16-o1R");
        assert_eq!(name(expand(5, &[0x20]).unwrap()), "rNx16-cat");
        assert_eq!(name(expand(5, &[0x08]).unwrap()), "rNx16-xo0");
        assert_eq!(name(expand(6, &[0xc1]).unwrap()), "arith-o1PR");
        assert_eq!(name(expand(8, &[0, 0, 0, 0, 0, 0, 0, 0, 1]).unwrap()), "tok3-arith");
        assert_eq!(name(expand(8, &[0; 9]).unwrap()), "tok3-rans");
        assert_eq!(expand(9, b""), None);
        assert_eq!(letter(expand(5, &[0x80]).unwrap()), b'0');
        assert_eq!(letter(expand(5, &[0x04]).unwrap()), b'4');
    }
}
