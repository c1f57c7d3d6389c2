//! Documents to terms (seed 003 §1.2.3.1 and §4.2.3; docs/algorithms.md, "terms").
//!
//! The rules have a version ([`TokenizerVersion`]), recorded in every saved sketch,
//! index and online state, so that terms of two versions are never compared.
//!
//! # Version 2 (the default)
//!
//! For plain text and HTML alike:
//!
//! * Text is put in Unicode **NFKC** form (full-width Latin and digits become ASCII,
//!   ligatures and compatibility forms their plain letters, a letter and its combining
//!   accent one character), then **lower-cased** with Unicode's full mapping
//!   ([`char::to_lowercase`]) when case folding is on (the default). In HTML this
//!   applies to the text between tags, after character references are decoded, never
//!   to the markup (NFKC would turn a full-width `＜` into a `<`).
//! * **Terms are the words of Unicode's word boundaries** (UAX #29, the `Word_Break`
//!   property of ICU4X's data) **within runs of letters, digits and marks**: letters
//!   of alphabets and syllabaries (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari
//!   and the other Indic scripts, Hangul, …) and digits join into one term; combining
//!   marks, format characters and joiners stay inside the term they follow (a
//!   Devanagari vowel sign, an Arabic vowel mark); a run of Katakana is one term.
//! * Scripts written without spaces get **one term per character**: each Han
//!   character, each Hiragana character, and each character of Thai, Lao, Khmer and
//!   Myanmar with the marks that follow it (UAX #29 puts a boundary around each of
//!   them: `Word_Break=Other`). A changed character changes one term, as a changed word
//!   does in English; see "Script-aware terms" below for why not dictionary words.
//! * **Every other character separates terms**, including the punctuation that UAX #29
//!   allows inside a word (apostrophes, full stops, colons, commas between digits,
//!   the underscore): `don't` is two terms and `3.14` two, as in version 1, so English
//!   terms are those of version 1 and the presets' figures on English text stay.
//!   A URL written in the text breaks into terms at its slashes and dots.
//!
//! # Version 1
//!
//! Saved files made before version 2 say version 1, and are read with it: a term is
//! a maximal run of characters for which [`char::is_alphanumeric`] holds (so
//! combining marks split terms, and a Chinese or Japanese clause between two
//! punctuation marks is one term), lower-cased by [`char::to_lowercase`], without
//! normalization.
//!
//! # HTML (both versions)
//!
//! * Markup is replaced by white space, except **inline formatting tags** (`b`, `i`,
//!   `em`, `span`, `a`, … see [`INLINE_TAGS`]), which are ignored: `<b>foo</b>bar` is one
//!   term, `<p>foo</p>bar` two.
//! * `script` and `style` elements, comments, doctype and processing instructions are
//!   dropped.
//! * Character references (`&amp;`, `&eacute;`, `&#233;`, `&#xE9;`) are decoded; an
//!   unknown or unterminated one is text.
//! * The `src` of an `<img>` is one term: the whole URL when it points to another host
//!   than the page's URL, only the file name when it points to the page's own host
//!   (relative URLs included), so a mirrored page and its images give the same terms.
//! * Malformed markup is tolerated: an unclosed tag or comment runs to the end of the
//!   input, a `<` that starts no tag is text.
//!
//! Optional (off by default): a stop-word list, and integer weights per term and for
//! terms inside `<title>`; weights only change the Charikar projections.
//!
//! # Script-aware terms
//!
//! One shingle size serves every script: a shingle of 8 terms is 8 English words or 8
//! Han characters (about 4 Chinese words). On Debian's translated manual pages
//! (`bench/multilingual.py`, the accuracy page's table) planted near-duplicates are
//! found in Chinese and Japanese at least as often as in English under both presets,
//! and the pages paired with another are near-copies in every language, so shingles
//! are not sized per script. Dictionary words (ICU4X's segmenter) would make a Chinese
//! term about two characters, but cost a dictionary, a second pass and segmentations
//! that a one-character edit can move; one term per character needs neither.
//!
//! # Speed
//!
//! ASCII text takes the vector path of version 1 unchanged (64 bytes classified and
//! folded at a time); NFKC costs it one `is_ascii` pass per piece of text. Other
//! characters take one lookup in a table of the Basic Multilingual Plane built once
//! from ICU4X's data (class and whether lower-casing changes it): `unicode-segmentation`'s
//! word iterator with the same hashing is 2 (Chinese) to 6 (Thai) times slower on this
//! project's benches (`cargo bench --bench sketch -- scripts`). With a term per
//! character a Chinese text has a shingle per 3 bytes, against one per 6 to 7 in
//! English, and sketching a shingle (min-hashes and projections) costs what it costs in
//! English: that, not the tokenizer, bounds the bytes per second of Chinese, Japanese
//! and Thai text.

