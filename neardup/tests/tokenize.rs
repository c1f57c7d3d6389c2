//! Tokenizer rules (seed 003 §1.2.3.1, §4.2.3; docs/algorithms.md, "terms").
use neardup::sketch::tokenize::{Tokenizer, TokenizerVersion, Tokens};
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
    assert_eq!(text("東京タワー 2x"), ["東", "京", "タワー", "2x"]);
    assert_eq!(text("naïve café ١٢٣"), ["naïve", "café", "١٢٣"]);
    // Non-breaking space and other Unicode punctuation separate terms.
    assert_eq!(text("a\u{a0}b—c"), ["a", "b", "c"]);
}

/// The terms of a few sentences per script, written out by hand from the rules of the
/// module docs (version 2).
mod scripts {
    use super::text;

    #[test]
    fn chinese_is_a_term_per_character() {
        assert_eq!(
            text("我们的文档，有两个版本。"),
            ["我", "们", "的", "文", "档", "有", "两", "个", "版", "本"]
        );
        // Traditional characters, and an extension-B character outside the BMP.
        assert_eq!(text("臺灣𠮷野"), ["臺", "灣", "𠮷", "野"]);
    }

    #[test]
    fn japanese_kana_and_kanji() {
        // Kanji and Hiragana one term per character, a Katakana word (with its
        // prolonged sound mark) one term.
        assert_eq!(
            text("東京タワーへ行きました。"),
            ["東", "京", "タワー", "へ", "行", "き", "ま", "し", "た"]
        );
        // English inside a Japanese sentence, and half-width Katakana made full-width
        // by NFKC.
        assert_eq!(
            text("Rustの所有権はownershipと呼ばれる"),
            [
                "rust",
                "の",
                "所",
                "有",
                "権",
                "は",
                "ownership",
                "と",
                "呼",
                "ば",
                "れ",
                "る"
            ]
        );
        assert_eq!(text("ｶﾀｶﾅ"), ["カタカナ"]);
    }

    #[test]
    fn thai_is_a_term_per_character_with_its_marks() {
        // ภ า ษ า ไ ท ย are letters (Lo); the tone mark ่ (U+0E48, Mn) stays with ง.
        assert_eq!(
            text("ภาษาไทย ง่าย"),
            ["ภ", "า", "ษ", "า", "ไ", "ท", "ย", "ง\u{e48}", "า", "ย"]
        );
    }

    #[test]
    fn hindi_keeps_vowel_signs_and_viramas_in_the_word() {
        // हिन्दी: ह ि न ् द ी, the virama (U+094D, Mn) inside the word.
        assert_eq!(
            text("हिन्दी भाषा।"),
            [
                "\u{939}\u{93f}\u{928}\u{94d}\u{926}\u{940}",
                "\u{92d}\u{93e}\u{937}\u{93e}"
            ]
        );
    }

    #[test]
    fn arabic_keeps_its_vowel_marks_in_the_word() {
        // Fatha, shadda, damma and sukun (Mn) inside their words, in NFKC's canonical
        // order (fatha, class 30, before shadda, class 33, though typed after it);
        // Arabic-Indic digits are a number.
        assert_eq!(
            text("السَّلَامُ عَلَيْكُمْ ١٢"),
            [
                "ال\u{633}\u{64e}\u{651}\u{644}\u{64e}\u{627}\u{645}\u{64f}",
                "\u{639}\u{64e}\u{644}\u{64e}\u{64a}\u{652}\u{643}\u{64f}\u{645}\u{652}",
                "١٢"
            ]
        );
    }

    #[test]
    fn korean_words_are_space_separated() {
        assert_eq!(text("한국어 문서입니다."), ["한국어", "문서입니다"]);
    }

    #[test]
    fn nfkc_and_full_lower_case() {
        // Full-width Latin and digits, a ligature, a decomposed accent, a superscript.
        assert_eq!(text("ＡＢＣ１２３"), ["abc123"]);
        assert_eq!(text("ﬁle"), ["file"]);
        assert_eq!(text("Cafe\u{301}"), ["caf\u{e9}"]);
        assert_eq!(text("x²"), ["x2"]);
        // Full lower-casing: İ becomes i with a combining dot.
        assert_eq!(text("İstanbul"), ["i\u{307}stanbul"]);
        // A full-width less-than sign in HTML is text, never a tag.
        assert_eq!(super::html("a＜b＞c"), ["a", "b", "c"]);
    }

