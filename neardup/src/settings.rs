//! The settings of a run, as every front end spells them: the flags of `neardup
//! dedup`, the keys of its TOML file, the keywords of the Python package and of the
//! Spark job. One struct ([`Params`]) parsed by one parser (serde), validated once
//! into a [`PipelineBuilder`] ([`Params::builder`]); one table ([`PARAMS`],
//! [`RECORD_SETTINGS`]) says each setting's type, choices, defaults and meaning, from
//! which the command line makes its flags and help and the Python package its stubs.
//!
//! ```
//! use neardup::settings::Params;
//!
//! let p = Params::from_toml("preset = \"recall\"\nshingle = 5")?;
//! let (builder, priority_field) = p.builder()?;
//! let pipeline = builder.build()?;
//! assert_eq!(pipeline.sketcher().config().shingle_size, 5);
//! assert!(priority_field.is_none());
//! # Ok::<(), neardup::Error>(())
//! ```

use crate::candidates::{BucketLimits, CharikarBlocks, PughChecksums, SimhashCandidates};
use crate::cluster::{ClusterMode, KeepRule};
use crate::error::{Error, Result};
use crate::io::{Fields, Format};
use crate::pipeline::{Pipeline, PipelineBuilder, Preset};
use crate::sketch::boilerplate::BoilerplateConfig;
use crate::sketch::pugh::{Order, PughConfig};
use crate::sketch::tokenize::TokenizerVersion;
use crate::sketch::{Features, SketchConfig};
use crate::verify::{SiteMode, SiteRule, Strategy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;

/// `strategy`: stage two by class of pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StrategyName {
    /// One rule for every pair.
    Uniform,
    /// Stricter within a site.
    Henzinger,
    /// Thresholds given per class.
    Custom,
}

/// `candidates`: the stage-one generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GeneratorName {
    /// Shared supershingles.
    Broder,
    /// Pugh's bucket checksums.
    Pugh,
    /// 64-bit simhash within distance k (permuted tables).
    Simhash,
    /// Charikar distance by block pigeonhole.
    CharikarBlocks,
}

/// The algorithm settings, each unset unless given: a flag overrides the config file
/// ([`Params::merged`]), which overrides the preset. Keys are the flags without their
/// dashes (`charikar-threshold`); [`PARAMS`] documents each.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[allow(missing_docs)] // each field is documented in `PARAMS`, the one table of them
pub struct Params {
    pub preset: Option<Preset>,
    pub shingle: Option<usize>,
    pub minhashes: Option<usize>,
    pub supershingles: Option<usize>,
    pub site: Option<String>,
    pub strategy: Option<StrategyName>,
    pub same_site_threshold: Option<u32>,
    pub cross_site_threshold: Option<u32>,
    pub candidates: Option<GeneratorName>,
    pub pugh_lists: Option<usize>,
    pub pugh_repeats: Option<usize>,
    pub pugh_ordered: Option<bool>,
    pub simhash_design: Option<String>,
    pub block_distance: Option<u32>,
    pub boilerplate: Option<bool>,
    pub boilerplate_share: Option<f64>,
    pub boilerplate_min_pages: Option<u32>,
    pub boilerplate_capacity: Option<usize>,
    pub min_shared: Option<usize>,
    pub band: Option<usize>,
    pub charikar_bits: Option<usize>,
    pub charikar_features: Option<Features>,
    pub charikar_threshold: Option<u32>,
    pub high_recall: Option<u32>,
    pub cluster_mode: Option<ClusterMode>,
    pub keep: Option<String>,
    pub threads: Option<usize>,
    pub max_document_bytes: Option<usize>,
    pub seed: Option<u64>,
    pub simhash: Option<bool>,
    pub tokenizer: Option<u32>,
    /// A TOML file with any of these settings, read by [`Params::merged`]; never part
    /// of the file itself.
    #[serde(skip)]
    pub config: Option<PathBuf>,
}

