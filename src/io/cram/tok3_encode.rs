//! CRAM 3.1's name tokeniser, encoder side (block method 8; htscodecs `tok3_encode_names` at
//! the level htslib's normal profile uses, rANS Nx16 streams). Each name is compared with an
//! earlier one (the last name sharing its longest prefix, found with a trie, or its
//! Illumina-style fixed prefix) and split into tokens — alpha runs, single characters, digits
//! with or without leading zeros — each stored as a match, a small delta or its value in the
//! streams of its token position and type. Streams are compressed with the rANS Nx16 methods
//! htscodecs tries for that type, and a stream equal to an earlier one is stored as a copy.
//! [`super::tok3`] decodes the result.

use super::rans_nx16_encode::{CAT, ORDER1, PACK, RLE, STRIPE, compress};
use super::rans_nx16_entropy::put_uint7;

const MAX_TOKENS: usize = 128;
/// htscodecs refuses more names than this in one block.
const MAX_NAMES: usize = 10_000_000;

// Token types (htscodecs `enum name_type`); each is also a stream of a token position.
const TYPE: u8 = 0;
const ALPHA: u8 = 1;
const CHAR: u8 = 2;
const DIGITS0: u8 = 3;
const DZLEN: u8 = 4;
const DUP: u8 = 5;
const DIFF: u8 = 6;
const DIGITS: u8 = 7;
const DDELTA: u8 = 8;
const DDELTA0: u8 = 9;
const MATCH: u8 = 10;
const END: u8 = 12;

/// The rANS Nx16 flags htscodecs tries on each stream type at its level 3 (the one htslib's
/// normal profile asks for), best first on ties.
fn methods(kind: u8) -> &'static [u8] {
    match kind {
        TYPE => &[PACK | RLE, 0],
        ALPHA => &[PACK | ORDER1, ORDER1],
        DIGITS0 => &[PACK | STRIPE, 0],
        DUP | DIGITS => &[PACK | RLE | STRIPE],
        DIFF => &[PACK | STRIPE],
        DDELTA0 => &[PACK],
        _ => &[0],
    }
}

/// `names`, each ended by a NUL (a read-name series), tokenised and compressed. `None` where
/// htscodecs refuses too: a name with a control or non-ASCII byte, over 127 tokens, or a block
/// not ended by a NUL.
pub fn encode(names: &[u8]) -> Option<Vec<u8>> {
    if names.last() != Some(&0) {
        return None;
    }
    if names.iter().any(|&b| b != 0 && !(b' '..0x80).contains(&b)) {
        return None;
    }
    let list: Vec<&[u8]> = names[..names.len() - 1].split(|&b| b == 0).collect();
    if list.len() > MAX_NAMES {
        return None;
    }
    let mut trie = Trie::new();
    for (n, name) in list.iter().enumerate() {
        trie.insert(name, n as u32);
    }
    let mut encoder = Encoder {
        trie,
        names: Vec::with_capacity(list.len()),
        streams: vec![Vec::new(); MAX_TOKENS << 4],
        deltas: [0; MAX_TOKENS],
        values: [0; MAX_TOKENS],
        max_tok: 1,
    };
    for name in &list {
        encoder.name(name)?;
    }
    let mut streams = encoder.streams;
    drop_implied_types(&mut streams, encoder.max_tok);

    // The compressed streams, or the index of an identical earlier one.
    let mut stored: Vec<Option<Result<Vec<u8>, usize>>> = vec![None; streams.len()];
    for i in 0..streams.len() {
        if streams[i].is_empty() {
            continue;
        }
        let packed = compress_stream(&streams[i], (i & 15) as u8)?;
        let copy = (0..i).find(|&j| match &stored[j] {
            Some(Ok(earlier)) => packed.len() > 4 && *earlier == packed,
            _ => false,
        });
        stored[i] = Some(copy.map_or(Ok(packed), Err));
    }
    let mut out = Vec::with_capacity(names.len() / 4);
    out.extend_from_slice(&(names.len() as u32).to_le_bytes());
    out.extend_from_slice(&(list.len() as u32).to_le_bytes());
    out.push(0); // rANS streams, not arithmetic coded
    let mut last_token = None;
    for (i, entry) in stored.iter().enumerate() {
        let Some(entry) = entry else { continue };
        let mut kind = (i & 15) as u8;
        if last_token != Some(i >> 4) {
            kind |= 128;
            last_token = Some(i >> 4);
        }
        match entry {
            Err(from) => out.extend_from_slice(&[kind | 64, (from >> 4) as u8, (from & 15) as u8]),
            Ok(packed) => {
                out.push(kind);
                out.extend_from_slice(packed);
            }
        }
    }
    Some(out)
}

