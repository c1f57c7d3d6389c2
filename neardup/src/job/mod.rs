//! A whole run over files, as `neardup dedup` makes it: the inputs read once ahead of
//! the pipeline's workers, every record sketched and judged (against an earlier
//! snapshot's saved sketches, if any), the result reconciled with the reader's own
//! count, then a second pass that writes each record where its fate sends it, the
//! lists (clusters, pairs, mirrors), the report and its HTML page, the accounting
//! checked, and the sketches saved for the next incremental run. The command line, the
//! Python package's `dedup_file` and `neardup sketch` all run this.
//!
//! ```no_run
//! use neardup::job::{Job, Outputs};
//! use neardup::settings::RunSettings;
//!
//! let settings = RunSettings::default();
//! let (pipeline, fields) = settings.pipeline()?;
//! let inputs = neardup::io::shards::expand("crawl/*.jsonl.zst", None)?;
//! let done = Job::new(pipeline, fields, inputs, settings)
//!     .outputs(Outputs {
//!         kept: Some("kept.jsonl.zst".into()),
//!         report: Some("report.json".into()),
//!         ..Outputs::default()
//!     })
//!     .run()?;
//! println!("{} kept of {}", done.dedup.stats.kept, done.dedup.stats.read);
//! # Ok::<(), neardup::Error>(())
//! ```
//!
//! | module | what it does |
//! |---|---|
//! | `mod.rs` | [`Job`]: the passes, the accounting, the saved files |
//! | [`writeback`] | the second pass: each record read again and written where its fate says |
//! | [`kept_ranges`] | the second pass's fast way for plain JSONL inputs (positional writes from the mappings) |
//! | [`sink`] | the files records go to: JSONL lines or Parquet batches, compressed by name, atomic |

pub mod kept_ranges;
pub mod sink;
pub mod writeback;

use crate::error::{Error, Result};
use crate::io::{Fields, Input, RawRecord, ReadAhead, ReadCounter, Reader};
use crate::persist::sketches::SavedSketches;
use crate::persist::AtomicFile;
use crate::pipeline::{Fate, Pipeline, Stats};
use crate::report::html::run::{prepare_run, read_by_ordinal, Prepared};
use crate::report::{
    Accounting, BoilerplateReport, ClusterLine, InputCount, PairLine, Parameters, Report,
    REPORT_FORMAT_VERSION,
};
use crate::settings::RunSettings;
use crate::sketch::boilerplate::{Boilerplate, BoilerplateConfig};
use crate::Dedup;
use kept_ranges::Ranges;
use sink::Sink;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use writeback::{write_back, Targets, Written};

/// Where a job writes; each output is written only when named.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The kept records (`-`: standard output), in input order and in the input's
    /// format, compressed as the name says ([`sink`]).
    pub kept: Option<PathBuf>,
    /// The kept records of each input in a file of its own in this directory.
    pub output_dir: Option<PathBuf>,
    /// Every record with its fate added.
    pub annotate: Option<PathBuf>,
    /// The clusters as JSONL.
    pub clusters: Option<PathBuf>,
    /// The verified pairs as JSONL.
    pub pairs: Option<PathBuf>,
    /// The rejected records as JSONL.
    pub rejects: Option<PathBuf>,
    /// The mirror report as JSONL.
    pub mirrors: Option<PathBuf>,
    /// The report as JSON.
    pub report: Option<PathBuf>,
    /// The report as one HTML page with a sample of clusters.
    pub html: Option<PathBuf>,
    /// The sketches of the earlier snapshot (if any) and of the kept records, for the
    /// next incremental run.
    pub save_sketches: Option<PathBuf>,
}

/// A run over files: made with the pipeline, the reader's fields, the inputs and the
/// settings they came from (which the report keeps); run by [`Job::run`].
pub struct Job {
    pipeline: Pipeline,
    fields: Fields,
    inputs: Vec<Input>,
    settings: RunSettings,
    strict: bool,
    previous: Option<SavedSketches>,
    boilerplate: Option<BoilerplateConfig>,
    outputs: Outputs,
    bytes_read: Arc<AtomicU64>,
}

/// A finished job: the result, the pipeline, the inputs, what was written and read.
pub struct Done {
    /// The result.
    pub dedup: Dedup,
    /// The pipeline that made it (with the boilerplate, when that pass ran).
    pub pipeline: Pipeline,
    /// The inputs, in reading order.
    pub inputs: Vec<Input>,
    /// The settings the job was given.
    pub settings: RunSettings,
    /// The reader's own counts, per input.
    pub counter: ReadCounter,
    /// What the second pass wrote.
    pub written: Written,
    /// The boilerplate pass and its seconds, when it ran.
    pub boilerplate: Option<(Arc<Boilerplate>, f64)>,
    /// The sketches saved ([`Outputs::save_sketches`]).
    pub saved_sketches: Option<usize>,
}

