//! `hlo`: every shape in an HLO module (a serialized `HloModuleProto`, `HloProto` or
//! `HloSnapshot`, HLO text or StableHLO text), each validated, then a summary.
//!
//! The library's reader ([`crate::hlo::module::ModuleReader`]) gives the entries; this command
//! only prints them. A proto is read whole (no size cap) and walked in place, text is streamed;
//! the listing is spooled (memory up to 4 MiB, then a temporary file) until the pass ends, so a
//! listing is never cut short by an error, and `--json` output is always one complete object.
//! Memory is the input (a proto) plus a constant, whatever the module holds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::codec::{MAX_REPORTED, WireReport};
use crate::hlo::mlir::ValueAttributes;
use crate::hlo::module::{Entry, EntryKind, Listed, ModuleReader, Shardy};
use crate::hlo::text::TextOptions;
use crate::hlo::{self, HloMessage};
use crate::proto::ShapeProto;

use crate::cli::Io;
use crate::cli::args::{HloArgs, HloType, ModuleFormatArgs};
use crate::cli::cmd::decode;
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, ModuleInput};
use crate::cli::output::{self, Reply};
use crate::cli::temp::TempFile;

fn message(kind: HloType) -> HloMessage {
    match kind {
        HloType::Module => HloMessage::Module,
        HloType::Proto => HloMessage::Proto,
        HloType::Snapshot => HloMessage::Snapshot,
    }
}

/// The name of a message and the `--type` that reads it.
fn named(message: HloMessage) -> (&'static str, &'static str) {
    match message {
        HloMessage::Module => ("HloModuleProto", "module"),
        HloMessage::Proto => ("HloProto", "proto"),
        HloMessage::Snapshot => ("HloSnapshot", "snapshot"),
    }
}

/// The message a proto module file holds: the one `--type` names, else the one its bytes read
/// as whole ([`hlo::detect`], the file name `path` a hint), else a module (whose error then
/// says that none fits).
pub(crate) fn resolve(given: Option<HloType>, bytes: &[u8], path: Option<&str>) -> HloMessage {
    given.map_or_else(|| hlo::detect(bytes, path).unwrap_or(HloMessage::Module), message)
}

/// A failure to read a proto module, with which `--type` reads it when another does, or that
/// none does when it was told from the bytes.
pub(crate) fn hinted(failure: Failure, given: Option<HloType>, bytes: &[u8], path: Option<&str>) -> Failure {
    let Failure::Invalid(text) = failure else { return failure };
    let note = match (given, hlo::detect(bytes, path)) {
        (Some(given), Some(found)) if found != message(given) => {
            let (name, flag) = named(found);
            format!(" (the bytes read as an {name}: give `--type {flag}`, or no `--type`)")
        }
        (None, None) => " (the bytes read as none of HloModuleProto, HloProto and HloSnapshot: \
             `--type module|proto|snapshot` names one, to see where it fails)"
            .to_owned(),
        _ => String::new(),
    };
    Failure::Invalid(format!("{text}{note}"))
}

