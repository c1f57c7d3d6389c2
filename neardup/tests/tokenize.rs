//! Tokenizer rules (seed 003 §1.2.3.1, §4.2.3; docs/algorithms.md, "terms").
use neardup::sketch::tokenize::{Tokenizer, Tokens};
use neardup::Body;

fn text(s: &str) -> Vec<String> {
    Tokenizer::default().terms(&Body::Text(s.into()), None)
}
fn html(s: &str) -> Vec<String> {
    Tokenizer::default().terms(&Body::Html(s.into()), None)
}
fn html_at(s: &str, url: &str) -> Vec<String> {
    Tokenizer::default().terms(&Body::Html(s.into()), Some(url))
}

#[test]
fn terms_are_maximal_alphanumeric_runs_case_folded() {
    assert_eq!(
        text("Hello, World! it's 2024-01-05"),
        ["hello", "world", "it", "s", "2024", "01", "05"]
    );
    assert_eq!(text("   "), Vec::<String>::new());
    assert_eq!(text("a_b"), ["a", "b"]);
}

#[test]
fn case_folding_can_be_turned_off() {
    let t = Tokenizer::new(false, &[], &[], 1);
    assert_eq!(
        t.terms(&Body::Text("Hello WORLD".into()), None),
        ["Hello", "WORLD"]
    );
}

#[test]
fn urls_in_text_break_at_slashes_and_dots() {
    assert_eq!(
        text("see http://www.Example.com/a/b.html"),
        ["see", "http", "www", "example", "com", "a", "b", "html"]
    );
}

#[test]
fn non_latin_scripts() {
    assert_eq!(text("Ζεύς ΑΘΗΝΑ"), ["ζεύς", "αθηνα"]);
    assert_eq!(text("Привет, мир"), ["привет", "мир"]);
    assert_eq!(text("東京タワー 2x"), ["東京タワー", "2x"]);
    assert_eq!(text("naïve café ١٢٣"), ["naïve", "café", "١٢٣"]);
    // Non-breaking space and other Unicode punctuation separate terms.
    assert_eq!(text("a\u{a0}b—c"), ["a", "b", "c"]);
}

#[test]
fn inline_tags_are_ignored_block_tags_are_white_space() {
    assert_eq!(html("<b>foo</b>bar"), ["foobar"]);
    assert_eq!(html("<p>foo</p>bar"), ["foo", "bar"]);
    assert_eq!(html("x<span class=\"a\">y</span>z<br>w"), ["xyz", "w"]);
    assert_eq!(
        html("<A HREF='x'>Li</A>nk<DIV>next</DIV>"),
        ["link", "next"]
    );
}

#[test]
fn script_style_and_comments_are_dropped() {
    assert_eq!(html("a<script>var x = '<p>no</p>';</script>b"), ["a", "b"]);
    assert_eq!(
        html("a<STYLE type=text/css>p { color: red }</Style >b"),
        ["a", "b"]
    );
    assert_eq!(html("a<!-- hidden words -->b"), ["ab"]);
    assert_eq!(
        html("<!DOCTYPE html><html><head><title>T</title></head><body>x</body></html>"),
        ["t", "x"]
    );
    assert_eq!(html("a<?xml version='1.0'?>b"), ["a", "b"]);
}

#[test]
fn entities_are_decoded() {
    assert_eq!(html("caf&eacute; &amp; bar"), ["café", "bar"]);
    assert_eq!(html("caf&#233;s caf&#xE9;"), ["cafés", "café"]);
    assert_eq!(html("AT&amp;T"), ["at", "t"]);
    assert_eq!(html("a&nbsp;b"), ["a", "b"]);
    // Unknown or unterminated references are text.
    assert_eq!(html("x&bogus;y &amp z"), ["x", "bogus", "y", "amp", "z"]);
}

#[test]
fn broken_and_nested_markup_is_tolerated() {
    // As in browsers, `<` followed by a letter starts a tag (here one never closed).
    assert_eq!(html("a < b and c<d"), ["a", "b", "and", "c"]);
    assert_eq!(html("x<3y"), ["x", "3y"]);
    assert_eq!(html("<div><div><p>deep</div>"), ["deep"]);
    assert_eq!(html("text <p unclosed tag"), ["text"]);
    assert_eq!(html("text <!-- unclosed comment"), ["text"]);
    assert_eq!(html("a<script>never closed"), ["a"]);
    assert_eq!(html("<p title=\"a>b\">c</p>"), ["c"]);
    assert_eq!(html("x</ >y<>z"), ["x", "y", "z"]);
    assert_eq!(html("<"), Vec::<String>::new());
    assert_eq!(html("&"), Vec::<String>::new());
}

