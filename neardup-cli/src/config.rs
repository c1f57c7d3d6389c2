//! The parameters shared by the command-line commands and their TOML configuration
//! file (feature `cli`): every flag of `neardup dedup` is a key of the file, and
//! [`Params::builder`] turns them into a [`PipelineBuilder`].

use clap::{Args, ValueEnum};
use neardup::cluster::{ClusterMode, KeepRule};
use neardup::error::{Error, Result};
use neardup::io::Fields;
use neardup::pipeline::{Pipeline, PipelineBuilder, Preset};
use neardup::verify::{SiteMode, SiteRule};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

/// `--preset`: a named parameter set.
#[derive(Clone, Copy, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PresetArg {
    /// The papers' settings: drops near-identical pages only (a web index, a crawler).
    Paper,
    /// Tuned for recall on judged web pages: also rewrites and reformatted copies (LLM
    /// pretraining data).
    Recall,
}

/// `--strategy`: stage two by class of pair.
#[derive(Clone, Copy, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StrategyArg {
    /// One rule for every pair.
    Uniform,
    /// Stricter within a site.
    Henzinger,
    /// Thresholds given per class.
    Custom,
}

/// `--candidates`: the stage-one generator.
#[derive(Clone, Copy, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CandidatesArg {
    /// Shared supershingles.
    Broder,
    /// Pugh's bucket checksums.
    Pugh,
    /// 64-bit simhash within distance k (permuted tables).
    Simhash,
    /// Charikar distance by block pigeonhole.
    CharikarBlocks,
}

/// `--charikar-features`.
#[derive(Clone, Copy, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FeaturesArg {
    /// Over terms.
    Terms,
    /// Over shingles.
    Shingles,
}

/// `--cluster-mode`.
#[derive(Clone, Copy, ValueEnum, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterModeArg {
    /// Union-find over verified pairs.
    Transitive,
    /// Every member passes against its representative.
    Verified,
}

/// Algorithm parameters, shared by the commands; each overrides the config file,
/// which overrides the preset.
#[derive(Args, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Params {
    /// Named parameter set [default: paper].
    #[arg(long, value_enum)]
    pub preset: Option<PresetArg>,
    /// Terms per shingle [default: 8].
    #[arg(long)]
    pub shingle: Option<usize>,
    /// Min-hash values [default: 84].
    #[arg(long)]
    pub minhashes: Option<usize>,
    /// Supershingles (divides the min-hash count) [default: 6].
    #[arg(long)]
    pub supershingles: Option<usize>,
    /// Site of a page: host, host-no-www, domain (registrable, public suffix list) or
    /// field:NAME (a JSONL field) [default: host].
    #[arg(long)]
    pub site: Option<String>,
    /// Stage two by class of pair: uniform, henzinger (stricter within a site) or custom
    /// (--same-site-threshold / --cross-site-threshold) [default: uniform].
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// custom/henzinger strategy: Charikar agreement needed within a site.
    #[arg(long)]
    pub same_site_threshold: Option<u32>,
    /// custom/henzinger strategy: Charikar agreement needed across sites (and when a
    /// page has no site).
    #[arg(long)]
    pub cross_site_threshold: Option<u32>,
    /// Stage one: broder (supershingles), pugh (bucket checksums), simhash (64-bit
    /// simhash distance ≤ 3, permuted tables) or charikar-blocks (Charikar distance ≤
    /// --block-distance) [default: broder].
    #[arg(long, value_enum)]
    pub candidates: Option<CandidatesArg>,
    /// Pugh: lists per repeat [default: 4].
    #[arg(long)]
    pub pugh_lists: Option<usize>,
    /// Pugh: independent repeats [default: 1].
    #[arg(long)]
    pub pugh_repeats: Option<usize>,
    /// Pugh: order-sensitive list fingerprints instead of order-insensitive.
    #[arg(long)]
    pub pugh_ordered: Option<bool>,
    /// simhash: table design, whose k is the distance (k3-20, k3-16, k3-10, k3-4,
    /// K:R1[,R2…]) [default: k3-10].
    #[arg(long)]
    pub simhash_design: Option<String>,
    /// charikar-blocks: maximum Hamming distance of candidates [default: 12].
    #[arg(long)]
    pub block_distance: Option<u32>,
    /// Remove boilerplate before sketching: a first pass finds, per site, the shingles
    /// on at least --boilerplate-share of its pages, and those pages are sketched
    /// without the terms only such shingles cover [default: off].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub boilerplate: Option<bool>,
    /// Boilerplate: share of a site's pages a shingle must be on [default: 0.5].
    #[arg(long)]
    pub boilerplate_share: Option<f64>,
    /// Boilerplate: sites with fewer pages are untouched [default: 10].
    #[arg(long)]
    pub boilerplate_min_pages: Option<u32>,
    /// Boilerplate: shingle counters per site (bounded memory) [default: 16384].
    #[arg(long)]
    pub boilerplate_capacity: Option<usize>,
    /// Candidates share at least this many supershingles [default: 2].
    #[arg(long)]
    pub min_shared: Option<usize>,
    /// Bits of the Charikar projection, a multiple of 64 [default: 384].
    #[arg(long)]
    pub charikar_bits: Option<usize>,
    /// Features of the Charikar projection: terms or shingles [default: terms].
    #[arg(long, value_enum)]
    pub charikar_features: Option<FeaturesArg>,
    /// Keep a candidate iff at least this many Charikar bits agree [default: 372].
    #[arg(long)]
    pub charikar_threshold: Option<u32>,
    /// Also report every pair whose Charikar agreement is at least this [default: off].
    #[arg(long)]
    pub high_recall: Option<u32>,
    /// transitive, or verified (every member passes against its representative).
    #[arg(long, value_enum)]
    pub cluster_mode: Option<ClusterModeArg>,
    /// Which member of a cluster is kept: first, longest or priority:FIELD [default: first].
    #[arg(long)]
    pub keep: Option<String>,
    /// Worker threads, for sketching and for writing the kept records [default: one per core].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Records with a longer body are rejected [default: 67108864].
    #[arg(long)]
    pub max_document_bytes: Option<usize>,
    /// Seed mixed into every random parameter [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Compute each record's 64-bit simhash [default: true]. `--simhash false` keeps 8
    /// bytes less per record in memory when nothing reads the simhash (refused with
    /// `--candidates simhash`); saved sketches then carry 0 in its place (sketch file
    /// version 4). `neardup stream` leaves it out by itself.
    #[arg(long)]
    pub simhash: Option<bool>,
    /// A TOML file with any of these settings (keys as the flags, without dashes
    /// prefix: `shingle = 5`).
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
}