/// Where the listing goes while the walk runs: nowhere (a summary only), text or JSON lines,
/// or what `info` shows of a module.
enum Listing<'w> {
    None,
    Text(&'w mut dyn Write),
    Json { out: &'w mut dyn Write, first: bool },
    Collect(&'w mut Collected),
}

/// What `info` shows of a module besides the counts: the entry computation layout (the host
/// program shape's parameters and result) and the first [`MAX_REPORTED`] instruction shardings
/// (`sharded` counts them all).
#[derive(Default)]
pub(crate) struct Collected {
    pub entry: Vec<(String, ShapeProto)>,
    pub shardings: Vec<(String, Result<String, String>)>,
    pub sharded: usize,
}

/// A module as `info` summarizes it, read as `hlo` reads it.
pub(crate) struct ModuleSummary {
    pub name: String,
    pub computations: usize,
    pub instructions: usize,
    pub collected: Collected,
}

/// Reads a module (text or proto) once, as the listing does, keeping what `info` shows.
pub(crate) fn module_summary(
    input: &ModuleInput,
    given: Option<HloType>,
    format: ModuleFormatArgs,
    path: &str,
) -> Result<ModuleSummary, Failure> {
    let mut collected = Collected::default();
    let (name, computations, tally) = match input {
        ModuleInput::Proto(bytes) => {
            if bytes.is_empty() {
                return Err(Failure::invalid("empty input: no HLO bytes"));
            }
            let kind_of = resolve(given, bytes, Some(path));
            let read = |collected: &mut Collected| -> Result<_, Failure> {
                let mut reader = ModuleReader::proto(bytes, kind_of)?;
                let tally = walk(&mut reader, &mut Listing::Collect(collected), Failure::from)?;
                Ok((reader.name().to_owned(), reader.computations(), tally))
            };
            read(&mut collected).map_err(|f| hinted(f, given, bytes, Some(path)))?
        }
        text => walk_text(text, format, path, &mut Listing::Collect(&mut collected))?,
    };
    let instructions = tally.counts.get(EntryKind::Instruction.index()).copied().unwrap_or(0);
    Ok(ModuleSummary { name, computations, instructions, collected })
}

impl Listing<'_> {
    fn write(&mut self, text: &str) -> Result<(), Failure> {
        let out: &mut dyn Write = match self {
            Self::None | Self::Collect(_) => return Ok(()),
            Self::Text(out) | Self::Json { out, .. } => *out,
        };
        out.write_all(text.as_bytes()).map_err(|e| Failure::invalid(format!("cannot write to stdout: {e}")))
    }
}

/// What the summary says. The finding lists for JSON keep at most [`MAX_REPORTED`] entries
/// each (the counts count them all), so memory does not grow with the module.
#[derive(Default)]
struct Tally {
    /// Shapes by kind ([`EntryKind::index`]).
    counts: [usize; 7],
    total: usize,
    invalid: usize,
    first_invalid: Option<String>,
    unknown: Vec<Value>,
    non_canonical: Vec<Value>,
    unknown_total: usize,
    non_canonical_total: usize,
    /// Instructions with a Shardy sharding, those whose conversion disagrees with their XLA
    /// sharding, and those whose Shardy text (or the module's meshes) is refused.
    shardy_total: usize,
    shardy_disagree: usize,
    shardy_refused: usize,
    /// The text listing's line being written (its buffer reused).
    line: String,
}

impl Tally {
    fn shape(&mut self, entry: &Entry) {
        if let Some(count) = self.counts.get_mut(entry.kind().index()) {
            *count = count.saturating_add(1);
        }
        self.total = self.total.saturating_add(1);
        if let Some(error) = entry.shape.error() {
            self.invalid = self.invalid.saturating_add(1);
            self.first_invalid.get_or_insert_with(|| format!("{}: {error}", entry.site));
        }
        if let Some(shardy) = &entry.shardy {
            self.shardy(shardy);
        }
    }

    fn shardy(&mut self, shardy: &Shardy) {
        self.shardy_total = self.shardy_total.saturating_add(1);
        if shardy.disagrees == Some(true) {
            self.shardy_disagree = self.shardy_disagree.saturating_add(1);
        }
        if shardy.converted.is_err() {
            self.shardy_refused = self.shardy_refused.saturating_add(1);
        }
    }

    fn report(&mut self, site: &str, report: &WireReport) {
        let (unknown, non_canonical) = decode::report_json(report);
        for (list, items) in [(&mut self.unknown, unknown), (&mut self.non_canonical, non_canonical)] {
            if let Value::Array(items) = items {
                for mut item in items.into_iter().take(MAX_REPORTED.saturating_sub(list.len())) {
                    if let Value::Object(fields) = &mut item {
                        fields.insert("site".to_owned(), json!(site));
                    }
                    list.push(item);
                }
            }
        }
        let unknown = report.unknown_fields.len().saturating_add(report.omitted_unknown_fields);
        let non_canonical = report.non_canonical.len().saturating_add(report.omitted_non_canonical);
        self.unknown_total = self.unknown_total.saturating_add(unknown);
        self.non_canonical_total = self.non_canonical_total.saturating_add(non_canonical);
    }

    /// The counts of the kinds seen, by name.
    fn count_map(&self) -> BTreeMap<&'static str, usize> {
        EntryKind::ALL.iter().zip(self.counts).filter(|(_, n)| *n > 0).map(|(k, n)| (k.name(), n)).collect()
    }

    fn summary(&self, name: &str) -> String {
        let breakdown = self.count_map().iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
        let shardy = if self.shardy_total == 0 {
            String::new()
        } else {
            format!(
                ", {} Shardy shardings ({} disagree, {} refused)",
                self.shardy_total, self.shardy_disagree, self.shardy_refused
            )
        };
        format!(
            "{name}summary: {} shapes ({breakdown}), {} invalid, {} unknown fields, {} non-canonical encodings{shardy}",
            self.total, self.invalid, self.unknown_total, self.non_canonical_total,
        )
    }

    /// The JSON keys after `shapes`.
    fn json_tail(&self) -> serde_json::Map<String, Value> {
        let mut tail = serde_json::Map::new();
        tail.insert("counts".into(), json!(self.count_map()));
        tail.insert("total".into(), json!(self.total));
        tail.insert("invalid".into(), json!(self.invalid));
        tail.insert("unknown_fields".into(), json!(self.unknown));
        tail.insert("non_canonical".into(), json!(self.non_canonical));
        tail.insert("unknown_fields_total".into(), json!(self.unknown_total));
        tail.insert("non_canonical_total".into(), json!(self.non_canonical_total));
        tail.insert(
            "shardy".into(),
            json!({"total": self.shardy_total, "disagree": self.shardy_disagree, "refused": self.shardy_refused}),
        );
        tail
    }

    fn error(&self) -> Option<String> {
        self.first_invalid.as_ref().map(|first| format!("{} invalid shape(s); first: {first}", self.invalid))
    }
}