impl Params {
    /// Parses the settings from a JSON object whose keys are the flags without their
    /// dashes (`{"charikar-threshold": 380}`): what the Python keywords and the command
    /// line's flags become. Unknown keys and values of the wrong type are errors.
    /// An error names the setting and its value (`charikar-threshold = 99999999999:
    /// invalid value: …, expected u32`).
    pub fn from_json(map: Map<String, Value>) -> Result<Params> {
        serde_json::from_value(Value::Object(map.clone())).map_err(|e| {
            let culprit = map.iter().find(|(k, v)| {
                let one = Map::from_iter([((*k).clone(), (*v).clone())]);
                serde_json::from_value::<Params>(Value::Object(one)).is_err()
            });
            Error::Config(match culprit {
                Some((k, v)) if !e.to_string().starts_with("unknown field") => {
                    format!("{k} = {v}: {e}")
                }
                _ => e.to_string(),
            })
        })
    }

    /// Parses a TOML configuration (keys as the flags without the leading dashes).
    pub fn from_toml(text: &str) -> Result<Params> {
        toml::from_str(text).map_err(|e| Error::Config(format!("invalid configuration: {e}")))
    }

    /// Fills unset fields from the config file.
    pub fn merged(mut self) -> Result<Params> {
        let Some(path) = self.config.clone() else {
            return Ok(self);
        };
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let file = Params::from_toml(&text)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        macro_rules! fill { ($($f:ident),*) => { $( if self.$f.is_none() { self.$f = file.$f; } )* } }
        fill!(
            preset,
            site,
            boilerplate,
            boilerplate_share,
            boilerplate_min_pages,
            boilerplate_capacity,
            strategy,
            same_site_threshold,
            cross_site_threshold,
            candidates,
            pugh_lists,
            pugh_repeats,
            pugh_ordered,
            block_distance,
            simhash_design,
            shingle,
            minhashes,
            supershingles,
            min_shared,
            band,
            charikar_bits,
            charikar_features,
            charikar_threshold,
            high_recall,
            cluster_mode,
            keep,
            threads,
            max_document_bytes,
            seed,
            simhash,
            tokenizer
        );
        Ok(self)
    }

    /// The boilerplate settings, when boilerplate removal is on.
    pub fn boilerplate(&self) -> Result<Option<BoilerplateConfig>> {
        if self.boilerplate != Some(true) {
            return Ok(None);
        }
        let mut c = BoilerplateConfig::default();
        if let Some(v) = self.boilerplate_share {
            c.min_share = v;
        }
        if let Some(v) = self.boilerplate_min_pages {
            c.min_pages = v;
        }
        if let Some(v) = self.boilerplate_capacity {
            c.capacity = v;
        }
        c.validate()?;
        Ok(Some(c))
    }

    /// `--site` as the library's rule (`host` when unset).
    pub fn site_rule(&self) -> Result<SiteRule> {
        self.site.as_deref().unwrap_or("host").parse()
    }

    /// The record field holding the site (`--site field:NAME`), if any.
    pub fn site_field(&self) -> Result<Option<String>> {
        Ok(self.site_rule()?.field().map(str::to_owned))
    }

    /// `--keep` as the library's rule (`first` when unset).
    pub fn keep_rule(&self) -> Result<KeepRule> {
        self.keep.as_deref().unwrap_or("first").parse()
    }

    /// The pipeline builder and the priority field, if any.
    pub fn builder(&self) -> Result<(PipelineBuilder, Option<String>)> {
        let mut b = Pipeline::builder();
        if let Some(p) = self.preset {
            b.preset(p);
        }
        self.sketch_settings(b.sketch_config_mut());
        if let Some(v) = self.tokenizer_version()? {
            b.sketch_config_mut().tokenizer = v;
        }
        if let Some(v) = self.min_shared {
            b.min_shared(v);
        }
        if let Some(v) = self.band {
            b.band((v > 0).then_some(v));
        }
        match self.site_rule()? {
            SiteRule::Url(SiteMode::Host) | SiteRule::Field(_) => {}
            rule => {
                b.site_mode(rule.mode());
            }
        }
        self.strategy_settings(&mut b)?;
        self.candidate_settings(&mut b)?;
        if let Some(v) = self.charikar_threshold {
            b.charikar_threshold(v);
        }
        if self.high_recall.is_some() {
            b.high_recall(self.high_recall);
        }
        if let Some(m) = self.cluster_mode {
            b.cluster_mode(m);
        }
        let keep = self.keep_rule()?;
        if keep != KeepRule::First {
            b.keep(keep.keep());
        }
        b.threads(self.threads);
        if let Some(v) = self.max_document_bytes {
            b.max_document_bytes(v);
        }
        Ok((b, keep.field().map(str::to_owned)))
    }