    #[test]
    fn marks_after_a_separator_belong_to_no_term() {
        assert_eq!(text("a \u{301}b"), ["a", "b"]);
    }

    #[test]
    fn version_1_keeps_its_rules() {
        use neardup::sketch::tokenize::{Tokenizer, TokenizerVersion};
        let t = Tokenizer::with_version(TokenizerVersion::V1, true, &[], &[], 1);
        let v1 = |s: &str| t.terms(&neardup::Body::Text(s.into()), None);
        assert_eq!(v1("東京タワーへ行きました。"), ["東京タワーへ行きました"]);
        assert_eq!(v1("ＡＢＣ"), ["ａｂｃ"]);
        // The virama is not alphanumeric: it splits the word.
        assert_eq!(v1("हिन्दी"), ["\u{939}\u{93f}\u{928}", "\u{926}\u{940}"]);
    }
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

    /// Version 1's definition: maximal alphanumeric runs, each char lower-cased.
    fn reference(s: &str) -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| w.chars().flat_map(char::to_lowercase).collect())
            .collect()
    }

    /// Version 2's definition, from other crates than the tokenizer's: NFKC
    /// (`unicode-normalization`), each char lower-cased, the punctuation that UAX #29
    /// lets into a word made a space, then the words of UAX #29's boundaries
    /// (`unicode-segmentation`'s `unicode_words`).
    fn uax29_reference(s: &str) -> Vec<String> {
        use unicode_normalization::UnicodeNormalization;
        use unicode_segmentation::UnicodeSegmentation;
        let folded: String = s
            .nfkc()
            .flat_map(char::to_lowercase)
            .map(|c| match c {
                '\'' | '.' | ':' | ',' | ';' | '_' | '"' | '\u{2019}' | '\u{b7}' => ' ',
                c => c,
            })
            .collect();
        // A mark after a separator is glued to it (WB4); the separator is no part of a
        // term.
        folded
            .unicode_words()
            .map(|w| {
                w.trim_start_matches(|c: char| !c.is_alphanumeric())
                    .to_owned()
            })
            .collect()
    }

    /// Text of many scripts: letters with marks, Han, kana, Thai, Hangul, digits,
    /// full-width forms and punctuation, ASCII and not.
    fn script_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            3 => "[a-zA-Z0-9]{1,12}",
            2 => "[ .,;:/'_\n-]{1,3}",
            2 => "[东京文档版本我们的有两个臺灣]{1,6}",
            1 => "[ぁ-ゖ]{1,4}",
            1 => "[ァ-ヺー]{1,5}",
            1 => "[ก-ฺเ-๎]{1,8}",
            1 => "[ऀ-ॣ]{1,6}",
            1 => "[ء-ٟ]{1,6}",
            1 => "[가-힣]{1,4}",
            1 => "[ΑΣσςά-ώЁа-я]{1,5}",
            1 => "[ＡＺａｚ０９ｶﾞ、。「」’·é\u{301}\u{a0}]{1,3}",
            1 => "[a-z]{60,130}",
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
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
        fn version_1_terms_match_the_definition(s in text_strategy()) {
            let t = Tokenizer::with_version(TokenizerVersion::V1, true, &[], &[], 1);
            prop_assert_eq!(t.terms(&Body::Text(s.clone()), None), reference(&s));
        }

        #[test]
        fn version_1_unfolded_terms_match_the_definition(s in text_strategy()) {
            let t = Tokenizer::with_version(TokenizerVersion::V1, false, &[], &[], 1);
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
        fn terms_are_the_words_of_unicode_word_boundaries(s in script_strategy()) {
            prop_assert_eq!(text(&s), uax29_reference(&s));
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

/// Per script: a paragraph written for this test, a variant with a word or two
/// changed in one sentence (found under the recall preset), and a distinct paragraph
/// of the same language (not found).
mod near_duplicates_per_script {
    use neardup::sketch::tokenize::TokenizerVersion;
    use neardup::{Document, Pipeline, Preset};

    const CASES: &[(&str, &str, &str, &str, bool)] = &[
        (
            "zh",
            "自由软件基金会成立于一九八五年，致力于推广自由软件。自由软件允许用户运行、复制、分发、研究、修改和改进软件。这些自由对于用户控制自己的计算非常重要。许多程序员在世界各地共同开发这些程序，并公开分享源代码。操作系统、编译器和文本编辑器都是常见的例子。",
            "自由软件基金会成立于一九八五年，致力于推广自由软件。自由软件允许用户运行、复制、分发、研究、修改和改进软件。这些自由对于用户控制自己的计算非常重要。许多程序员在全球各国共同开发这些程序，并公开分享源代码。操作系统、编译器和文本编辑器都是常见的例子。",
            "今天早上下了一场大雨，街道上到处都是积水。孩子们穿着雨靴在水坑里跳来跳去，笑声传遍了整个小区。妈妈站在窗前，提醒他们不要着凉。中午雨停了，太阳从云层后面露出来，天空出现了一道美丽的彩虹。",
            true,
        ),
        (
            "ja",
            "このプログラムはファイルの内容を標準出力に表示します。オプションを指定すると、行番号を付けたり、空白行をまとめたりできます。ファイルが指定されない場合は、標準入力から読み込みます。終了ステータスは、成功した場合は零、エラーが発生した場合は零以外です。詳しい説明は、付属の文書を参照してください。",
            "このプログラムはファイルの内容を標準出力に表示します。オプションを指定すると、行番号を付けたり、空白行をまとめたりできます。ファイルが指定されない場合は、標準入力から読み込みます。終了ステータスは、成功した場合は零、エラーが起きた場合は零以外です。詳しい説明は、付属の文書を参照してください。",
            "昨日は友達と一緒に京都へ旅行に行きました。古いお寺や美しい庭園をたくさん見て、とても楽しかったです。昼ご飯には有名なお店で湯豆腐を食べました。夕方には雨が降り始めたので、早めにホテルに戻って休みました。",
            true,
        ),
        (
            "th",
            "โปรแกรมนี้แสดงเนื้อหาของไฟล์ออกทางหน้าจอ ถ้าไม่ได้ระบุไฟล์ โปรแกรมจะอ่านข้อมูลจากอินพุตมาตรฐาน ผู้ใช้สามารถเลือกตัวเลือกเพื่อแสดงหมายเลขบรรทัดได้ เมื่อทำงานสำเร็จ โปรแกรมจะคืนค่าศูนย์ และเมื่อเกิดข้อผิดพลาดจะคืนค่าอื่น",
            "โปรแกรมนี้แสดงเนื้อหาของไฟล์ออกทางจอภาพ ถ้าไม่ได้ระบุไฟล์ โปรแกรมจะอ่านข้อมูลจากอินพุตมาตรฐาน ผู้ใช้สามารถเลือกตัวเลือกเพื่อแสดงหมายเลขบรรทัดได้ เมื่อทำงานสำเร็จ โปรแกรมจะคืนค่าศูนย์ และเมื่อเกิดข้อผิดพลาดจะคืนค่าอื่น",
            "เมื่อวานนี้ฉันไปตลาดกับแม่ เราซื้อผลไม้หลายอย่าง เช่น มะม่วง กล้วย และส้ม ตอนเย็นฝนตกหนักมาก เราจึงรีบกลับบ้านและทำอาหารกินด้วยกัน",
            // Spaces between its phrases give version 1 a term per phrase, enough to
            // find this one.
            false,
        ),
        (
            "hi",
            "यह प्रोग्राम फ़ाइल की सामग्री को स्क्रीन पर दिखाता है। यदि कोई फ़ाइल नहीं दी जाती है, तो यह मानक इनपुट से पढ़ता है। उपयोगकर्ता पंक्ति संख्या दिखाने के लिए विकल्प चुन सकता है। सफल होने पर यह शून्य लौटाता है, और त्रुटि होने पर कोई अन्य संख्या लौटाता है। अधिक जानकारी के लिए साथ दिए गए दस्तावेज़ देखें।",
            "यह प्रोग्राम फ़ाइल की सामग्री को परदे पर दिखाता है। यदि कोई फ़ाइल नहीं दी जाती है, तो यह मानक इनपुट से पढ़ता है। उपयोगकर्ता पंक्ति संख्या दिखाने के लिए विकल्प चुन सकता है। सफल होने पर यह शून्य लौटाता है, और त्रुटि होने पर कोई अन्य संख्या लौटाता है। अधिक जानकारी के लिए साथ दिए गए दस्तावेज़ देखें।",
            "कल मैं अपने दोस्तों के साथ बाज़ार गया था। वहाँ हमने ताज़े फल और सब्ज़ियाँ खरीदीं। शाम को बारिश होने लगी, इसलिए हम जल्दी घर लौट आए और साथ मिलकर खाना बनाया।",
            false,
        ),
        (
            "ar",
            "يعرض هذا البرنامج محتوى الملف على الشاشة. إذا لم يتم تحديد أي ملف، فإنه يقرأ من الإدخال القياسي. يمكن للمستخدم اختيار خيار لعرض أرقام الأسطر. عند النجاح يعيد البرنامج القيمة صفر، وعند حدوث خطأ يعيد قيمة أخرى. لمزيد من المعلومات راجع الوثائق المرفقة مع البرنامج.",
            "يعرض هذا البرنامج محتوى الملف على الشاشة الرئيسية. إذا لم يتم تحديد أي ملف، فإنه يقرأ من الإدخال القياسي. يمكن للمستخدم اختيار خيار لعرض أرقام الأسطر. عند النجاح يعيد البرنامج القيمة صفر، وعند حدوث خطأ يعيد قيمة أخرى. لمزيد من المعلومات راجع الوثائق المرفقة مع البرنامج.",
            "ذهبت أمس مع أصدقائي إلى السوق واشترينا الفواكه والخضروات الطازجة. في المساء بدأ المطر يهطل بغزارة، فعدنا إلى البيت مبكرين وطبخنا العشاء معا.",
            false,
        ),
        (
            "ko",
            "이 프로그램은 파일의 내용을 화면에 출력합니다. 파일을 지정하지 않으면 표준 입력에서 읽습니다. 사용자는 옵션을 사용하여 줄 번호를 표시할 수 있습니다. 성공하면 영을 반환하고, 오류가 발생하면 다른 값을 반환합니다. 자세한 내용은 함께 제공되는 문서를 참고하십시오. 이 문서는 여러 언어로 번역되어 있습니다.",
            "이 프로그램은 파일의 내용을 모니터에 출력합니다. 파일을 지정하지 않으면 표준 입력에서 읽습니다. 사용자는 옵션을 사용하여 줄 번호를 표시할 수 있습니다. 성공하면 영을 반환하고, 오류가 발생하면 다른 값을 반환합니다. 자세한 내용은 함께 제공되는 문서를 참고하십시오. 이 문서는 여러 언어로 번역되어 있습니다.",
            "어제 친구들과 함께 시장에 가서 신선한 과일과 채소를 샀습니다. 저녁에는 비가 많이 내려서 일찍 집으로 돌아와 함께 저녁을 만들어 먹었습니다.",
            false,
        ),
    ];

    fn recall(version: TokenizerVersion) -> Pipeline {
        let mut b = Pipeline::builder();
        b.preset(Preset::Recall);
        b.sketch_config_mut().tokenizer = version;
        b.build().unwrap()
    }

    fn near(p: &Pipeline, a: &str, b: &str) -> bool {
        let (a, b) = (Document::text("a", a), Document::text("b", b));
        let (sa, sb) = (p.sketcher().sketch(&a), p.sketcher().sketch(&b));
        p.rule()
            .judge(p.pair_class(&a, &b), sa.as_ref(), sb.as_ref())
            .near_duplicate
    }

    #[test]
    fn a_variant_is_found_and_a_distinct_text_is_not() {
        let v2 = recall(TokenizerVersion::V2);
        let v1 = recall(TokenizerVersion::V1);
        for &(lang, base, variant, distinct, hidden_by_v1) in CASES {
            assert!(near(&v2, base, variant), "{lang}: the variant is not found");
            assert!(
                !near(&v2, base, distinct),
                "{lang}: a distinct text is paired"
            );
            assert!(
                !near(&v2, variant, distinct),
                "{lang}: a distinct text is paired"
            );
            if hidden_by_v1 {
                // Version 1 makes each clause one term: the one edit changes the
                // clause's term and every shingle over it.
                assert!(!near(&v1, base, variant), "{lang}: version 1 finds it too");
            }
        }
    }
}