/// A token position's type stream is left out when it is one type then only matches and the
/// position has other streams (the decoder implies it from the first of those).
fn drop_implied_types(streams: &mut [Vec<u8>], max_tok: usize) {
    for t in 0..max_tok {
        let types = &streams[t << 4];
        if types.is_empty() || types[1..].iter().any(|&k| k != MATCH) {
            continue;
        }
        if (1..16).any(|k| !streams[(t << 4) | k].is_empty()) {
            streams[t << 4].clear();
        }
    }
}

/// The smallest of the methods for stream type `kind`, with its length in front.
fn compress_stream(data: &[u8], kind: u8) -> Option<Vec<u8>> {
    let mut best: Option<Vec<u8>> = None;
    for &flags in methods(kind) {
        if flags & STRIPE != 0 && !data.len().is_multiple_of(4) {
            continue;
        }
        let packed = compress(data, flags, false)?;
        let mut framed = Vec::with_capacity(packed.len() + 5);
        put_uint7(&mut framed, packed.len() as u32);
        framed.extend_from_slice(&packed);
        if best.as_ref().is_none_or(|b| framed.len() < b.len()) {
            best = Some(framed);
        }
    }
    if best.is_none() {
        // No method applies (a striped one on an odd length): stored.
        let packed = compress(data, CAT, false)?;
        let mut framed = Vec::new();
        put_uint7(&mut framed, packed.len() as u32);
        framed.extend_from_slice(&packed);
        best = Some(framed);
    }
    best
}

/// A prefix trie of the block's names; each node remembers the last name (so far in encoding
/// order) that passed through it, or the first that made it.
struct Trie {
    /// First child, next sibling (0: none; the root is node 0), byte, name number.
    nodes: Vec<(u32, u32, u8, u32)>,
}

impl Trie {
    fn new() -> Trie {
        Trie { nodes: vec![(0, 0, 0, 0)] }
    }

    fn child(&self, node: usize, c: u8) -> Option<usize> {
        let mut x = self.nodes[node].0 as usize;
        while x != 0 {
            if self.nodes[x].2 == c {
                return Some(x);
            }
            x = self.nodes[x].1 as usize;
        }
        None
    }

    fn insert(&mut self, name: &[u8], n: u32) {
        let mut t = 0;
        for &c in name {
            t = match self.child(t, c) {
                Some(x) => x,
                None => {
                    let x = self.nodes.len();
                    let first = self.nodes[t].0;
                    // Appended after the siblings, as htscodecs links them.
                    self.nodes.push((0, 0, c, n));
                    if first == 0 {
                        self.nodes[t].0 = x as u32;
                    } else {
                        let mut last = first as usize;
                        while self.nodes[last].1 != 0 {
                            last = self.nodes[last].1 as usize;
                        }
                        self.nodes[last].1 = x as u32;
                    }
                    x
                }
            };
        }
    }

    /// htscodecs' `search_trie` for name number `n` (inserted before): the earlier name to
    /// compare with (`None`: the previous one) and whether it is the same name.
    fn search(&mut self, name: &[u8], n: u32) -> (Option<u32>, bool) {
        let prefix_len = known_prefix(name).0;
        let (mut from, mut from_punct, mut at_prefix) = (None, None, None);
        let mut t = 0;
        for (i, &c) in name.iter().enumerate() {
            let Some(x) = self.child(t, c) else { break };
            t = x;
            let seen = self.nodes[t].3;
            from = Some(seen);
            if (c.is_ascii_punctuation() || c == b' ') && seen != n {
                from_punct = Some(seen);
            }
            if Some(i + 1) == prefix_len {
                at_prefix = Some(seen);
            }
            self.nodes[t].3 = n;
        }
        let exact = from.is_some_and(|f| f != n) && !name.is_empty();
        if exact { (from, true) } else { (at_prefix.or(from_punct), false) }
    }
}