    /// The sketch's settings: shingles, min-hashes, supershingles, projections, seed.
    fn sketch_settings(&self, c: &mut SketchConfig) {
        if let Some(v) = self.shingle {
            c.shingle_size = v;
        }
        if let Some(v) = self.minhashes {
            c.minhashes = v;
        }
        if let Some(v) = self.supershingles {
            c.supershingles = v;
        }
        if let Some(v) = self.charikar_bits {
            c.charikar_bits = v;
        }
        if let Some(f) = self.charikar_features {
            c.charikar_features = f;
        }
        if let Some(v) = self.seed {
            c.seed = v;
        }
        if let Some(v) = self.simhash {
            c.simhash = v;
        }
    }

    /// The tokenizer version (`--tokenizer`), checked.
    fn tokenizer_version(&self) -> Result<Option<TokenizerVersion>> {
        self.tokenizer
            .map(|n| TokenizerVersion::try_from(n).map_err(Error::Config))
            .transpose()
    }

    /// Stage two by class of pair (`--strategy` and its thresholds).
    fn strategy_settings(&self, b: &mut PipelineBuilder) -> Result<()> {
        match self.strategy {
            None | Some(StrategyName::Uniform) => {}
            Some(StrategyName::Henzinger) | Some(StrategyName::Custom) => {
                if matches!(self.strategy, Some(StrategyName::Custom))
                    && (self.same_site_threshold.is_none() || self.cross_site_threshold.is_none())
                {
                    return Err(Error::Config(
                        "--strategy custom needs --same-site-threshold and --cross-site-threshold"
                            .into(),
                    ));
                }
                b.strategy(Strategy::Henzinger {
                    same_site: self.same_site_threshold,
                    cross_site: self.cross_site_threshold,
                });
            }
        }
        Ok(())
    }

    /// Stage one's generator (`--candidates` and its settings); Pugh's checksums are
    /// computed when any Pugh setting is given, for `eval` and `pair`.
    fn candidate_settings(&self, b: &mut PipelineBuilder) -> Result<()> {
        let limits = BucketLimits::default();
        let pugh_default = PughConfig::default();
        let pugh_cfg = PughConfig {
            lists: self.pugh_lists.unwrap_or(pugh_default.lists),
            repeats: self.pugh_repeats.unwrap_or(pugh_default.repeats),
            order: match self.pugh_ordered {
                Some(true) => Order::Sensitive,
                Some(false) => Order::Insensitive,
                None => pugh_default.order,
            },
            ..pugh_default
        };
        match self.candidates {
            None | Some(GeneratorName::Broder) => {}
            Some(GeneratorName::Pugh) => {
                b.sketch_config_mut().pugh = Some(pugh_cfg);
                b.candidates(Arc::new(PughChecksums { limits }));
            }
            Some(GeneratorName::Simhash) => {
                let design = crate::index::Design::named(
                    self.simhash_design
                        .as_deref()
                        .unwrap_or(crate::index::Design::DEFAULT_NAME),
                )?;
                b.candidates(Arc::new(SimhashCandidates { design }));
            }
            Some(GeneratorName::CharikarBlocks) => {
                b.candidates(Arc::new(CharikarBlocks {
                    max_distance: self
                        .block_distance
                        .unwrap_or(CharikarBlocks::DEFAULT_MAX_DISTANCE),
                    limits,
                }));
            }
        }
        if self.candidates.is_none()
            && (self.pugh_lists.is_some()
                || self.pugh_repeats.is_some()
                || self.pugh_ordered.is_some())
        {
            b.sketch_config_mut().pugh = Some(pugh_cfg);
        }
        Ok(())
    }
}