/// The attributes of a StableHLO argument or result listed beside it.
fn mlir_extras(attributes: &ValueAttributes) -> serde_json::Map<String, Value> {
    let mut extras = serde_json::Map::new();
    if let Some(mode) = &attributes.layout_mode {
        extras.insert("layout_mode".into(), json!(mode));
    }
    if let Some(kind) = &attributes.memory_kind {
        extras.insert("memory_kind".into(), json!(kind));
    }
    if let Some(info) = &attributes.result_info {
        extras.insert("result_info".into(), json!(info));
    }
    if let Some(output) = attributes.aliasing_output {
        extras.insert("aliasing_output".into(), json!(output));
    }
    if attributes.buffer_donor {
        extras.insert("buffer_donor".into(), json!(true));
    }
    extras
}

/// Counts one entry and writes it to `listing`: the site, XLA's text of the shape, the sharding
/// (XLA's text, or why it is refused), why the shape is invalid, and the Shardy sharding where
/// it disagrees or is refused.
fn entry(entry: &Entry, tally: &mut Tally, listing: &mut Listing<'_>) -> Result<(), Failure> {
    tally.shape(entry);
    let error = entry.shape.error();
    match listing {
        Listing::None => {}
        Listing::Collect(collected) => {
            if entry.in_entry_layout {
                collected.entry.push((entry.site.to_string(), entry.shape.proto().clone()));
            }
            if let Some(sharding) = entry.sharding.as_deref() {
                collected.sharded = collected.sharded.saturating_add(1);
                if collected.shardings.len() < MAX_REPORTED {
                    let sharding = sharding.as_ref().map(ToString::to_string).map_err(ToString::to_string);
                    collected.shardings.push((entry.site.to_string(), sharding));
                }
            }
        }
        Listing::Text(out) => {
            // One reused line, written to the (buffered) output at once. Writing to a String
            // cannot fail.
            let line = &mut tally.line;
            line.clear();
            entry.site.push_to(line);
            line.push_str(" / ");
            line.push_str(entry.shape.text());
            match entry.sharding.as_deref() {
                Some(Ok(sharding)) => {
                    let _ = write!(line, "  sharding={sharding}");
                }
                Some(Err(s)) => {
                    let _ = write!(line, "  [invalid sharding: {s}]");
                }
                None => {}
            }
            if let Some(e) = error {
                let _ = write!(line, "  [invalid: {e}]");
            }
            match entry.shardy.as_deref() {
                Some(Shardy { converted: Ok(sharding), disagrees: Some(true) }) => {
                    let _ = write!(line, "  [shardy: {sharding} disagrees]");
                }
                Some(Shardy { converted: Err(e), .. }) => {
                    let _ = write!(line, "  [invalid shardy: {e}]");
                }
                _ => {}
            }
            line.push('\n');
            out.write_all(line.as_bytes()).map_err(|e| Failure::invalid(format!("cannot write to stdout: {e}")))?;
        }
        Listing::Json { first, .. } => {
            let mut fields = serde_json::Map::new();
            fields.insert("site".into(), json!(entry.site.to_string()));
            fields.insert("kind".into(), json!(entry.kind().name()));
            fields.insert("shape".into(), json!(entry.shape.text()));
            fields.insert("valid".into(), json!(error.is_none()));
            fields.insert("error".into(), json!(error.map(ToString::to_string)));
            if let Some(attributes) = &entry.attributes {
                fields.extend(mlir_extras(attributes));
            }
            match entry.sharding.as_deref() {
                Some(Ok(sharding)) => fields.insert("sharding".into(), json!(sharding.to_string())),
                Some(Err(e)) => fields.insert("sharding_error".into(), json!(e.to_string())),
                None => None,
            };
            if let Some(shardy) = &entry.shardy {
                match &shardy.converted {
                    Ok(sharding) => fields.insert("shardy".into(), json!(sharding.to_string())),
                    Err(e) => fields.insert("shardy_error".into(), json!(e.to_string())),
                };
                if let Some(disagrees) = shardy.disagrees {
                    fields.insert("shardy_disagrees".into(), json!(disagrees));
                }
            }
            let separator = if std::mem::take(first) { "" } else { "," };
            listing.write(&format!("{separator}{}", Value::Object(fields)))?;
        }
    }
    Ok(())
}