/// The length of the prefix htscodecs treats as a unit for the name formats it knows
/// (PacBio, IonTorrent, ONT, Illumina's up to lane:tile:x:y), and whether that prefix is
/// stored as one fixed alpha token (its length then).
fn known_prefix(data: &[u8]) -> (Option<usize>, Option<usize>) {
    let d = if data.first() == Some(&b'@') { &data[1..] } else { data };
    let l = d.len();
    let f = usize::from(data.first() == Some(&b'>'));
    let at = |i: usize| d.get(i).copied().unwrap_or(0);
    let hex = |i: usize| at(i).is_ascii_hexdigit();
    if l > 70 && at(f) == b'm' && at(7) == b'_' && at(f + 14) == b'_' && at(f + 61) == b'/' {
        return (Some(60), None); // PacBio
    }
    if l == 17 && at(f + 5) == b':' && at(f + 11) == b':' {
        return (Some(6), Some(6)); // IonTorrent
    }
    if l >= 36
        && [8, 13, 18, 23].iter().all(|&k| at(f + k) == b'-')
        && [0, 7, 9, 12, 14, 17, 19, 22, 24, 35].iter().all(|&k| hex(f + k))
    {
        return (Some(36), Some(36)); // ONT
    }
    let mut i = data.iter().take_while(|&&b| b > b' ').count();
    let mut colons = 0;
    while i > 0 && colons < 4 {
        i -= 1;
        if data[i] == b':' {
            colons += 1;
        }
    }
    if colons == 4 { (Some(i + 1), Some(i + 1)) } else { (None, None) }
}

/// What a token of an encoded name was, for later names to match.
#[derive(Clone, Copy, Default)]
struct Token {
    kind: u8,
    /// The value (digits), the byte (char) or the length (alpha).
    value: u32,
    /// The width (digits with leading zeros) or the offset in the name (alpha).
    extra: u32,
}

struct Encoded<'a> {
    name: &'a [u8],
    tokens: Vec<Token>,
}

struct Encoder<'a> {
    trie: Trie,
    names: Vec<Encoded<'a>>,
    /// Indexed by token position × 16 + type.
    streams: Vec<Vec<u8>>,
    /// Per token position: how often digits were stored as a delta, and as a value.
    deltas: [u32; MAX_TOKENS],
    values: [u32; MAX_TOKENS],
    /// One past the highest token position used.
    max_tok: usize,
}

impl<'a> Encoder<'a> {
    fn put_type(&mut self, token: usize, kind: u8) {
        self.streams[token << 4].push(kind);
    }

    fn put(&mut self, token: usize, kind: u8, bytes: &[u8]) {
        self.put_type(token, kind);
        self.streams[(token << 4) | usize::from(kind)].extend_from_slice(bytes);
    }

    /// Makes room for token position `token`; `false` past htscodecs' 128.
    fn room(&mut self, token: usize) -> bool {
        if token >= self.max_tok {
            if self.max_tok >= MAX_TOKENS {
                return false;
            }
            self.max_tok = token + 1;
        }
        true
    }