/// The record fields a run reads (keys `id-field`, `text-field`, `html-field`,
/// `url-field`); the site and priority fields come from [`Params`] (`site =
/// "field:NAME"`, `keep = "priority:NAME"`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RecordFields {
    /// The field holding the id.
    pub id_field: String,
    /// The field holding plain text.
    pub text_field: String,
    /// The field holding HTML (read when the text field is absent).
    pub html_field: String,
    /// The field holding the URL.
    pub url_field: String,
}

impl Default for RecordFields {
    fn default() -> Self {
        let f = Fields::default();
        RecordFields {
            id_field: f.id,
            text_field: f.text,
            html_field: f.html,
            url_field: f.url,
        }
    }
}

impl RecordFields {
    /// The reader's field names, with the priority and site fields of the settings.
    pub fn fields(&self, priority: Option<String>, site: Option<String>) -> Fields {
        Fields {
            id: self.id_field.clone(),
            text: self.text_field.clone(),
            html: self.html_field.clone(),
            url: self.url_field.clone(),
            priority,
            site,
        }
    }
}

/// Everything a run over files was given, as its flags name them: what a report keeps
/// (`report.json`'s `settings`) so that the run's pipeline can be made again.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct RunSettings {
    /// The input format, when given (detected otherwise).
    pub format: Option<Format>,
    /// The record fields.
    pub fields: RecordFields,
    /// The algorithm's settings (unset ones are null: the preset's value).
    pub params: Params,
}

impl RunSettings {
    /// The pipeline these settings give and the reader's field names.
    pub fn pipeline(&self) -> Result<(Pipeline, Fields)> {
        let (builder, priority) = self.params.builder()?;
        let fields = self.fields.fields(priority, self.params.site_field()?);
        Ok((builder.build()?, fields))
    }
}

/// One setting as the front ends spell it: its name (a Python keyword; the flag and
/// TOML key with `-` for `_`), its type, its accepted values, its defaults and what it
/// does. The command line makes its flags and their help from [`PARAMS`]; the Python
/// package its stubs and checks from [`PARAMS`] and [`RECORD_SETTINGS`].
#[derive(Debug)]
pub struct Setting {
    /// The keyword (`charikar_threshold`).
    pub name: &'static str,
    /// The type of its value: `int`, `str`, `bool`, `float` or `path`.
    pub ty: &'static str,
    /// The accepted values, when they are a closed set.
    pub choices: &'static [&'static str],
    /// The value it has when not given, as Python source (`""`: none, the setting is
    /// off or derived). The Python suite checks each against the pipeline it gives.
    pub default: &'static str,
    /// Its value under `preset = "recall"` when that differs.
    pub recall: &'static str,
    /// What it does.
    pub doc: &'static str,
}

impl Setting {
    /// The flag's name (`charikar-threshold`).
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }

    /// The defaults as the command line says them: `[default: 372; recall: 815]`
    /// (empty when the setting has none).
    pub fn defaults_help(&self) -> String {
        let plain = |v: &str| v.trim_matches('"').to_ascii_lowercase();
        match (self.default, self.recall) {
            ("", _) => String::new(),
            (d, "") => format!("[default: {}]", plain(d)),
            (d, r) => format!("[default: {}; recall: {}]", plain(d), plain(r)),
        }
    }
}

macro_rules! setting {
    ($name:literal, $ty:literal, [$($c:literal),*], $default:literal, $recall:literal, $doc:literal) => {
        Setting { name: $name, ty: $ty, choices: &[$($c),*], default: $default, recall: $recall, doc: $doc }
    };
}