/// Reads the module to its end, writing each entry and finding to `listing` as it comes; the
/// reader's error made a failure by `failed`.
fn walk(
    reader: &mut ModuleReader<'_>,
    listing: &mut Listing<'_>,
    failed: impl Fn(crate::Error) -> Failure,
) -> Result<Tally, Failure> {
    let mut tally = Tally::default();
    while let Some(item) = reader.next_item().map_err(&failed)? {
        match item {
            Listed::Entry(found) => entry(&found, &mut tally, listing)?,
            Listed::Report { site, report } => {
                tally.report(&site, &report);
                if let Listing::Text(_) = listing {
                    for line in report.to_string().lines() {
                        listing.write(&format!("{site} / {line}\n"))?;
                    }
                }
            }
        }
    }
    Ok(tally)
}

/// The summary of one module (for `--lines`).
fn summary(given: Option<HloType>, bytes: &[u8], name: &str, path: &str) -> Result<Reply, Failure> {
    if bytes.is_empty() {
        return Err(Failure::invalid("empty input: no HLO bytes"));
    }
    let kind_of = resolve(given, bytes, Some(path));
    let read = || -> Result<_, Failure> {
        let mut reader = ModuleReader::proto(bytes, kind_of)?;
        let tally = walk(&mut reader, &mut Listing::None, Failure::from)?;
        Ok((reader.name().to_owned(), reader.computations(), tally))
    };
    let (module, computations, tally) = read().map_err(|f| hinted(f, given, bytes, Some(path)))?;
    let mut json = serde_json::Map::new();
    json.insert("module".into(), json!(module));
    json.insert("computations".into(), json!(computations));
    json.insert("shapes".into(), Value::Null);
    json.extend(tally.json_tail());
    Ok(Reply { text: tally.summary(name), json: Value::Object(json), error: tally.error(), warnings: Vec::new() })
}