use crate::document::{url_host, Body};
use crate::sketch::hash::term_fingerprint;
use ahash::{AHashMap, AHashSet};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Tags that are ignored rather than replaced by white space (inline formatting).
pub const INLINE_TAGS: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "del", "dfn", "em", "font", "i", "ins",
    "kbd", "mark", "nobr", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup",
    "tt", "u", "var", "wbr",
];

/// The terms of one document as fingerprints, with optional weights.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    /// Term fingerprints ([`term_fingerprint`]) in document order.
    pub fps: Vec<u64>,
    /// Weight of each term, parallel to `fps`; empty when every weight is 1.
    pub weights: Vec<u32>,
}

impl Tokens {
    /// Removes all terms, keeping the allocations.
    pub fn clear(&mut self) {
        self.fps.clear();
        self.weights.clear();
    }
}

/// The version of the term rules (module docs): sketches are comparable only when
/// made by the same version. Saved as its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub enum TokenizerVersion {
    /// Maximal alphanumeric runs, no normalization (files made before version 2).
    V1,
    /// Unicode word boundaries, NFKC, one term per character in scripts without spaces.
    #[default]
    V2,
}

impl TokenizerVersion {
    /// The version's number, as saved files and settings write it.
    pub fn number(self) -> u32 {
        match self {
            TokenizerVersion::V1 => 1,
            TokenizerVersion::V2 => 2,
        }
    }
}

impl From<TokenizerVersion> for u32 {
    fn from(v: TokenizerVersion) -> u32 {
        v.number()
    }
}

impl TryFrom<u32> for TokenizerVersion {
    type Error = String;
    fn try_from(n: u32) -> std::result::Result<Self, String> {
        match n {
            1 => Ok(TokenizerVersion::V1),
            2 => Ok(TokenizerVersion::V2),
            _ => Err(format!("tokenizer version {n} is not 1 or 2")),
        }
    }
}

impl std::fmt::Display for TokenizerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// Splits documents into terms. Cheap to clone and share between threads.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    version: TokenizerVersion,
    case_fold: bool,
    stop_words: AHashSet<u64>,
    weights: AHashMap<u64, u32>,
    title_weight: u32,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new(true, &[], &[], 1)
    }
}

trait Sink {
    /// One term: valid UTF-8, case-folded when folding is on.
    #[inline(always)]
    fn term(&mut self, term: &[u8], title: bool) {
        self.term_fp(term, term_fingerprint(term), title);
    }

    /// One term with its fingerprint already computed.
    fn term_fp(&mut self, term: &[u8], fp: u64, title: bool);
}

struct FpSink<'a> {
    tok: &'a Tokenizer,
    out: &'a mut Tokens,
    weighted: bool,
}

impl Sink for FpSink<'_> {
    #[inline(always)]
    fn term_fp(&mut self, _term: &[u8], fp: u64, title: bool) {
        if !self.tok.stop_words.is_empty() && self.tok.stop_words.contains(&fp) {
            return;
        }
        self.out.fps.push(fp);
        if self.weighted {
            let w = self.tok.weights.get(&fp).copied().unwrap_or(1);
            self.out.weights.push(if title {
                w.saturating_mul(self.tok.title_weight)
            } else {
                w
            });
        }
    }
}

struct StringSink<'a> {
    tok: &'a Tokenizer,
    out: Vec<String>,
}

impl Sink for StringSink<'_> {
    fn term_fp(&mut self, term: &[u8], fp: u64, _title: bool) {
        if !self.tok.stop_words.contains(&fp) {
            self.out.push(String::from_utf8_lossy(term).into_owned());
        }
    }
}