impl Params {
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
            charikar_bits,
            charikar_features,
            charikar_threshold,
            high_recall,
            cluster_mode,
            keep,
            threads,
            max_document_bytes,
            seed,
            simhash
        );
        Ok(self)
    }

    /// The boilerplate settings, when boilerplate removal is on.
    pub fn boilerplate(&self) -> Result<Option<neardup::sketch::boilerplate::BoilerplateConfig>> {
        if self.boilerplate != Some(true) {
            return Ok(None);
        }
        let mut c = neardup::sketch::boilerplate::BoilerplateConfig::default();
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
            b.preset(match p {
                PresetArg::Paper => Preset::Paper,
                PresetArg::Recall => Preset::Recall,
            });
        }
        self.sketch_settings(b.sketch_config_mut());
        if let Some(v) = self.min_shared {
            b.min_shared(v);
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
            b.cluster_mode(match m {
                ClusterModeArg::Transitive => ClusterMode::Transitive,
                ClusterModeArg::Verified => ClusterMode::Verified,
            });
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
    fn sketch_settings(&self, c: &mut neardup::SketchConfig) {
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
            c.charikar_features = match f {
                FeaturesArg::Terms => neardup::Features::Terms,
                FeaturesArg::Shingles => neardup::Features::Shingles,
            };
        }
        if let Some(v) = self.seed {
            c.seed = v;
        }
        if let Some(v) = self.simhash {
            c.simhash = v;
        }
    }

    /// Stage two by class of pair (`--strategy` and its thresholds).
    fn strategy_settings(&self, b: &mut PipelineBuilder) -> Result<()> {
        match self.strategy {
            None | Some(StrategyArg::Uniform) => {}
            Some(StrategyArg::Henzinger) | Some(StrategyArg::Custom) => {
                if matches!(self.strategy, Some(StrategyArg::Custom))
                    && (self.same_site_threshold.is_none() || self.cross_site_threshold.is_none())
                {
                    return Err(Error::Config(
                        "--strategy custom needs --same-site-threshold and --cross-site-threshold"
                            .into(),
                    ));
                }
                b.strategy(neardup::verify::Strategy::Henzinger {
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
        let limits = neardup::candidates::BucketLimits::default();
        let pugh_default = neardup::sketch::pugh::PughConfig::default();
        let pugh_cfg = neardup::sketch::pugh::PughConfig {
            lists: self.pugh_lists.unwrap_or(pugh_default.lists),
            repeats: self.pugh_repeats.unwrap_or(pugh_default.repeats),
            order: match self.pugh_ordered {
                Some(true) => neardup::sketch::pugh::Order::Sensitive,
                Some(false) => neardup::sketch::pugh::Order::Insensitive,
                None => pugh_default.order,
            },
            ..pugh_default
        };
        match self.candidates {
            None | Some(CandidatesArg::Broder) => {}
            Some(CandidatesArg::Pugh) => {
                b.sketch_config_mut().pugh = Some(pugh_cfg);
                b.candidates(Arc::new(neardup::candidates::PughChecksums { limits }));
            }
            Some(CandidatesArg::Simhash) => {
                let design = neardup::index::Design::named(
                    self.simhash_design
                        .as_deref()
                        .unwrap_or(neardup::index::Design::DEFAULT_NAME),
                )?;
                b.candidates(Arc::new(neardup::candidates::SimhashCandidates { design }));
            }
            Some(CandidatesArg::CharikarBlocks) => {
                b.candidates(Arc::new(neardup::candidates::CharikarBlocks {
                    max_distance: self
                        .block_distance
                        .unwrap_or(neardup::candidates::CharikarBlocks::DEFAULT_MAX_DISTANCE),
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

/// The record field flags of the commands that read JSONL records.
#[derive(clap::Args, Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FieldArgs {
    /// JSONL field holding the id.
    #[arg(long, default_value_t = Fields::default().id)]
    pub id_field: String,
    /// JSONL field holding plain text.
    #[arg(long, default_value_t = Fields::default().text)]
    pub text_field: String,
    /// JSONL field holding HTML (used when the text field is absent).
    #[arg(long, default_value_t = Fields::default().html)]
    pub html_field: String,
    /// JSONL field holding the URL.
    #[arg(long, default_value_t = Fields::default().url)]
    pub url_field: String,
}

impl Default for FieldArgs {
    fn default() -> Self {
        let f = Fields::default();
        FieldArgs {
            id_field: f.id,
            text_field: f.text,
            html_field: f.html,
            url_field: f.url,
        }
    }
}

impl FieldArgs {
    /// The library's field names, with the priority and site fields of the settings.
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