impl Job {
    /// A job over `inputs` with `pipeline` (made from `settings`: [`RunSettings::pipeline`])
    /// reading `fields`; nothing is written until [`Job::outputs`] names the files.
    /// Boilerplate removal runs when the settings ask for it.
    pub fn new(
        pipeline: Pipeline,
        fields: Fields,
        inputs: Vec<Input>,
        settings: RunSettings,
    ) -> Job {
        Job {
            pipeline,
            fields,
            inputs,
            settings,
            strict: false,
            previous: None,
            boilerplate: None,
            outputs: Outputs::default(),
            bytes_read: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Stop at the first bad record with an error naming it, instead of rejecting it.
    pub fn strict(mut self, strict: bool) -> Job {
        self.strict = strict;
        self
    }

    /// Dedup against an earlier snapshot's saved sketches: new records that duplicate
    /// old ones are dropped; old records are not read again.
    pub fn against(mut self, previous: SavedSketches) -> Job {
        self.previous = Some(previous);
        self
    }

    /// Where to write.
    pub fn outputs(mut self, outputs: Outputs) -> Job {
        self.outputs = outputs;
        self
    }

    /// Counts the bytes of records read into `counter` as the first pass reads them
    /// (what a progress bar shows beside the pipeline's own progress).
    pub fn count_bytes(mut self, counter: Arc<AtomicU64>) -> Job {
        self.bytes_read = counter;
        self
    }

    /// Runs the job: the boilerplate pass (when the settings ask), the first pass, the
    /// second pass and the lists, the report and its page, the accounting checked (an
    /// [`Error::Accounting`] naming every count when a record is lost), the sketches
    /// saved.
    pub fn run(mut self) -> Result<Done> {
        self.boilerplate = self.settings.params.boilerplate()?;
        let boilerplate = self.boilerplate_pass()?;
        let first = self.first_pass()?;
        let (written, prepared) = self.second_pass(&first)?;
        let Job {
            pipeline,
            inputs,
            settings,
            outputs,
            ..
        } = self;
        let done = Done {
            dedup: first.dedup,
            pipeline,
            inputs,
            settings,
            counter: first.counter,
            written,
            boilerplate,
            saved_sketches: None,
        };
        done.write_lists(&outputs)?;
        let report = done.report();
        if let (Some(path), Some(prepared)) = (&outputs.html, prepared) {
            let value = serde_json::to_value(&report).map_err(|e| Error::output("report", e))?;
            let page = prepared.render(value, &done.pipeline)?;
            crate::report::html::write(path, &page)?;
        }
        if let Some(path) = &outputs.report {
            write_json(path, &report)?;
        }
        check_accounting(
            &report.accounting,
            &done.dedup.stats,
            done.counter.records(),
        )?;
        let mut done = done;
        if let Some(path) = &outputs.save_sketches {
            let s = saved_sketches(&done.dedup, done.pipeline.sketcher().config(), |f| {
                matches!(f, Fate::Kept)
            });
            s.save(path)?;
            done.saved_sketches = Some(s.len());
        }
        Ok(done)
    }

    /// The inputs' names, by index (a record's `position.input`).
    fn input_names(&self) -> Vec<String> {
        self.inputs.iter().map(|i| i.name.clone()).collect()
    }

    /// A reader of the inputs as the passes read them: parsing left to the pipeline's
    /// workers, records capped at the pipeline's size; `strict` stops at a bad record.
    fn reader(&self, strict: bool) -> Reader {
        Reader::new(self.inputs.clone(), self.fields.clone())
            .strict(strict)
            .defer_parsing(true)
            .max_record_bytes(self.pipeline.max_record_bytes())
    }

    /// The boilerplate pass: per-site shingle counts over the inputs, and the seconds it
    /// took; the pipeline takes the boilerplate. Unreadable records are skipped here and
    /// accounted for by the first pass.
    fn boilerplate_pass(&mut self) -> Result<Option<(Arc<Boilerplate>, f64)>> {
        let Some(cfg) = self.boilerplate else {
            return Ok(None);
        };
        if self.previous.is_some() {
            return Err(Error::Config("boilerplate removal cannot be combined with saved sketches (they were made without this run's boilerplate)".into()));
        }
        let start = std::time::Instant::now();
        let names = self.input_names();
        let fields = &self.fields;
        let parse = |rec: RawRecord| {
            let source = &names[rec.position.input];
            rec.into_document(fields, source)
        };
        let reader = self.reader(false);
        let b = Arc::new(self.pipeline.learn_boilerplate(
            reader.map_while(|r| r.ok()),
            parse,
            cfg,
        )?);
        self.pipeline = self.pipeline.with_boilerplate(b.clone());
        Ok(Some((b, start.elapsed().as_secs_f64())))
    }

    /// The first pass: every record read, sketched and judged (against the saved
    /// sketches of an earlier snapshot, if any), stopped by the first fatal error; the
    /// result reconciled with the reader's count.
    fn first_pass(&self) -> Result<FirstPass> {
        let names = self.input_names();
        let fields = &self.fields;
        let parse = |rec: RawRecord| {
            let source = &names[rec.position.input];
            rec.into_document(fields, source)
        };
        let reader = self.reader(self.strict);
        // What the reader produced, counted by the reader: the reference of the accounting.
        let counter = reader.counter();
        // Uncompressed JSONL files are split into lines by the pipeline's workers as they
        // take their jobs (a mapping: no disk waits, no decompressor); anything else is
        // read on a thread of its own, ahead of the pipeline, in chunks of up to 128
        // records or 1 MiB, 8 chunks queued: at most 10 chunks of 1 MiB plus one record
        // each are held (a count of records alone let 1,024 documents of 64 MiB be read
        // ahead).
        let read_ahead = !self.inputs.iter().all(Input::is_plain_jsonl);
        let mut failed = false;
        let reader = reader.map_while(move |r| {
            if failed {
                return None;
            }
            failed = r.is_err();
            Some(r)
        });
        let records: Box<dyn Iterator<Item = _> + Send> = if read_ahead {
            Box::new(ReadAhead::bounded(reader, 128, 1 << 20, 8))
        } else {
            Box::new(reader)
        };
        // Where each record lies in its file, for the second pass (plain JSONL only).
        let mut ranges = Ranges::new(self.inputs.len(), !read_ahead);
        let mut fatal = None;
        let records = records.map_while(|r| match r {
            Ok(rec) => {
                self.bytes_read.fetch_add(rec.bytes(), Ordering::Relaxed);
                ranges.note(&rec);
                Some(rec)
            }
            Err(e) => {
                fatal = Some(e);
                None
            }
        });
        let dedup = match &self.previous {
            Some(p) => self.pipeline.run_against(p, records, parse)?,
            None => self.pipeline.run_with(records, parse)?,
        };
        if let Some(e) = fatal {
            return Err(e);
        }
        dedup.reconcile(counter.records())?;
        Ok(FirstPass {
            dedup,
            ranges,
            counter,
        })
    }

    /// The second pass: kept records, annotations and rejects written in input order;
    /// meanwhile, on a thread of its own, the HTML page's sample is read back and
    /// rendered (when the page is asked for).
    fn second_pass(&self, first: &FirstPass) -> Result<(Written, Option<Prepared>)> {
        let threads = self.pipeline.threads();
        let o = &self.outputs;
        let targets = Targets {
            output: o
                .kept
                .as_deref()
                .map(|p| Sink::create(p, threads))
                .transpose()?,
            output_dir: o.output_dir.as_deref(),
            annotate: o
                .annotate
                .as_deref()
                .map(|p| Sink::create(p, threads))
                .transpose()?,
            rejects: o.rejects.as_ref().map(AtomicFile::create).transpose()?,
        };
        let (d, ranges, inputs, fields) = (&first.dedup, &first.ranges, &self.inputs, &self.fields);
        let (pipeline, max_record) = (&self.pipeline, self.pipeline.max_record_bytes());
        let (written, prepared) = std::thread::scope(|scope| {
            let prepared = o.html.as_ref().map(|_| {
                scope.spawn(|| {
                    prepare_run(d, pipeline, |wanted| {
                        read_by_ordinal(inputs, fields, max_record, d.previous, wanted, |k| {
                            ranges.locate(k)
                        })
                    })
                })
            });
            let written = write_back(d, inputs, fields, max_record, ranges, targets, threads);
            let prepared = prepared.map(|h| h.join().expect("the HTML page's thread panicked"));
            (written, prepared)
        });
        Ok((written?, prepared.transpose()?))
    }
}

/// What the first pass leaves: the result, where each record lies (plain JSONL), and
/// the reader's own counts.
struct FirstPass {
    dedup: Dedup,
    ranges: Ranges,
    counter: ReadCounter,
}

impl Done {
    /// The run's report (what [`Outputs::report`] writes and the HTML page shows).
    pub fn report(&self) -> Report<'_> {
        let d = &self.dedup;
        Report {
            format_version: REPORT_FORMAT_VERSION,
            neardup_version: env!("CARGO_PKG_VERSION"),
            inputs: self.inputs.iter().map(|i| i.name.as_str()).collect(),
            parameters: Parameters::of(&self.pipeline),
            accounting: self.accounting(),
            stats: &d.stats,
            boilerplate: self
                .boilerplate
                .as_ref()
                .map(|(b, seconds)| boilerplate_report(b, *seconds, &d.stats)),
            peak_memory_bytes: crate::pipeline::peak_memory_bytes(),
            decisions: &d.decisions,
            settings: self.settings.clone(),
        }
    }

    /// The accounting: every record read kept, dropped or rejected, per input (inputs
    /// hold consecutive ordinals, as many as the reader counted) and in total, checked
    /// against the reader's count and what the second pass wrote.
    pub fn accounting(&self) -> Accounting<'_> {
        let d = &self.dedup;
        let mut start = d.previous;
        let per_input: Vec<InputCount> = self
            .inputs
            .iter()
            .zip(self.counter.per_input())
            .zip(&self.written.per_input_kept)
            .map(|((i, (records, bytes)), kept_written)| {
                let end = (start + records as usize).min(d.fates.len());
                let fates = &d.fates[start.min(end)..end];
                start = end;
                InputCount::tally(&i.name, records, bytes, fates, *kept_written)
            })
            .collect();
        let w = &self.written;
        Accounting::of(
            d,
            self.counter.records(),
            per_input,
            [w.kept, w.rejects, w.annotated],
        )
    }