struct TermAcc {
    /// Always valid UTF-8: only ASCII bytes and encoded chars are pushed.
    buf: Vec<u8>,
    fold: bool,
    /// The class of the term in `buf` ([`WORD`], [`KATA`] or [`SOLO`]); meaningful
    /// only while `buf` is not empty.
    kind: u8,
}

impl TermAcc {
    /// ASCII letters and digits, already folded (when folding is on): they continue a
    /// [`WORD`] term and end any other.
    #[inline]
    fn push_folded<S: Sink>(&mut self, bytes: &[u8], sink: &mut S, title: bool) {
        self.continue_as(WORD, sink, title);
        self.buf.extend_from_slice(bytes);
    }

    /// ASCII letters and digits, folded here.
    #[inline]
    fn push_ascii<S: Sink>(&mut self, bytes: &[u8], sink: &mut S, title: bool) {
        self.continue_as(WORD, sink, title);
        if self.fold {
            self.buf.extend(bytes.iter().map(u8::to_ascii_lowercase));
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Ends the term in `buf` unless it is of class `kind`, which the next character
    /// continues or starts.
    #[inline]
    fn continue_as<S: Sink>(&mut self, kind: u8, sink: &mut S, title: bool) {
        if self.kind != kind {
            self.flush(sink, title);
            self.kind = kind;
        }
    }

    /// A non-ASCII character of class `class` ([`Class`]).
    #[inline]
    fn push_class<S: Sink>(&mut self, c: char, class: u8, sink: &mut S, title: bool) {
        match class & CLASS_MASK {
            k @ (WORD | KATA) => self.continue_as(k, sink, title),
            SOLO => {
                self.flush(sink, title);
                self.kind = SOLO;
            }
            EXTEND => {
                // A mark that follows no letter belongs to the separator before it (UAX
                // #29, WB4), unless it is alphanumeric itself (a Thai nikhahit): then it
                // starts a term of its own, as it would at the start of the text.
                if self.buf.is_empty() {
                    if !c.is_alphanumeric() {
                        return;
                    }
                    self.kind = SOLO;
                }
            }
            _ => {
                self.flush(sink, title);
                return;
            }
        }
        let mut tmp = [0u8; 4];
        if self.fold && class & LOWER_STABLE == 0 {
            for l in c.to_lowercase() {
                self.buf
                    .extend_from_slice(l.encode_utf8(&mut tmp).as_bytes());
            }
        } else {
            self.buf
                .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        }
    }

    #[inline]
    fn flush<S: Sink>(&mut self, sink: &mut S, title: bool) {
        if !self.buf.is_empty() {
            sink.term(&self.buf, title);
            self.buf.clear();
        }
    }
}

/// Character classes of the term rules, the low bits of a [`Class`] byte: separators,
/// letters and digits that join into words, Katakana (joins only Katakana), marks and
/// joiners (continue the term before them), and characters that are terms alone.
const SEP: u8 = 0;
const WORD: u8 = 1;
const KATA: u8 = 2;
const EXTEND: u8 = 3;
const SOLO: u8 = 4;
const CLASS_MASK: u8 = 7;
/// Set when [`char::to_lowercase`] leaves the character as it is.
const LOWER_STABLE: u8 = 8;

/// A character's class ([`SEP`] … [`SOLO`]) and its [`LOWER_STABLE`] bit.
type Class = u8;

/// The class of `c` under version 1: alphanumeric or not.
fn class_v1(c: char) -> Class {
    let lower = lower_stable(c);
    (if c.is_alphanumeric() { WORD } else { SEP }) | lower
}

/// The class of `c` under version 2, from its `Word_Break` property (UAX #29).
fn class_v2(c: char) -> Class {
    use icu_properties::props::WordBreak as Wb;
    let wb = icu_properties::CodePointMapData::<Wb>::new().get(c);
    let class = match wb {
        Wb::ALetter | Wb::HebrewLetter | Wb::Numeric => WORD,
        Wb::Katakana => KATA,
        Wb::Extend | Wb::Format | Wb::ZWJ => EXTEND,
        Wb::Other if c.is_alphanumeric() => SOLO,
        _ => SEP,
    };
    class | lower_stable(c)
}

fn lower_stable(c: char) -> Class {
    let mut l = c.to_lowercase();
    if l.next() == Some(c) && l.next().is_none() {
        LOWER_STABLE
    } else {
        0
    }
}

/// [`class_v1`] and [`class_v2`] of every character of the Basic Multilingual Plane,
/// computed once: one load instead of the property lookups, which cost more than the
/// rest of a non-ASCII character.
static BMP_V1: std::sync::LazyLock<Box<[Class]>> = std::sync::LazyLock::new(|| bmp_table(class_v1));
static BMP_V2: std::sync::LazyLock<Box<[Class]>> = std::sync::LazyLock::new(|| bmp_table(class_v2));

fn bmp_table(f: fn(char) -> Class) -> Box<[Class]> {
    (0..0x10000u32)
        .map(|u| char::from_u32(u).map_or(SEP | LOWER_STABLE, f))
        .collect()
}

/// The class of `c` under `version`: by table in the BMP.
#[inline]
fn class_of(version: TokenizerVersion, c: char) -> Class {
    let (table, f): (&[Class], fn(char) -> Class) = match version {
        TokenizerVersion::V1 => (&BMP_V1, class_v1),
        TokenizerVersion::V2 => (&BMP_V2, class_v2),
    };
    match table.get(c as usize) {
        Some(&k) => k,
        None => f(c),
    }
}

/// The NFKC form of `s` (borrowed when it is in NFKC already, as ASCII always is).
fn nfkc(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    icu_normalizer::ComposingNormalizerBorrowed::new_nfkc().normalize(s)
}

enum Tag<'a> {
    /// A comment: ignored, no term break.
    Comment { end: usize },
    /// Doctype, processing instruction, bogus markup: a term break.
    Other { end: usize },
    /// An element's start or end tag.
    Element {
        name: &'a str,
        closing: bool,
        end: usize,
        src: Option<&'a str>,
    },
    /// A `<` that starts no tag: text.
    Text,
}

fn find_from(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay.get(from..)?, needle).map(|p| p + from)
}