#[test]
fn img_src_same_host_is_file_name_other_host_whole_url() {
    let page = "http://www.example.com/dir/page.html";
    assert_eq!(
        html_at("<img src=\"http://www.example.com/img/logo.png\">", page),
        ["logo.png"]
    );
    assert_eq!(
        html_at("<img src=\"/img/logo.png?v=2\">", page),
        ["logo.png"]
    );
    assert_eq!(html_at("<img src='logo.png'>", page), ["logo.png"]);
    assert_eq!(
        html_at("<IMG SRC=\"HTTP://WWW.EXAMPLE.COM/img/Logo.png\">", page),
        ["logo.png"]
    );
    assert_eq!(
        html_at(
            "<img alt=x src=\"http://cdn.other.org/img/logo.png\">",
            page
        ),
        ["http://cdn.other.org/img/logo.png"]
    );
    assert_eq!(
        html_at("<img src=\"//cdn.other.org/a.gif\">", page),
        ["//cdn.other.org/a.gif"]
    );
    // A mirror: same page on another host, images relative or on its own host.
    let mirror = "http://mirror.net/page.html";
    assert_eq!(
        html_at("see<img src=\"http://mirror.net/img/logo.png\">it", mirror),
        html_at("see<img src=\"/img/logo.png\">it", page)
    );
    // Without a page URL every absolute URL counts as another host.
    assert_eq!(
        html("<img src=\"http://a.com/x.png\">"),
        ["http://a.com/x.png"]
    );
    assert_eq!(html("<img src=\"\"><img>"), Vec::<String>::new());
}

#[test]
fn stop_words_and_weights() {
    let t = Tokenizer::new(true, &["The".into(), "of".into()], &[("rust".into(), 5)], 3);
    assert_eq!(
        t.terms(&Body::Text("The Book of Rust".into()), None),
        ["book", "rust"]
    );
    let mut out = Tokens::default();
    t.tokenize(
        &Body::Html("<title>Rust book</title><p>rust".into()),
        None,
        &mut out,
    );
    assert_eq!(out.fps.len(), 3);
    assert_eq!(out.weights, [15, 3, 5]);
    assert!(!Tokenizer::default().is_weighted());
}

#[test]
fn fingerprints_match_terms() {
    let t = Tokenizer::default();
    let body = Body::Html("<p>Alpha <b>be</b>ta</p> &eacute;t&eacute;".into());
    let mut out = Tokens::default();
    t.tokenize(&body, None, &mut out);
    let expect: Vec<u64> = t
        .terms(&body, None)
        .iter()
        .map(|s| neardup::sketch::hash::term_fingerprint(s.as_bytes()))
        .collect();
    assert_eq!(out.fps, expect);
    assert!(out.weights.is_empty());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// The definition: maximal alphanumeric runs, each char lower-cased.
    fn reference(s: &str) -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| w.chars().flat_map(char::to_lowercase).collect())
            .collect()
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            4 => "[a-z]{1,12}",
            2 => "[A-Za-z0-9]{1,20}",
            2 => "[ .,;:/\\n\\t-]{1,3}",
            1 => "[éÉßΣσ東京١]{1,3}",
            1 => "[a-z]{60,130}",
            1 => "\\PC{1,4}",
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn text_terms_match_the_definition(s in text_strategy()) {
            prop_assert_eq!(text(&s), reference(&s));
        }

        #[test]
        fn unfolded_terms_match_the_definition(s in text_strategy()) {
            let t = Tokenizer::new(false, &[], &[], 1);
            let want: Vec<String> = s
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            prop_assert_eq!(t.terms(&Body::Text(s.clone()), None), want);
        }

        #[test]
        fn fingerprints_are_the_hashes_of_the_terms(s in text_strategy(), fold in any::<bool>()) {
            // The scanner hashes most terms in place (a branch-free XXH3 path); the
            // result must be the term fingerprint of the term's text.
            let t = Tokenizer::new(fold, &[], &[], 1);
            for body in [Body::Text(s.clone()), Body::Html(s.clone())] {
                let mut out = Tokens::default();
                t.tokenize(&body, None, &mut out);
                let want: Vec<u64> = t
                    .terms(&body, None)
                    .iter()
                    .map(|x| neardup::sketch::hash::term_fingerprint(x.as_bytes()))
                    .collect();
                prop_assert_eq!(out.fps, want);
            }
        }

        #[test]
        fn html_without_markup_is_text(s in "[a-zA-Z0-9 é.]{0,300}") {
            prop_assert_eq!(html(&s), reference(&s));
        }

        #[test]
        fn inline_tags_never_split_terms(words in proptest::collection::vec("[a-z]{1,70}", 1..20)) {
            let plain = words.concat();
            let marked = words.join("<b>");
            prop_assert_eq!(html(&marked), reference(&plain));
        }

        #[test]
        fn any_bytes_tokenize_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let s = String::from_utf8_lossy(&bytes);
            let _ = html(&s);
            let _ = text(&s);
        }
    }
}
