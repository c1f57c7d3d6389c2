//! Saved sketch files: round trip, damage detection, incremental dedup.
use neardup::persist::sketches::SavedSketches;
use neardup::sketch::tokenize::TokenizerVersion;
use neardup::synth::{generate, SynthConfig};
use neardup::{Document, Pipeline, SketchConfig};

fn saved(n: usize) -> SavedSketches {
    let c = generate(&SynthConfig {
        base_documents: n,
        words: (20, 60),
        seed: 4,
        ..Default::default()
    });
    let d = Pipeline::builder()
        .build()
        .unwrap()
        .run(c.documents)
        .unwrap();
    SavedSketches {
        config: SketchConfig::default(),
        ids: d.ids.clone(),
        sites: (0..d.ids.len())
            .map(|i| d.site(i).map(str::to_owned))
            .collect(),
        sketches: d.sketches,
    }
}

#[test]
fn save_load_round_trip_is_exact() {
    let s = saved(40);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.sketches");
    s.save(&p).unwrap();
    let l = SavedSketches::load(&p).unwrap();
    assert_eq!(l.ids, s.ids);
    assert_eq!(l.config, s.config);
    for i in 0..s.len() {
        assert_eq!(l.sketches.get(i), s.sketches.get(i));
    }
    // Overwriting is atomic: no temporary files are left behind.
    s.save(&p).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn every_truncation_and_bit_flip_is_an_error_never_a_panic() {
    let s = saved(5);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.sketches");
    s.save(&p).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    for cut in 0..bytes.len() {
        assert!(
            SavedSketches::from_bytes(&bytes[..cut]).is_err(),
            "cut at {cut} accepted"
        );
    }
    for i in 0..bytes.len() {
        for bit in [0, 3, 7] {
            let mut b = bytes.clone();
            b[i] ^= 1 << bit;
            assert!(
                SavedSketches::from_bytes(&b).is_err(),
                "flip at {i}.{bit} accepted"
            );
        }
    }
    let err = SavedSketches::load(&dir.path().join("missing"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing"));
    std::fs::write(&p, b"hello").unwrap();
    assert!(SavedSketches::load(&p)
        .unwrap_err()
        .to_string()
        .contains("not a neardup sketch file"));
    // Through `load` (a mapping, or a read for an empty file): a cut file is an error
    // naming it, and a whole one loads as saved.
    s.save(&p).unwrap();
    assert_eq!(SavedSketches::load(&p).unwrap().ids, s.ids);
    for cut in [0, 7, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let err = SavedSketches::load(&p).unwrap_err().to_string();
        assert!(err.contains("x.sketches"), "cut at {cut}: {err}");
    }
}

#[test]
fn incremental_dedup_equals_one_run_over_both_snapshots() {
    let c = generate(&SynthConfig {
        base_documents: 300,
        words: (200, 600),
        seed: 8,
        ..Default::default()
    });
    let docs = c.documents;
    let (old, new) = docs.split_at(docs.len() / 2);
    let p = Pipeline::builder().build().unwrap();
    let all = p.run(docs.clone()).unwrap();
    let first = p.run(old.to_vec()).unwrap();
    let mut snap = SavedSketches {
        config: SketchConfig::default(),
        ids: Vec::new(),
        sites: Vec::new(),
        sketches: neardup::Sketches::new(&SketchConfig::default()),
    };
    for i in first.kept.iter() {
        snap.ids.push(first.ids[i as usize].clone());
        snap.sites.push(first.site(i as usize).map(str::to_owned));
        snap.sketches
            .push(&first.sketches.get(i as usize).to_owned());
    }
    let second = p
        .run_against(&snap, new.to_vec(), |d: Document| Ok(d))
        .unwrap();
    second.reconcile(new.len() as u64).unwrap();
    assert_eq!(second.stats.read, new.len() as u64);
    assert_eq!(second.previous, snap.len());
    let kept_ids = |d: &neardup::Dedup| {
        d.kept
            .iter()
            .map(|i| d.ids[i as usize].clone())
            .collect::<Vec<_>>()
    };
    let mut inc = kept_ids(&first);
    inc.extend(kept_ids(&second));
    assert_eq!(inc, kept_ids(&all));
    assert!(second.stats.near_duplicates + second.stats.exact_duplicates > 0);
    // Old records keep their sites, so a pair of an old and a new record has the class
    // the batch run gives it (not "unknown").
    let by_ids = |d: &neardup::Dedup| {
        d.pairs
            .iter()
            .map(|p| {
                (
                    (d.ids[p.a as usize].clone(), d.ids[p.b as usize].clone()),
                    p.class,
                )
            })
            .collect::<std::collections::HashMap<_, _>>()
    };
    let (inc_pairs, all_pairs) = (by_ids(&second), by_ids(&all));
    let spanning: Vec<_> = inc_pairs
        .iter()
        .filter(|(k, _)| old.iter().any(|d| d.id == k.0))
        .collect();
    assert!(!spanning.is_empty());
    let mut compared = 0;
    for (k, class) in spanning {
        if let Some(c) = all_pairs.get(k) {
            assert_eq!(class, c, "pair {k:?}");
            compared += 1;
        }
    }
    assert!(compared > 0);
    // A dropped new record names an old record when it duplicates one.
    assert!(second.fates.iter().skip(second.previous).any(|f| matches!(f, neardup::Fate::NearDuplicate { of } | neardup::Fate::ExactDuplicate { of } if (*of as usize) < second.previous)));
    // Sketches of other settings are refused.
    let other = Pipeline::builder()
        .min_shared(2)
        .sketch_config(SketchConfig::builder().shingle_size(5).build().unwrap())
        .build()
        .unwrap();
    let err = other
        .run_against(&snap, new.to_vec(), |d: Document| Ok(d))
        .unwrap_err();
    assert!(err.to_string().contains("sketch settings differ"));
}

/// Rewrites the format version of a saved file, with its checksum made right.
fn relabel(bytes: &[u8], version: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[8..12].copy_from_slice(&version.to_le_bytes());
    let body = b.len() - 12;
    let crc = crc32fast::hash(&b[..body]);
    b[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Tokenizer-1 settings without the simhash are saved as version 4 and load with it 0;
/// a file whose version does not match what its settings say about the simhash (a
/// version 3 without one would be taken for simhashes of 0 by an older build) is
/// refused as damaged.
#[test]
fn sketches_without_simhash_are_version_4_and_a_mismatch_is_refused() {
    let mut with = saved(12);
    with.config.tokenizer = TokenizerVersion::V1;
    let config = SketchConfig::builder()
        .simhash(false)
        .tokenizer(TokenizerVersion::V1)
        .build()
        .unwrap();
    let mut sketches = neardup::Sketches::new(&config);
    for i in 0..with.len() {
        sketches.push(&with.sketches.get(i).to_owned());
    }
    let without = SavedSketches {
        config,
        ids: with.ids.clone(),
        sites: with.sites.clone(),
        sketches,
    };
    let dir = tempfile::tempdir().unwrap();
    let (p3, p4) = (dir.path().join("3.sketches"), dir.path().join("4.sketches"));
    with.save(&p3).unwrap();
    without.save(&p4).unwrap();
    let (b3, b4) = (std::fs::read(&p3).unwrap(), std::fs::read(&p4).unwrap());
    assert_eq!(&b3[8..12], &3u32.to_le_bytes());
    assert_eq!(&b4[8..12], &4u32.to_le_bytes());
    let l = SavedSketches::load(&p4).unwrap();
    assert!(!l.config.simhash);
    for i in 0..with.len() {
        let mut want = with.sketches.get(i).to_owned();
        assert_ne!(want.simhash, 0);
        want.simhash = 0;
        assert_eq!(l.sketches.get(i).to_owned(), want);
    }
    // The other version written in, the checksum made right: refused by what it says.
    let err = SavedSketches::from_bytes(&relabel(&b4, 3))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("version-3 file") && err.contains("no simhash"),
        "{err}"
    );
    let err = SavedSketches::from_bytes(&relabel(&b3, 4))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("version-4 file") && err.contains("a simhash"),
        "{err}"
    );
    // Unchanged, both load.
    assert!(SavedSketches::from_bytes(&relabel(&b3, 3)).is_ok());
    assert!(SavedSketches::from_bytes(&relabel(&b4, 4)).is_ok());
}

/// Sketches of tokenizer version 2 are saved as version 5, with or without simhashes
/// (the settings say which); a version-5 file of tokenizer 1, or an older version whose
/// settings say tokenizer 2 (an older build would compare its terms with version 1's),
/// is refused as damaged.
#[test]
fn sketches_of_tokenizer_2_are_version_5_and_a_mismatch_is_refused() {
    let with = saved(12);
    assert_eq!(with.config.tokenizer, TokenizerVersion::V2);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("5.sketches");
    with.save(&p).unwrap();
    let b5 = std::fs::read(&p).unwrap();
    assert_eq!(&b5[8..12], &5u32.to_le_bytes());
    assert!(String::from_utf8_lossy(&b5).contains("\"tokenizer\":2"));
    assert_eq!(SavedSketches::from_bytes(&b5).unwrap().config, with.config);
    for old in [3, 4] {
        let err = SavedSketches::from_bytes(&relabel(&b5, old))
            .unwrap_err()
            .to_string();
        assert!(err.contains("tokenizer version 2"), "{err}");
    }
    let mut v1 = with.clone();
    v1.config.tokenizer = TokenizerVersion::V1;
    v1.save(&p).unwrap();
    let b3 = std::fs::read(&p).unwrap();
    assert_eq!(&b3[8..12], &3u32.to_le_bytes());
    assert!(!String::from_utf8_lossy(&b3).contains("tokenizer"));
    let err = SavedSketches::from_bytes(&relabel(&b3, 5))
        .unwrap_err()
        .to_string();
    assert!(err.contains("tokenizer version 1"), "{err}");
}