/// Byte classes, one table lookup per byte instead of a chain of comparisons: the
/// scalar text scanner uses `ALNUM` and `NON_ASCII`, the tag parser the `T_` classes.
const ALNUM: u8 = 1;
const NON_ASCII: u8 = 2;
const T_WS: u8 = 4;
const T_NAME: u8 = 8;
const T_ATTR_STOP: u8 = 16;
const T_VALUE_STOP: u8 = 32;
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let mut v = 0;
        if b.is_ascii_alphanumeric() {
            v |= ALNUM;
        }
        if b >= 0x80 {
            v |= NON_ASCII;
        }
        if b.is_ascii_whitespace() {
            v |= T_WS | T_ATTR_STOP | T_VALUE_STOP;
        }
        if b.is_ascii_alphanumeric() || b == b'-' || b == b':' {
            v |= T_NAME;
        }
        if b == b'=' || b == b'/' {
            v |= T_ATTR_STOP;
        }
        if b == b'>' {
            v |= T_ATTR_STOP | T_VALUE_STOP;
        }
        t[c] = v;
        c += 1;
    }
    t
};

#[inline(always)]
fn tag_class(b: u8, class: u8) -> bool {
    CLASS[b as usize] & class != 0
}

fn parse_tag(html: &str, i: usize) -> Tag<'_> {
    let b = html.as_bytes();
    let n = b.len();
    if b[i..].starts_with(b"<!--") {
        let end = find_from(b, i + 4, b"-->").map_or(n, |p| p + 3);
        return Tag::Comment { end };
    }
    let Some(&next) = b.get(i + 1) else {
        return Tag::Text;
    };
    if next == b'!' || next == b'?' {
        let end = memchr::memchr(b'>', &b[i..]).map_or(n, |p| i + p + 1);
        return Tag::Other { end };
    }
    let (closing, name_start) = if next == b'/' {
        (true, i + 2)
    } else {
        (false, i + 1)
    };
    match b.get(name_start) {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ if closing => {
            let end = memchr::memchr(b'>', &b[i..]).map_or(n, |p| i + p + 1);
            return Tag::Other { end };
        }
        _ => return Tag::Text,
    }
    let mut j = name_start;
    while j < n && tag_class(b[j], T_NAME) {
        j += 1;
    }
    let name = &html[name_start..j];
    let is_img = name.eq_ignore_ascii_case("img");
    let mut src = None;
    // Attributes.
    loop {
        while j < n && (tag_class(b[j], T_WS) || b[j] == b'/') {
            j += 1;
        }
        if j >= n {
            return Tag::Element {
                name,
                closing,
                end: n,
                src,
            };
        }
        if b[j] == b'>' {
            return Tag::Element {
                name,
                closing,
                end: j + 1,
                src,
            };
        }
        let an_start = j;
        while j < n && !tag_class(b[j], T_ATTR_STOP) {
            j += 1;
        }
        let attr = &html[an_start..j];
        while j < n && tag_class(b[j], T_WS) {
            j += 1;
        }
        if j < n && b[j] == b'=' {
            j += 1;
            while j < n && tag_class(b[j], T_WS) {
                j += 1;
            }
            let (vs, ve, next_j) = match b.get(j) {
                Some(&q @ (b'"' | b'\'')) => match memchr::memchr(q, &b[j + 1..]) {
                    Some(p) => (j + 1, j + 1 + p, j + 2 + p),
                    None => (j + 1, n, n),
                },
                _ => {
                    let mut k = j;
                    while k < n && !tag_class(b[k], T_VALUE_STOP) {
                        k += 1;
                    }
                    (j, k, k)
                }
            };
            if is_img && attr.eq_ignore_ascii_case("src") && src.is_none() {
                src = Some(&html[vs..ve]);
            }
            j = next_j;
        }
    }
}