    /// The clusters, pairs and mirror report, each when asked for.
    fn write_lists(&self, o: &Outputs) -> Result<()> {
        let d = &self.dedup;
        if let Some(path) = &o.clusters {
            write_jsonl(path, d.clusters.iter().map(|c| ClusterLine::new(d, c)))?;
        }
        if let Some(path) = &o.pairs {
            write_jsonl(path, d.pairs.iter().map(|p| PairLine::new(d, p)))?;
        }
        if let Some(path) = &o.mirrors {
            write_jsonl(path, d.mirrors().iter())?;
        }
        Ok(())
    }
}

/// The saved sketches of the earlier snapshot (if any) and of the records `keep`
/// selects.
pub fn saved_sketches(
    d: &Dedup,
    config: &crate::SketchConfig,
    keep: impl Fn(&Fate) -> bool,
) -> SavedSketches {
    let mut out = SavedSketches {
        config: config.clone(),
        ids: Vec::new(),
        sites: Vec::new(),
        sketches: crate::Sketches::new(config),
    };
    for (i, f) in d.fates.iter().enumerate() {
        if i < d.previous || keep(f) {
            out.ids.push(d.ids[i].clone());
            out.sites.push(d.site(i).map(str::to_owned));
            out.sketches.push(&d.sketches.get(i).to_owned());
        }
    }
    out
}