/// The end of a listing: the JSON keys after `shapes`, or the summary line.
fn finish(json: bool, tally: &Tally, listing: &mut Listing<'_>) -> Result<(), Failure> {
    let tail = if json {
        let rest = Value::Object(tally.json_tail()).to_string();
        // `rest` is `{…}`: its keys continue the object after `shapes`.
        format!("],{}\n", rest.strip_prefix('{').unwrap_or(&rest))
    } else {
        format!("{}\n", tally.summary(""))
    };
    listing.write(&tail)
}

/// The full listing of one serialized module.
fn list(
    given: Option<HloType>,
    bytes: &[u8],
    path: Option<&str>,
    json: bool,
    stdout: &mut dyn Write,
) -> Result<Status, Failure> {
    if bytes.is_empty() {
        return Err(Failure::invalid("empty input: no HLO bytes"));
    }
    let kind_of = resolve(given, bytes, path);
    let mut reader = ModuleReader::proto(bytes, kind_of).map_err(|e| hinted(e.into(), given, bytes, path))?;
    spooled(json, stdout, |listing| {
        let tally = walk(&mut reader, listing, Failure::from).map_err(|f| hinted(f, given, bytes, path))?;
        Ok((reader.name().to_owned(), reader.computations(), tally))
    })
}

pub fn run(args: &HloArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    if args.output.lines {
        return output::each_line(io, args.output.json, input::LineKind::Path, |line| {
            match input::module_input(None, Some(Path::new(line)), args.format.format)? {
                ModuleInput::Proto(bytes) => summary(args.message, &bytes, &format!("{line}: "), line),
                text => text_summary(&text, args.format, line, &format!("{line}: ")),
            }
        });
    }
    let path = args.file.as_deref().or(args.path.as_deref());
    match input::module_input(Some(&mut *io.stdin), path, args.format.format)? {
        ModuleInput::Proto(bytes) => {
            let name = path.and_then(|p| p.file_name()).and_then(|n| n.to_str());
            list(args.message, &bytes, name, args.output.json, io.stdout)
        }
        text => list_text(&text, args.format, &display_path(path), args.output.json, io.stdout),
    }
}

// ---------------------------------------------------------------------------------------------
// HLO and StableHLO text: the same listing from a text stream.

/// The name errors give the input: its path, or `<stdin>`.
pub(crate) fn display_path(path: Option<&Path>) -> String {
    path.map_or_else(|| "<stdin>".to_owned(), |p| p.display().to_string())
}

/// A text reader's error as `path:line:col: message` with the line and caret.
pub(crate) fn text_failure(path: &str, error: &crate::Error) -> Failure {
    Failure::invalid(format!("{path}:{error}"))
}

/// The module's name and computation count, and the tally, of one pass over the text.
fn walk_text(
    text: &ModuleInput,
    format: ModuleFormatArgs,
    path: &str,
    listing: &mut Listing<'_>,
) -> Result<(String, usize, Tally), Failure> {
    let options = TextOptions { max_statement_bytes: format.max_statement_bytes };
    let stream = text.text_reader()?;
    let mut reader =
        if text.is_mlir() { ModuleReader::mlir(stream, options) } else { ModuleReader::text(stream, options) };
    let tally = walk(&mut reader, listing, |error| text_failure(path, &error))?;
    Ok((reader.name().to_owned(), reader.computations(), tally))
}