/// Position after the end tag `</name ...>` that closes a raw-text element, searching
/// from `from`; the end of input when there is none.
fn skip_raw_text(html: &str, from: usize, name: &str) -> usize {
    let b = html.as_bytes();
    let mut at = from;
    while let Some(p) = find_from(b, at, b"</") {
        let s = p + 2;
        if b.len() >= s + name.len() && b[s..s + name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return memchr::memchr(b'>', &b[s..]).map_or(b.len(), |q| s + q + 1);
        }
        at = s;
    }
    b.len()
}

/// Decodes the character reference at `i` (`html[i] == '&'`): its text and the
/// position after it, or `None` when it is not a known, terminated reference.
fn decode_entity(html: &str, i: usize) -> Option<(std::borrow::Cow<'static, str>, usize)> {
    let b = html.as_bytes();
    let limit = (i + 40).min(b.len());
    let body_end = i
        + 1
        + b[i + 1..limit]
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'#'))?;
    if b[body_end] != b';' || body_end == i + 1 {
        return None;
    }
    // The commonest references without the table search (same results).
    let common = match &b[i + 1..body_end] {
        b"amp" => Some("&"),
        b"lt" => Some("<"),
        b"gt" => Some(">"),
        b"quot" => Some("\""),
        b"nbsp" => Some("\u{a0}"),
        _ => None,
    };
    if let Some(text) = common {
        return Some((text.into(), body_end + 1));
    }
    let raw = &html[i..=body_end];
    let decoded = html_escape::decode_html_entities(raw);
    if decoded == raw {
        None
    } else {
        Some((decoded.into_owned().into(), body_end + 1))
    }
}

/// The IMG term for `src` on a page whose host is `page_host`.
fn img_term(src: &str, page_host: Option<&str>) -> Option<String> {
    let src = html_escape::decode_html_entities(src);
    let src = src.trim();
    if src.is_empty() {
        return None;
    }
    let same_host = match url_host(src) {
        Some(h) => page_host.is_some_and(|p| p.eq_ignore_ascii_case(h)),
        None => true,
    };
    if !same_host {
        return Some(src.to_owned());
    }
    let path = src.split(['?', '#']).next().unwrap_or(src);
    let name = path.rsplit('/').next().unwrap_or(path);
    Some(if name.is_empty() { path } else { name }.to_owned())
}

/// A tag name of at most 8 bytes, ASCII-lower-cased, as a little-endian integer
/// (zero-padded; tag names contain no NUL byte, so the length is implied).
const fn tag_key(name: &[u8]) -> u64 {
    let mut k = 0u64;
    let mut i = 0;
    while i < name.len() && i < 8 {
        k |= (name[i].to_ascii_lowercase() as u64) << (8 * i);
        i += 1;
    }
    k
}