/// The algorithm settings, the fields of [`Params`], in the order of `neardup dedup
/// --help`.
pub const PARAMS: &[Setting] = &[
    setting!("preset", "str", ["paper", "recall"], "\"paper\"", "", "named parameter set: paper (the papers' settings: near-identical pages only; a web index, a crawler) or recall (tuned for recall on judged web pages: also rewrites and reformatted copies; LLM pretraining data)"),
    setting!("shingle", "int", [], "8", "3", "terms per shingle"),
    setting!("minhashes", "int", [], "84", "168", "min-hash values"),
    setting!("supershingles", "int", [], "6", "84", "supershingles (divides the min-hash count)"),
    setting!("site", "str", [], "\"host\"", "", "site of a page: host, host-no-www, domain (registrable, public suffix list) or field:NAME (a record field)"),
    setting!("strategy", "str", ["uniform", "henzinger", "custom"], "\"uniform\"", "", "stage two by class of pair: one rule, stricter within a site, or the two thresholds below"),
    setting!("same_site_threshold", "int", [], "", "", "henzinger / custom: Charikar agreement needed within a site"),
    setting!("cross_site_threshold", "int", [], "", "", "henzinger / custom: Charikar agreement needed across sites (and without a site)"),
    setting!("candidates", "str", ["broder", "pugh", "simhash", "charikar-blocks"], "\"broder\"", "", "stage one: shared supershingles, Pugh's bucket checksums, simhash distance <= 3, or Charikar distance <= block_distance"),
    setting!("pugh_lists", "int", [], "4", "", "pugh: lists per repeat"),
    setting!("pugh_repeats", "int", [], "1", "", "pugh: independent repeats"),
    setting!("pugh_ordered", "bool", [], "False", "", "pugh: order-sensitive list fingerprints"),
    setting!("simhash_design", "str", [], "\"k3-10\"", "", "simhash: table design (k3-20, k3-16, k3-10, k3-4, K:R1[,R2...])"),
    setting!("block_distance", "int", [], "12", "", "charikar-blocks: maximum Hamming distance of candidates"),
    setting!("boilerplate", "bool", [], "False", "", "remove each site's boilerplate before sketching: a first pass finds, per site, the shingles on at least the boilerplate share of its pages, and those pages are sketched without the terms only such shingles cover"),
    setting!("boilerplate_share", "float", [], "0.5", "", "boilerplate: share of a site's pages a shingle must be on"),
    setting!("boilerplate_min_pages", "int", [], "10", "", "boilerplate: sites with fewer pages are untouched"),
    setting!("boilerplate_capacity", "int", [], "16384", "", "boilerplate: shingle counters per site (bounded memory)"),
    setting!("min_shared", "int", [], "2", "35", "candidates share at least this many supershingles"),
    setting!("band", "int", [], "0", "2", "stage one by LSH bands of this many consecutive supershingles (a candidate also agrees on a whole band; one bucket key per band), or 0 for the m-of-n search"),
    setting!("charikar_bits", "int", [], "384", "1024", "bits of the Charikar projection, a multiple of 64"),
    setting!("charikar_features", "str", ["terms", "shingles"], "\"terms\"", "\"shingles\"", "features of the Charikar projection"),
    setting!("charikar_threshold", "int", [], "372", "815", "keep a candidate iff at least this many Charikar bits agree"),
    setting!("high_recall", "int", [], "", "", "also report every pair whose Charikar agreement is at least this"),
    setting!("cluster_mode", "str", ["transitive", "verified"], "\"transitive\"", "\"verified\"", "union-find over verified pairs, or clusters around centres: every member a verified near-duplicate of the member kept (no chaining)"),
    setting!("keep", "str", [], "\"first\"", "", "which member of a cluster is kept: first, longest or priority:FIELD"),
    setting!("threads", "int", [], "", "", "worker threads, for sketching and writing (default: one per core)"),
    setting!("max_document_bytes", "int", [], "67108864", "", "records with a longer body are rejected"),
    setting!("seed", "int", [], "0", "", "seed mixed into every random parameter"),
    setting!("simhash", "bool", [], "True", "", "compute each record's 64-bit simhash (false keeps 8 bytes less per record when nothing reads it; refused with candidates simhash)"),
    setting!("tokenizer", "int", [], "2", "", "version of the term rules: 2 (Unicode words, NFKC, one term per character in Chinese, Japanese, Thai) or 1 (alphanumeric runs, as files saved before version 2 were made)"),
    setting!("config", "path", [], "", "", "a TOML file of these settings (keys as the flags: shingle = 5); settings given beside it override it"),
];