/// Writes `rows` as JSON lines to `path`, atomically.
pub fn write_jsonl<T: serde::Serialize>(path: &Path, rows: impl Iterator<Item = T>) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    for r in rows {
        serde_json::to_writer(&mut f, &r)
            .map_err(|e| Error::output(path.display().to_string(), e))?;
        f.write_all(b"\n").map_err(|e| Error::io(path, e))?;
    }
    f.commit()
}

/// Writes `value` as pretty JSON and a newline to `path`, atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    serde_json::to_writer_pretty(&mut f, value)
        .map_err(|e| Error::output(path.display().to_string(), e))?;
    f.write_all(b"\n").map_err(|e| Error::io(path, e))?;
    f.commit()
}

/// An error naming every count when the accounting does not hold.
fn check_accounting(a: &Accounting<'_>, st: &Stats, read: u64) -> Result<()> {
    if a.holds {
        return Ok(());
    }
    Err(Error::Accounting(format!(
        "{read} records read; kept written {:?}, rejects written \
         {:?}, annotated {:?}, {} dropped in clusters, \
         per input {}; statistics: kept {}, \
         exact {}, near {}, rejected {}",
        a.kept_written,
        a.rejects_written,
        a.annotated_written,
        a.dropped_in_clusters,
        a.per_input.iter().all(InputCount::holds),
        st.kept,
        st.exact_duplicates,
        st.near_duplicates,
        st.rejected
    )))
}

/// The report's part on the boilerplate pass.
fn boilerplate_report<'a>(b: &'a Boilerplate, seconds: f64, s: &Stats) -> BoilerplateReport<'a> {
    BoilerplateReport {
        settings: b.config(),
        seconds,
        pages_counted: b.pages(),
        sites_with_boilerplate: b.sites_with_boilerplate(),
        boilerplate_shingles: b.shingles(),
        pages_changed: s.boilerplate_pages,
        terms_and_shingles_removed: s.boilerplate_terms,
        sites: b.report(),
    }
}