/// [`INLINE_TAGS`] as keys, sorted.
static INLINE_KEYS: [u64; INLINE_TAGS.len()] = {
    let mut keys = [0u64; INLINE_TAGS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = tag_key(INLINE_TAGS[i].as_bytes());
        i += 1;
    }
    // Insertion sort (const context).
    let mut i = 1;
    while i < keys.len() {
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            let t = keys[j - 1];
            keys[j - 1] = keys[j];
            keys[j] = t;
            j -= 1;
        }
        i += 1;
    }
    keys
};

/// Whether `name` is one of [`INLINE_TAGS`], any case: a binary search of integer keys.
fn is_inline(name: &str) -> bool {
    name.len() <= 6 && INLINE_KEYS.binary_search(&tag_key(name.as_bytes())).is_ok()
}

impl Tokenizer {
    /// A tokenizer of the current version ([`TokenizerVersion::V2`]) with case folding
    /// on or off, the given stop words (normalized and folded like terms), per-term
    /// weights and a weight multiplier for terms inside `<title>`.
    ///
    /// Weights of 0 are treated as 1.
    pub fn new(
        case_fold: bool,
        stop_words: &[String],
        weights: &[(String, u32)],
        title_weight: u32,
    ) -> Self {
        Self::with_version(
            TokenizerVersion::V2,
            case_fold,
            stop_words,
            weights,
            title_weight,
        )
    }

    /// [`Tokenizer::new`] with the rules of `version`.
    pub fn with_version(
        version: TokenizerVersion,
        case_fold: bool,
        stop_words: &[String],
        weights: &[(String, u32)],
        title_weight: u32,
    ) -> Self {
        let fold = |s: &str| {
            let s = match version {
                TokenizerVersion::V1 => Cow::Borrowed(s),
                TokenizerVersion::V2 => nfkc(s),
            };
            if case_fold {
                s.to_lowercase()
            } else {
                s.into_owned()
            }
        };
        Tokenizer {
            version,
            case_fold,
            stop_words: stop_words
                .iter()
                .map(|w| term_fingerprint(fold(w).as_bytes()))
                .collect(),
            weights: weights
                .iter()
                .map(|(w, x)| (term_fingerprint(fold(w).as_bytes()), (*x).max(1)))
                .collect(),
            title_weight: title_weight.max(1),
        }
    }

    /// The version of the rules.
    pub fn version(&self) -> TokenizerVersion {
        self.version
    }

    /// True when some term can get a weight other than 1.
    pub fn is_weighted(&self) -> bool {
        !self.weights.is_empty() || self.title_weight != 1
    }

    /// Appends the terms of `body` to `out` (which is not cleared). `page_url` is the
    /// document's URL, used by the IMG rule.
    pub fn tokenize(&self, body: &Body, page_url: Option<&str>, out: &mut Tokens) {
        let mut sink = FpSink {
            tok: self,
            out,
            weighted: self.is_weighted(),
        };
        self.run(body, page_url, &mut sink);
    }

    /// The terms of `body` as strings, by the same rules (for inspection and tests).
    pub fn terms(&self, body: &Body, page_url: Option<&str>) -> Vec<String> {
        let mut sink = StringSink {
            tok: self,
            out: Vec::new(),
        };
        self.run(body, page_url, &mut sink);
        sink.out
    }

    fn run<S: Sink>(&self, body: &Body, page_url: Option<&str>, sink: &mut S) {
        thread_local! {
            // The term buffer, kept per thread between documents: an allocation per
            // document cost more than the rest of a short one.
            static BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
        }
        let mut buf = BUF.take();
        buf.clear();
        let mut acc = TermAcc {
            buf,
            fold: self.case_fold,
            kind: WORD,
        };
        match body {
            Body::Text(t) => self.scan_segment(t, &mut acc, sink, false),
            Body::Html(h) => self.scan_html(h, page_url.and_then(url_host), &mut acc, sink),
        }
        acc.flush(sink, false);
        if acc.buf.capacity() <= 1 << 12 {
            BUF.set(acc.buf);
        }
    }