/// The settings of how records are read, after [`PARAMS`] in the Python keywords.
pub const RECORD_SETTINGS: &[Setting] = &[
    setting!(
        "id_field",
        "str",
        [],
        "\"id\"",
        "",
        "the record field holding the id"
    ),
    setting!(
        "text_field",
        "str",
        [],
        "\"text\"",
        "",
        "the record field holding the text"
    ),
    setting!(
        "html_field",
        "str",
        [],
        "\"html\"",
        "",
        "the record field holding HTML, read when there is no text"
    ),
    setting!(
        "url_field",
        "str",
        [],
        "\"url\"",
        "",
        "the record field holding the URL"
    ),
    setting!(
        "strict",
        "bool",
        [],
        "False",
        "",
        "stop at the first bad record with an error naming it, instead of rejecting it"
    ),
];

/// The setting named `name` (a keyword, `_` for `-`), if any.
pub fn setting(name: &str) -> Option<&'static Setting> {
    PARAMS
        .iter()
        .chain(RECORD_SETTINGS)
        .find(|s| s.name == name)
}

/// A value outside a closed set of choices: an error naming the setting, the value and
/// the accepted values exactly as they are spelled.
pub fn check_choice(name: &str, value: &Value) -> Result<()> {
    let Some(s) = setting(name) else {
        return Ok(());
    };
    match value {
        Value::String(x) if !s.choices.is_empty() && !s.choices.contains(&x.as_str()) => {
            Err(Error::Config(format!(
                "{name}={x:?}: expected one of {}",
                s.choices
                    .iter()
                    .map(|c| format!("{c:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table names exactly the fields of `Params` (serde's keys), in some order:
    /// a field added to one and not the other fails here.
    #[test]
    fn table_names_every_field() {
        let mut p = serde_json::to_value(Params::default()).unwrap();
        let keys: std::collections::BTreeSet<String> =
            p.as_object_mut().unwrap().keys().cloned().collect();
        let mut table: std::collections::BTreeSet<String> =
            PARAMS.iter().map(Setting::flag).collect();
        table.remove("config");
        assert_eq!(keys, table);
    }

    /// The documented defaults are the pipeline's, for the paper and recall presets.
    #[test]
    fn documented_defaults_are_the_pipelines() {
        for (preset, pick) in [(None, false), (Some(Preset::Recall), true)] {
            let p = Params {
                preset,
                ..Params::default()
            };
            let (b, _) = p.builder().unwrap();
            let pipeline = b.build().unwrap();
            let c = pipeline.sketcher().config();
            let doc = |name: &str| {
                let s = setting(name).unwrap();
                let v = if pick && !s.recall.is_empty() {
                    s.recall
                } else {
                    s.default
                };
                v.trim_matches('"').to_string()
            };
            assert_eq!(doc("shingle"), c.shingle_size.to_string());
            assert_eq!(doc("minhashes"), c.minhashes.to_string());
            assert_eq!(doc("supershingles"), c.supershingles.to_string());
            assert_eq!(doc("charikar_bits"), c.charikar_bits.to_string());
            assert_eq!(doc("seed"), c.seed.to_string());
            let th = pipeline.charikar_threshold();
            assert_eq!(doc("charikar_threshold"), th.to_string());
        }
    }

    /// Values are read by their names; a wrong choice names the accepted ones.
    #[test]
    fn parses_and_refuses() {
        let mut m = Map::new();
        m.insert("charikar-threshold".into(), Value::from(380));
        m.insert("candidates".into(), Value::from("charikar-blocks"));
        let p = Params::from_json(m).unwrap();
        assert_eq!(p.charikar_threshold, Some(380));
        assert_eq!(p.candidates, Some(GeneratorName::CharikarBlocks));
        let e = check_choice("candidates", &Value::from("minhash")).unwrap_err();
        assert!(e.to_string().contains("\"charikar-blocks\""), "{e}");
        let mut m = Map::new();
        m.insert("shingles".into(), Value::from(3));
        assert!(Params::from_json(m).is_err());
        assert_eq!(
            setting("charikar_threshold").unwrap().defaults_help(),
            "[default: 372; recall: 815]"
        );
    }
}
