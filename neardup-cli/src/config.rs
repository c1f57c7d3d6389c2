//! The algorithm flags shared by the commands: made from the library's table of
//! settings ([`neardup::settings::PARAMS`]: names, types, choices, defaults and help)
//! and parsed into its one settings struct, [`Params`], by the library's parser, so
//! that the flags, the TOML file and the Python keywords cannot drift apart.

use clap::builder::PossibleValuesParser;
use clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use neardup::io::Fields;
use neardup::settings::{Params, RecordFields, Setting, PARAMS};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The algorithm flags (`--preset`, `--shingle`, … `--config`), one per row of
/// [`PARAMS`], as the library's [`Params`].
#[derive(Clone, Default)]
pub struct ParamFlags(pub Params);

/// The flag of one setting, its help ending with the library's defaults.
fn flag(s: &'static Setting) -> Arg {
    let mut help = s.doc.to_string();
    if let Some(first) = help.get(..1) {
        help.replace_range(..1, &first.to_uppercase());
    }
    let defaults = s.defaults_help();
    if !defaults.is_empty() {
        help = format!("{help} {defaults}");
    }
    let arg = Arg::new(s.name)
        .long(s.flag())
        .value_name(s.name.to_uppercase())
        .help(help)
        .action(ArgAction::Set);
    match s.ty {
        "int" => arg.value_parser(value_parser!(u64)),
        "float" => arg.value_parser(value_parser!(f64)),
        "bool" => arg
            .value_parser(value_parser!(bool))
            .num_args(0..=1)
            .default_missing_value("true"),
        "path" => arg.value_parser(value_parser!(PathBuf)),
        _ if !s.choices.is_empty() => arg.value_parser(PossibleValuesParser::new(s.choices)),
        _ => arg,
    }
}

impl clap::Args for ParamFlags {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(PARAMS.iter().map(flag))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for ParamFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut map = Map::new();
        for s in PARAMS.iter().filter(|s| s.ty != "path") {
            let v = match s.ty {
                "int" => m.get_one::<u64>(s.name).map(|v| Value::from(*v)),
                "float" => m.get_one::<f64>(s.name).map(|v| Value::from(*v)),
                "bool" => m.get_one::<bool>(s.name).map(|v| Value::from(*v)),
                _ => m.get_one::<String>(s.name).map(|v| Value::from(v.as_str())),
            };
            if let Some(v) = v {
                map.insert(s.flag(), v);
            }
        }
        let mut params = Params::from_json(map)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?;
        params.config = m.get_one::<PathBuf>("config").cloned();
        Ok(ParamFlags(params))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The record field flags of the commands that read JSONL records.
#[derive(clap::Args, Debug, Clone)]
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

impl FieldArgs {
    /// The library's record fields.
    pub fn record_fields(&self) -> RecordFields {
        RecordFields {
            id_field: self.id_field.clone(),
            text_field: self.text_field.clone(),
            html_field: self.html_field.clone(),
            url_field: self.url_field.clone(),
        }
    }

    /// The reader's field names, with the priority and site fields of the settings.
    pub fn fields(&self, priority: Option<String>, site: Option<String>) -> Fields {
        self.record_fields().fields(priority, site)
    }
}