/// The summary of one text module (for `--lines`).
fn text_summary(text: &ModuleInput, format: ModuleFormatArgs, path: &str, prefix: &str) -> Result<Reply, Failure> {
    let (module, computations, tally) = walk_text(text, format, path, &mut Listing::None)?;
    let mut json = serde_json::Map::new();
    json.insert("module".into(), json!(module));
    json.insert("computations".into(), json!(computations));
    json.insert("shapes".into(), Value::Null);
    json.extend(tally.json_tail());
    Ok(Reply { text: tally.summary(prefix), json: Value::Object(json), error: tally.error(), warnings: Vec::new() })
}

/// The full listing of a text module, read once.
fn list_text(
    text: &ModuleInput,
    format: ModuleFormatArgs,
    path: &str,
    json: bool,
    stdout: &mut dyn Write,
) -> Result<Status, Failure> {
    spooled(json, stdout, |listing| walk_text(text, format, path, listing))
}

/// Where a text listing waits until the module has been read to its end: memory up to
/// [`SPOOL_MEMORY`], then an unlinked temporary file (`cli/temp.rs`). The text is read once; a
/// syntax error discards the spool, so nothing is printed, and the header (which needs the
/// computation count) is written before the spooled entries.
struct Spool {
    memory: Vec<u8>,
    file: Option<TempFile>,
}

/// The listing bytes a [`Spool`] keeps in memory before it moves to a file.
const SPOOL_MEMORY: usize = 4 << 20;

impl Spool {
    fn new() -> Self {
        Self { memory: Vec::new(), file: None }
    }

    /// Writes everything spooled to `out`.
    fn copy_to(&mut self, out: &mut dyn Write) -> io::Result<()> {
        use std::io::Seek;
        if let Some(temp) = &mut self.file {
            let file = temp.file_mut();
            io::Write::flush(file)?;
            file.seek(io::SeekFrom::Start(0))?;
            io::copy(file, out)?;
        }
        out.write_all(&self.memory)
    }
}

impl Write for Spool {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.len().saturating_add(bytes.len()) > SPOOL_MEMORY {
            self.file = Some(TempFile::anonymous("xla-shape-listing")?);
        }
        match &mut self.file {
            Some(temp) => {
                let file = temp.file_mut();
                // The memory part is written last: keep it empty once the file exists.
                if !self.memory.is_empty() {
                    file.write_all(&self.memory)?;
                    self.memory.clear();
                }
                file.write_all(bytes)?;
            }
            None => self.memory.extend_from_slice(bytes),
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A listing made by one `walk` (which gives the module's name, its computation count and the
/// tally): the entries are spooled ([`Spool`]) until the module has been read to its end, so an
/// error prints nothing and the header knows the computation count; then the header, the
/// entries and the summary are written.
fn spooled(
    json: bool,
    stdout: &mut dyn Write,
    walk: impl FnOnce(&mut Listing<'_>) -> Result<(String, usize, Tally), Failure>,
) -> Result<Status, Failure> {
    let spool_failed = |e: io::Error| Failure::invalid(format!("cannot spool the listing: {e}"));
    let mut spool = io::BufWriter::with_capacity(1 << 16, Spool::new());
    let mut listing = if json { Listing::Json { out: &mut spool, first: true } } else { Listing::Text(&mut spool) };
    let (module, computations, tally) = walk(&mut listing)?;
    let mut spool = spool.into_inner().map_err(|e| spool_failed(e.into_error()))?;
    let mut out = io::BufWriter::new(stdout);
    let head = if json {
        format!("{{\"module\":{},\"computations\":{computations},\"shapes\":[", json!(module))
    } else {
        let plural = if computations == 1 { "" } else { "s" };
        format!("module {module} ({computations} computation{plural})\n")
    };
    let write_failed = |e: io::Error| Failure::invalid(format!("cannot write to stdout: {e}"));
    out.write_all(head.as_bytes()).map_err(write_failed)?;
    spool.copy_to(&mut out).map_err(write_failed)?;
    let mut listing = Listing::Text(&mut out);
    finish(json, &tally, &mut listing)?;
    out.flush().map_err(write_failed)?;
    match tally.error() {
        Some(error) => Err(Failure::invalid(output::shorten(&error))),
        None => Ok(Status::Ok),
    }
}