    /// Scans text (no markup) in blocks of 64 bytes: one vector pass classifies and
    /// case-folds the block, then each term is a run of set bits of the alphanumeric
    /// mask, hashed straight from the folded block. Terms that may continue past the
    /// block (or into a non-ASCII character, which the scalar scanner takes) go through
    /// `acc`.
    fn scan_segment<S: Sink>(&self, s: &str, acc: &mut TermAcc, sink: &mut S, title: bool) {
        let normal;
        let s = match self.version {
            TokenizerVersion::V1 => s,
            TokenizerVersion::V2 => {
                normal = nfkc(s);
                &normal
            }
        };
        let b = s.as_bytes();
        let n = b.len();
        let mut folded = [0u8; 64];
        let mut tail = [b' '; 64];
        let mut i = 0;
        while i < n {
            let r = (n - i).min(64);
            if r < 16 {
                // A short piece (common between HTML tags): byte by byte is cheaper.
                self.scan_scalar(s, i, n, acc, sink, title);
                return;
            }
            let blk: &[u8; 64] = if r == 64 {
                match b[i..i + 64].try_into() {
                    Ok(blk) => blk,
                    Err(_) => return,
                }
            } else {
                tail[..r].copy_from_slice(&b[i..]);
                tail[r..].fill(b' ');
                &tail
            };
            let (alnum, high) = crate::sketch::simd::classify64(blk, acc.fold, &mut folded);
            // ASCII bytes up to the first non-ASCII one or the end of the text: terms are
            // the runs of set bits of `alnum` below `limit`.
            let limit = (high.trailing_zeros() as usize).min(r);
            let valid = if limit == 64 {
                u64::MAX
            } else {
                (1u64 << limit) - 1
            };
            if (alnum | high) & 1 == 0 {
                acc.flush(sink, title);
            }
            let mut m = alnum & valid;
            let mut next = i + r;
            if r == 64 && limit == 64 && m >> 63 == 1 {
                // The last term reaches the block's end and may go on: rather than
                // copying its head aside, the next block starts where it starts.
                let last = 64 - (!m).leading_zeros() as usize;
                if last > 0 {
                    m &= (1u64 << last) - 1;
                    next = i + last;
                }
            }
            // The runs of set bits of `m` by their first and last bits, each taken off
            // with one `x & (x − 1)`: the loop carries no longer chain than that.
            let mut starts = m & !(m << 1);
            let mut lasts = m & !(m >> 1);
            while starts != 0 {
                let start = starts.trailing_zeros() as usize;
                let end = lasts.trailing_zeros() as usize + 1;
                starts &= starts - 1;
                lasts &= lasts - 1;
                let term = &folded[start..end];
                if end == limit {
                    // May continue in the next block, the next piece of text or the
                    // next (non-ASCII) character.
                    acc.push_folded(term, sink, title);
                } else if start == 0 && !acc.buf.is_empty() {
                    acc.push_folded(term, sink, title);
                    acc.flush(sink, title);
                } else {
                    sink.term(term, title);
                }
            }
            if limit < r {
                // The non-ASCII char: the scalar scanner, up to the next ASCII byte after
                // it (a run of non-ASCII text, such as Chinese, stays scalar).
                i = self.scan_scalar(s, i + limit, i + limit + 1, acc, sink, title);
                continue;
            }
            i = next;
        }
    }

    /// The byte-at-a-time scanner, from `i` until at least `until`, then on to the next
    /// ASCII byte (a char boundary), or the end; returns where it stopped.
    fn scan_scalar<S: Sink>(
        &self,
        s: &str,
        mut i: usize,
        until: usize,
        acc: &mut TermAcc,
        sink: &mut S,
        title: bool,
    ) -> usize {
        let b = s.as_bytes();
        let n = b.len();
        while i < n && (i < until || b[i] >= 0x80) {
            let c = CLASS[b[i] as usize];
            if c & ALNUM != 0 {
                let mut j = i + 1;
                while j < n && CLASS[b[j] as usize] & ALNUM != 0 {
                    j += 1;
                }
                acc.push_ascii(&b[i..j], sink, title);
                i = j;
            } else if c & NON_ASCII == 0 {
                acc.flush(sink, title);
                i += 1;
            } else {
                match s[i..].chars().next() {
                    Some(ch) => {
                        acc.push_class(ch, class_of(self.version, ch), sink, title);
                        i += ch.len_utf8();
                    }
                    None => return n,
                }
            }
        }
        i
    }