    /// htscodecs' `encode_name` (mode 1: deltas allowed).
    fn name(&mut self, name: &'a [u8]) -> Option<()> {
        let cnum = self.names.len();
        let (found, exact) = self.trie.search(name, cnum as u32);
        let pnum = found.map_or(cnum.saturating_sub(1), |p| p as usize);
        if exact && name.len() == self.names[pnum].name.len() {
            self.put(0, DUP, &((cnum - pnum) as u32).to_le_bytes());
            let tokens = self.names[pnum].tokens.clone();
            self.names.push(Encoded { name, tokens });
            return Some(());
        }
        self.put(0, DIFF, &((cnum - pnum) as u32).to_le_bytes());
        // The name compared with (none when it is this one) and its tokens.
        let (previous_name, previous_tokens) = match self.names.get(pnum).filter(|_| pnum < cnum) {
            Some(p) => (p.name, p.tokens.clone()),
            None => (&[][..], Vec::new()),
        };
        let previous = |ntok: usize, kind: u8| -> Option<Token> {
            previous_tokens.get(ntok).copied().filter(|t| t.kind == kind)
        };
        let mut tokens = vec![Token::default()];
        let mut ntok = 1;
        let mut i = 0;
        match known_prefix(name).1 {
            Some(36) => {
                // ONT: the uuid one character a token.
                self.max_tok = self.max_tok.max(38);
                for &c in &name[..36.min(name.len())] {
                    self.put(ntok, CHAR, &[c]);
                    tokens.push(Token { kind: CHAR, value: u32::from(c), extra: 0 });
                    ntok += 1;
                }
                i = 36;
            }
            Some(len) => {
                self.max_tok = self.max_tok.max(2);
                let same = previous(ntok, ALPHA).is_some_and(|t| t.value as usize == len)
                    && previous_name.get(..len) == name.get(..len);
                if same {
                    self.put_type(ntok, MATCH);
                } else {
                    self.put(ntok, ALPHA, &alpha(&name[..len]));
                }
                tokens.push(Token { kind: ALPHA, value: len as u32, extra: 0 });
                ntok += 1;
                i = len;
            }
            None => {}
        }
        while i < name.len() {
            if !self.room(ntok) {
                return None;
            }
            let c = name[i];
            let word_end = i
                + 1
                + name[i + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphabetic() || b.is_ascii_punctuation())
                    .count();
            let end = digits_end(name, i);
            // Digits are read with their leading zeros kept when they have one, or when the
            // previous name's token had that many digits so kept.
            let zeros = c == b'0'
                || (c.is_ascii_digit()
                    && previous(ntok, DIGITS0).is_some_and(|t| t.extra as usize == end - i));
            let token = if c.is_ascii_alphabetic() && word_end - i > 1 {
                let word = &name[i..word_end];
                let same = previous(ntok, ALPHA).is_some_and(|t| {
                    let from = t.extra as usize;
                    t.value as usize == word.len()
                        && previous_name.get(from..from + word.len()) == Some(word)
                });
                if same {
                    self.put_type(ntok, MATCH);
                } else {
                    self.put(ntok, ALPHA, &alpha(word));
                }
                i = word_end;
                Token {
                    kind: ALPHA,
                    value: word.len() as u32,
                    extra: (word_end - word.len()) as u32,
                }
            } else if zeros {
                let width = (end - i) as u32;
                let v = digits_value(&name[i..end]);
                match previous(ntok, DIGITS0).filter(|t| t.extra == width) {
                    Some(t) if v == t.value => self.put_type(ntok, MATCH),
                    Some(t) if v.wrapping_sub(t.value) < 256 => {
                        self.put(ntok, DDELTA0, &[v.wrapping_sub(t.value) as u8]);
                    }
                    _ => {
                        self.streams[(ntok << 4) | usize::from(DZLEN)].push(width as u8);
                        self.put(ntok, DIGITS0, &v.to_le_bytes());
                    }
                }
                i = end;
                Token { kind: DIGITS0, value: v, extra: width }
            } else if c.is_ascii_digit() {
                let v = digits_value(&name[i..end]);
                match previous(ntok, DIGITS) {
                    Some(t) if v == t.value => self.put_type(ntok, MATCH),
                    // A delta while deltas have not lost to values too often.
                    Some(t)
                        if v.wrapping_sub(t.value) < 256
                            && 5 + self.deltas[ntok] > self.values[ntok] =>
                    {
                        self.put(ntok, DDELTA, &[v.wrapping_sub(t.value) as u8]);
                        self.deltas[ntok] += 1;
                    }
                    Some(_) => {
                        self.put(ntok, DIGITS, &v.to_le_bytes());
                        self.values[ntok] += 1;
                    }
                    None => self.put(ntok, DIGITS, &v.to_le_bytes()),
                }
                i = end;
                Token { kind: DIGITS, value: v, extra: 0 }
            } else {
                match previous(ntok, CHAR) {
                    Some(t) if t.value == u32::from(c) => self.put_type(ntok, MATCH),
                    _ => self.put(ntok, CHAR, &[c]),
                }
                i += 1;
                Token { kind: CHAR, value: u32::from(c), extra: 0 }
            };
            tokens.push(token);
            ntok += 1;
        }
        if !self.room(ntok) {
            return None;
        }
        self.put_type(ntok, END);
        self.names.push(Encoded { name, tokens });
        Some(())
    }
}

