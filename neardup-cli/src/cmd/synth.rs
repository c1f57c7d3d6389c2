//! `neardup synth`: generate a corpus with planted near-duplicates.

use anyhow::{bail, Result};
use clap::Args;
use neardup::io::{Compression, Encoder, Fields, Input, Reader};
use neardup::persist::AtomicFile;
use neardup::synth::SynthConfig;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct SynthArgs {
    /// Base documents (at most the number of --seeds records when given).
    #[arg(long, default_value_t = SynthConfig::default().base_documents)]
    pub base: usize,
    /// Fewest words per base document.
    #[arg(long, default_value_t = SynthConfig::default().words.0)]
    pub min_words: usize,
    /// Most words per base document.
    #[arg(long, default_value_t = SynthConfig::default().words.1)]
    pub max_words: usize,
    /// Share of base documents that get variants.
    #[arg(long, default_value_t = SynthConfig::default().duplicate_rate)]
    pub duplicate_rate: f64,
    /// Most variants per duplicated base document (1..=N each).
    #[arg(long, default_value_t = SynthConfig::default().max_variants)]
    pub max_variants: usize,
    /// Variant kinds and their relative weights, e.g. `exact=1,edit=2,format=1`. Kinds:
    /// exact, mirror, edit, timestamp, header, rebrand, format, embed, dynamic.
    /// Default: every kind, weight 1.
    #[arg(long)]
    pub variants: Option<String>,
    /// Number of hosts (site0.example …).
    #[arg(long, default_value_t = SynthConfig::default().hosts)]
    pub hosts: usize,
    /// The first N hosts give every page a shared site template (hard negatives:
    /// distinct pages of those sites are not near-duplicates).
    #[arg(long, default_value_t = SynthConfig::default().template_sites)]
    pub template_sites: usize,
    /// Words of a site template (header and footer together).
    #[arg(long, default_value_t = SynthConfig::default().template_words)]
    pub template_words: usize,
    /// Share of base documents written as HTML.
    #[arg(long, default_value_t = SynthConfig::default().html_share)]
    pub html_share: f64,
    /// Vocabulary size of generated text.
    #[arg(long, default_value_t = SynthConfig::default().vocabulary)]
    pub vocabulary: usize,
    /// Real documents (JSONL, text records) to use as base documents instead of
    /// generated text.
    #[arg(long)]
    pub seeds: Option<PathBuf>,
    /// Seed.
    #[arg(long, default_value_t = SynthConfig::default().seed)]
    pub seed: u64,
    /// Output JSONL (`-` for standard output; `.gz`, `.zst`, `.bz2` or `.xz` compresses).
    #[arg(short, long, default_value = "-")]
    pub output: String,
    /// Write the planted pairs here as JSONL: base, variant, kind.
    #[arg(long)]
    pub truth: Option<PathBuf>,
}

pub fn synth(args: SynthArgs) -> Result<()> {
    use neardup::synth::{parse_proportions, Generator, Kind};
    let seeds = match &args.seeds {
        Some(p) => {
            let name = p.to_string_lossy().to_string();
            let mut docs = Vec::new();
            let reader =
                Reader::new(vec![Input::detect(p, name, None)], Fields::default()).strict(true);
            for rec in reader {
                match rec?.into_doc() {
                    Some(Ok(d)) => docs.push(d),
                    Some(Err(r)) => bail!(
                        "seed record {}: {}",
                        r.id.unwrap_or_else(|| "?".into()),
                        r.reason
                    ),
                    None => {}
                }
            }
            Some(Arc::new(docs))
        }
        None => None,
    };
    let cfg = SynthConfig {
        base_documents: args.base,
        words: (args.min_words, args.max_words),
        duplicate_rate: args.duplicate_rate,
        max_variants: args.max_variants,
        variants: match &args.variants {
            Some(v) => parse_proportions(v)?,
            None => Kind::ALL.iter().map(|&k| (k, 1.0)).collect(),
        },
        hosts: args.hosts,
        template_sites: args.template_sites,
        template_words: args.template_words,
        html_share: args.html_share,
        vocabulary: args.vocabulary,
        seeds,
        seed: args.seed,
        ..Default::default()
    };
    let generator = Generator::new(cfg)?;
    // Compressed as the name says, on every core (the same bytes for any number).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = Encoder::with_threads(
        Compression::by_name(&args.output),
        AtomicFile::create(&args.output)?,
        threads,
    )?;
    let mut truth = match &args.truth {
        Some(t) => Some(AtomicFile::create(t)?),
        None => None,
    };
    for (doc, pair) in generator {
        serde_json::to_writer(&mut out, &doc.to_json())?;
        out.write_all(b"\n")?;
        if let (Some(t), Some(p)) = (truth.as_mut(), pair) {
            serde_json::to_writer(&mut *t, &p)?;
            t.write_all(b"\n")?;
        }
    }
    out.finish()?.commit()?;
    if let Some(t) = truth {
        t.commit()?;
    }
    Ok(())
}
