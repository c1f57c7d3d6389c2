#![no_main]
//! The HTML and text tokenizers and the whole sketch must accept any input.
use libfuzzer_sys::fuzz_target;
use neardup::sketch::tokenize::{Tokenizer, Tokens};
use neardup::{Body, Document, SketchConfig, Sketcher};

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data).into_owned();
    let t = Tokenizer::default();
    let mut out = Tokens::default();
    t.tokenize(&Body::Html(s.clone()), Some("http://example.com/a"), &mut out);
    // The string view and the fingerprint view agree.
    assert_eq!(t.terms(&Body::Html(s.clone()), Some("http://example.com/a")).len(), out.fps.len());
    out.clear();
    t.tokenize(&Body::Text(s.clone()), None, &mut out);
    let sk = Sketcher::new(SketchConfig::default()).unwrap();
    let _ = sk.sketch(&Document::html("f", s));
});