/// Where the digits from `i` end: at most 9 of them.
fn digits_end(name: &[u8], i: usize) -> usize {
    i + name[i..].iter().take(9).take_while(|b| b.is_ascii_digit()).count()
}

fn digits_value(digits: &[u8]) -> u32 {
    digits.iter().fold(0u32, |v, &d| v.wrapping_mul(10).wrapping_add(u32::from(d - b'0')))
}

/// An alpha token's bytes: the text and a NUL.
fn alpha(text: &[u8]) -> Vec<u8> {
    let mut bytes = text.to_vec();
    bytes.push(0);
    bytes
}

#[cfg(test)]
mod tests {
    use super::super::tok3::decode;
    use super::*;

    fn block(names: &[String]) -> Vec<u8> {
        names.iter().flat_map(|n| n.bytes().chain([0])).collect()
    }

    fn round_trip(names: &[String]) -> usize {
        let src = block(names);
        let coded = encode(&src).expect("encoded");
        let back = decode(&coded, src.len()).unwrap_or_else(|e| panic!("{names:?}: {e}"));
        assert!(back == src, "{:?} came back as {:?}", names, String::from_utf8_lossy(&back));
        coded.len()
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn illumina_names_round_trip_and_shrink() {
        let names: Vec<String> = (0..3000)
            .map(|i| {
                format!(
                    "HS25_09827:2:{}:{}:{}#49",
                    1101 + i / 500,
                    1000 + (i * 37) % 20000,
                    i * 13 % 99999
                )
            })
            .collect();
        let size = round_trip(&names);
        assert!(size * 6 < block(&names).len(), "{size}");
    }

    #[test]
    fn duplicates_zeros_deltas_and_odd_names_round_trip() {
        round_trip(&strings(&["a"]));
        round_trip(&strings(&[""]));
        round_trip(&strings(&["", "", "x", ""]));
        round_trip(&strings(&["r1", "r1", "r2", "r1", "r10", "r010", "r0010", "r0011", "r0012"]));
        round_trip(&strings(&["foo:0999", "foo:1000", "foo:1001", "foo:01002", "foo:1300"]));
        round_trip(&strings(&["read.1/1", "read.1/2", "read.2/1", "read.2/2", "read.2/2"]));
        round_trip(&strings(&["1234567890123", "1234567890124", "99999999999999999999"]));
        round_trip(&strings(&["IONXX:01234:05678", "IONXX:01234:05679", "IONXX:01235:00001"]));
        round_trip(&strings(&[
            "f33d30d5-6eb8-4115-8f46-154c2620a5da_Basecall_1D_template",
            "a33d30d5-6eb8-4115-8f46-154c2620a5db_Basecall_1D_template",
        ]));
        let pacbio = "m140415_143853_42175_c100635972550000001823121409101466_s1_p0";
        round_trip(&[format!("{pacbio}/1/0_100"), format!("{pacbio}/1/100_200")]);
        // Many names of every shape, one token position per character.
        let mixed: Vec<String> = (0..500)
            .map(|i| match i % 5 {
                0 => format!("q{i}"),
                1 => format!("SRR{:07}.{}", i / 3, i),
                2 => format!("x{}y{}z", i % 7, i % 256),
                3 => "same".to_string(),
                _ => format!("{:03}-{}", i % 50, "ab".repeat(i % 4)),
            })
            .collect();
        round_trip(&mixed);
    }

    #[test]
    fn names_htscodecs_cannot_code_are_refused() {
        assert!(encode(b"caf\xc3\xa9\0").is_none());
        assert!(encode(b"tab\there\0").is_none());
        assert!(encode(b"no end").is_none());
        // 128 tokens: alternating letters and digits.
        let long: String = (0..70).map(|i| format!("a{i}")).collect();
        assert!(encode(&block(&[long])).is_none());
        let fine: String = (0..60).map(|i| format!("a{i}")).collect();
        round_trip(&[fine]);
    }
}