    fn scan_html<S: Sink>(
        &self,
        html: &str,
        page_host: Option<&str>,
        acc: &mut TermAcc,
        sink: &mut S,
    ) {
        let b = html.as_bytes();
        let n = b.len();
        let mut i = 0;
        let mut title = false;
        while i < n {
            match b[i] {
                b'<' => match parse_tag(html, i) {
                    Tag::Comment { end } => i = end,
                    Tag::Other { end } => {
                        acc.flush(sink, title);
                        i = end;
                    }
                    Tag::Text => {
                        acc.flush(sink, title);
                        i += 1;
                    }
                    Tag::Element {
                        name,
                        closing,
                        end,
                        src,
                    } => {
                        i = end;
                        if is_inline(name) {
                            continue;
                        }
                        acc.flush(sink, title);
                        if name.eq_ignore_ascii_case("title") {
                            title = !closing;
                        } else if !closing
                            && (name.eq_ignore_ascii_case("script")
                                || name.eq_ignore_ascii_case("style"))
                        {
                            i = skip_raw_text(html, end, name);
                        } else if let (false, Some(src)) = (closing, src) {
                            if let Some(t) = img_term(src, page_host) {
                                acc.buf.clear();
                                if self.case_fold {
                                    acc.buf.extend_from_slice(t.to_lowercase().as_bytes());
                                } else {
                                    acc.buf.extend_from_slice(t.as_bytes());
                                }
                                acc.flush(sink, title);
                            }
                        }
                    }
                },
                b'&' => match decode_entity(html, i) {
                    Some((text, end)) => {
                        self.scan_segment(&text, acc, sink, title);
                        i = end;
                    }
                    None => {
                        acc.flush(sink, title);
                        i += 1;
                    }
                },
                _ => {
                    let end = memchr::memchr2(b'<', b'&', &b[i..]).map_or(n, |p| i + p);
                    self.scan_segment(&html[i..end], acc, sink, title);
                    i = end;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bmp_tables_match_the_properties() {
        use super::{class_of, TokenizerVersion as V, CLASS_MASK, LOWER_STABLE, SEP, WORD};
        for c in (0..0x11000u32).filter_map(char::from_u32) {
            let v1 = class_of(V::V1, c);
            let want = if c.is_alphanumeric() { WORD } else { SEP };
            assert_eq!(v1 & CLASS_MASK, want, "{c:?}");
            let mut l = c.to_lowercase();
            let stable = l.next() == Some(c) && l.next().is_none();
            assert_eq!(v1 & LOWER_STABLE != 0, stable, "{c:?}");
            assert_eq!(class_of(V::V2, c), super::class_v2(c), "{c:?}");
        }
    }

    #[test]
    fn terms_across_block_boundaries() {
        // Terms of every length from 1 to 150 starting at every offset around the
        // 64-byte block edges, with ASCII and non-ASCII neighbours.
        let tok = super::Tokenizer::default();
        for len in 1..150 {
            for pad in 0..70 {
                for tail in ["", " x", "é", "éy z"] {
                    let word: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                    let text = format!("{} {word}{tail}", "q".repeat(pad));
                    let want: Vec<String> = text
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| !w.is_empty())
                        .map(str::to_lowercase)
                        .collect();
                    let got = tok.terms(&crate::document::Body::Text(text.clone()), None);
                    assert_eq!(got, want, "{text:?}");
                }
            }
        }
    }

    #[test]
    fn common_entities_decode_as_the_table_does() {
        for e in ["&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;"] {
            let (got, end) = super::decode_entity(e, 0).expect("known entity");
            assert_eq!(got, html_escape::decode_html_entities(e), "{e}");
            assert_eq!(end, e.len());
        }
    }

    #[test]
    fn is_inline_is_the_list() {
        for t in super::INLINE_TAGS {
            assert!(super::is_inline(t), "{t}");
            assert!(super::is_inline(&t.to_ascii_uppercase()), "{t}");
        }
        for t in [
            "p",
            "div",
            "title",
            "script",
            "ab",
            "spans",
            "strongest",
            "",
            "img",
        ] {
            assert!(!super::is_inline(t), "{t}");
        }
    }
}
