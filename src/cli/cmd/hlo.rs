//! `hlo`: every shape in a serialized HLO module, each validated, printed as the walk finds it,
//! then a summary.
//!
//! The module is read whole (no size cap) and walked once in place by [`crate::hlo::walk`]; the
//! listing is spooled (memory up to 4 MiB, then a temporary file) until the walk ends, so a
//! listing is never cut short by a decode error, and `--json` output is always one complete
//! object. Memory is the input plus a constant, whatever the module holds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::codec::{MAX_REPORTED, WireReport};
use crate::hlo::{self, Found, HloMessage, ShapeSite};
use crate::proto::{ProgramShapeProto, ShapeProto};
use crate::sharding::{self, shardy};

use crate::cli::Io;
use crate::cli::args::{HloArgs, HloType, ModuleFormatArgs};
use crate::cli::cmd::decode;
use crate::cli::cmd::printed::{Checked, Key, Printed};
use crate::cli::fail::{Failure, Status};
use crate::cli::input::{self, ModuleInput};
use crate::cli::output::{self, Reply};
use crate::cli::temp::TempFile;
use crate::hlo::mlir::{Item as MlirItem, MlirReader, ShardingAttribute as MlirSharding, Value as MlirValue};
use crate::hlo::text::{Item as TextItem, TextOptions, TextReader};

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

/// The kinds of site the summary counts, by [`kind_index`] (the last two: a StableHLO
/// function's parameters and results).
const KINDS: [&str; 7] = [
    "host_program_shape",
    "computation_program_shape",
    "instruction",
    "outfeed_shape",
    "operand_shapes_with_layout",
    "parameter",
    "result",
];

/// [`KINDS`]' index of a StableHLO function parameter.
const PARAMETER: usize = 5;
/// [`KINDS`]' index of a StableHLO function result.
const RESULT: usize = 6;
/// [`KINDS`]' index of an instruction (a StableHLO operation's result).
const INSTRUCTION: usize = 2;

/// Which kind of site, as an index into [`KINDS`].
fn kind_index(site: &ShapeSite<'_>) -> usize {
    match site {
        ShapeSite::HostParameter { .. } | ShapeSite::HostResult => 0,
        ShapeSite::ComputationParameter { .. } | ShapeSite::ComputationResult { .. } => 1,
        ShapeSite::Instruction { .. } => 2,
        ShapeSite::OutfeedShape { .. } => 3,
        ShapeSite::OperandShape { .. } => 4,
    }
}

/// Where an entry of the listing sits: a site of an HLO module, or of a StableHLO module.
#[derive(Clone, Copy)]
enum Site<'s> {
    Hlo(&'s ShapeSite<'s>),
    Mlir(&'s MlirSite),
}

/// A StableHLO site: `FUNC / parameter N`, `FUNC / result N` or `FUNC / %0`, its kind (an index
/// of [`KINDS`]), whether it belongs to the entry function, and the attributes listed beside it.
pub(crate) struct MlirSite {
    text: String,
    kind: usize,
    entry: bool,
    extras: serde_json::Map<String, Value>,
}

impl Site<'_> {
    fn kind_index(self) -> usize {
        match self {
            Self::Hlo(site) => kind_index(site),
            Self::Mlir(site) => site.kind,
        }
    }

    fn kind(self) -> &'static str {
        KINDS.get(self.kind_index()).copied().unwrap_or_default()
    }

    /// Whether `info` shows it as part of the entry computation layout.
    fn is_entry(self) -> bool {
        match self {
            Self::Hlo(site) => matches!(site, ShapeSite::HostParameter { .. } | ShapeSite::HostResult),
            Self::Mlir(site) => site.entry && site.kind != INSTRUCTION,
        }
    }

    fn push(self, line: &mut String) {
        match self {
            Self::Hlo(site) => push_site(line, site),
            Self::Mlir(site) => line.push_str(&site.text),
        }
    }
}

impl std::fmt::Display for Site<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Hlo(site) => site.fmt(f),
            Self::Mlir(site) => f.write_str(&site.text),
        }
    }
}

/// Writes `site` as its `Display` does, without formatting machinery for the common sites.
fn push_site(line: &mut String, site: &ShapeSite<'_>) {
    match site {
        ShapeSite::Instruction { computation, instruction, .. } => {
            line.push_str(computation);
            line.push_str(" / ");
            line.push_str(instruction);
        }
        // Writing to a String cannot fail.
        _ => {
            let _ = write!(line, "{site}");
        }
    }
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
                let header = hlo::header(bytes, kind_of)?;
                let tally = walk(kind_of, bytes, &meshes(header.sdy_meshes), &mut Listing::Collect(collected))?;
                Ok((header.name.to_owned(), header.computations, tally))
            };
            read(&mut collected).map_err(|f| hinted(f, given, bytes, Some(path)))?
        }
        text => walk_text(text, format, path, &mut Listing::Collect(&mut collected))?,
    };
    let instructions = tally.count_map().get("instruction").copied().unwrap_or(0);
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
    /// Shapes by kind ([`KINDS`]).
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
    /// Each distinct shape printed and validated once.
    printed: Printed,
    /// The text listing's line being written (its buffer reused).
    line: String,
}

impl Tally {
    fn shape(&mut self, site: Site<'_>, error: Option<&str>) {
        if let Some(count) = self.counts.get_mut(site.kind_index()) {
            *count = count.saturating_add(1);
        }
        self.total = self.total.saturating_add(1);
        if let Some(error) = error {
            self.invalid = self.invalid.saturating_add(1);
            self.first_invalid.get_or_insert_with(|| format!("{site}: {error}"));
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
        KINDS.iter().zip(self.counts).filter(|(_, n)| *n > 0).map(|(k, n)| (*k, n)).collect()
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

/// The sharding of the instruction at `site` of a proto, if it has one: XLA's text, or why it
/// is refused.
fn sharding_of(site: &ShapeSite<'_>) -> Option<Result<String, String>> {
    match *site {
        ShapeSite::Instruction { computation, instruction, sharding: Some(bytes), .. } => {
            let sited = hlo::SitedSharding { computation, instruction, bytes };
            Some(sited.sharding().map(|s| s.to_string()).map_err(|e| e.to_string()))
        }
        _ => None,
    }
}

/// The `sharding={…}` attribute of a text instruction, printed back as XLA prints it (the dump's
/// text parsed, so the listing is the proto's), or why it is refused.
fn sharding_of_text(attribute: Option<&str>) -> Option<Result<String, String>> {
    attribute.map(|text| sharding::canonical_text(text).map_err(|e| e.to_string()))
}

/// The module's Shardy meshes (`docs/shardy.md`): none without an `xla.sdy.meshes` attribute, or
/// why they are refused.
type Meshes = Result<BTreeMap<String, shardy::Mesh>, String>;

/// The meshes of an `xla.sdy.meshes` value, if the module has one.
fn meshes(text: Option<&str>) -> Meshes {
    text.map_or_else(
        || Ok(BTreeMap::new()),
        |text| shardy::parse_meshes(text).map_err(|e| format!("{}: {e}", hlo::SDY_MESHES)),
    )
}

/// An instruction's Shardy sharding converted to XLA's text (or why it is refused) and, when the
/// instruction also has an XLA sharding, whether the two disagree.
struct Shardy {
    converted: Result<String, String>,
    disagrees: Option<bool>,
}

/// The Shardy side of an instruction with an `xla.sdy.sharding` (or why its attributes are
/// refused): converted over the module's `meshes` and compared with its XLA `sharding`.
fn shardy_of(
    text: Option<Result<&str, String>>,
    meshes: &Meshes,
    sharding: Option<&Result<String, String>>,
) -> Option<Shardy> {
    let converted = text?.and_then(|text| {
        let meshes = meshes.as_ref().map_err(Clone::clone)?;
        shardy::to_hlo_sharding(text, meshes).map(|s| s.to_string()).map_err(|e| e.to_string())
    });
    let disagrees = match (&converted, sharding) {
        (Ok(converted), Some(Ok(xla))) => Some(converted != xla),
        _ => None,
    };
    Some(Shardy { converted, disagrees })
}

/// Validates one shape, counts it and writes its entry (with the instruction's sharding, when
/// it has one: XLA's text, or why it is refused; and its Shardy sharding's, marked when the two
/// disagree).
fn shape<'k>(
    site: Site<'_>,
    (shape, key): (&ShapeProto, impl Into<Key<'k>>),
    extras: (Option<Result<String, String>>, Option<Shardy>),
    tally: &mut Tally,
    listing: &mut Listing<'_>,
) -> Result<(), Failure> {
    // The cache is moved out for the call so that the entry can borrow from it.
    let mut printed = std::mem::take(&mut tally.printed);
    let result = entry(site, shape, printed.get(key.into(), shape), extras, tally, listing);
    tally.printed = printed;
    result
}

/// [`shape`] with the shape printed and validated (as XLA loads modules, with
/// `ValidateShapeWithOptionalLayout`).
fn entry(
    site: Site<'_>,
    shape: &ShapeProto,
    checked: &Checked,
    (sharding, shardy): (Option<Result<String, String>>, Option<Shardy>),
    tally: &mut Tally,
    listing: &mut Listing<'_>,
) -> Result<(), Failure> {
    let error = checked.error.as_deref();
    tally.shape(site, error);
    if let Some(shardy) = &shardy {
        tally.shardy(shardy);
    }
    match listing {
        Listing::None => {}
        Listing::Collect(collected) => {
            if site.is_entry() {
                collected.entry.push((site.to_string(), shape.clone()));
            }
            if let Some(sharding) = sharding {
                collected.sharded = collected.sharded.saturating_add(1);
                if collected.shardings.len() < MAX_REPORTED {
                    collected.shardings.push((site.to_string(), sharding));
                }
            }
        }
        Listing::Text(out) => {
            // One reused line, written to the (buffered) output at once. Writing to a String
            // cannot fail.
            let line = &mut tally.line;
            line.clear();
            site.push(line);
            line.push_str(" / ");
            line.push_str(&checked.text);
            match &sharding {
                Some(Ok(text)) => {
                    let _ = write!(line, "  sharding={text}");
                }
                Some(Err(s)) => {
                    let _ = write!(line, "  [invalid sharding: {s}]");
                }
                None => {}
            }
            if let Some(e) = error {
                let _ = write!(line, "  [invalid: {e}]");
            }
            match &shardy {
                Some(Shardy { converted: Ok(text), disagrees: Some(true) }) => {
                    let _ = write!(line, "  [shardy: {text} disagrees]");
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
            let mut entry = json!({
                "site": site.to_string(),
                "kind": site.kind(),
                "shape": checked.text,
                "valid": error.is_none(),
                "error": error,
            });
            if let (Site::Mlir(mlir), Value::Object(fields)) = (site, &mut entry) {
                fields.extend(mlir.extras.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            if let (Some(sharding), Value::Object(fields)) = (sharding, &mut entry) {
                match sharding {
                    Ok(text) => fields.insert("sharding".into(), json!(text)),
                    Err(e) => fields.insert("sharding_error".into(), json!(e)),
                };
            }
            if let (Some(shardy), Value::Object(fields)) = (shardy, &mut entry) {
                match shardy.converted {
                    Ok(text) => fields.insert("shardy".into(), json!(text)),
                    Err(e) => fields.insert("shardy_error".into(), json!(e)),
                };
                if let Some(disagrees) = shardy.disagrees {
                    fields.insert("shardy_disagrees".into(), json!(disagrees));
                }
            }
            let separator = if std::mem::take(first) { "" } else { "," };
            listing.write(&format!("{separator}{entry}"))?;
        }
    }
    Ok(())
}

/// Walks the module, writing each shape and finding to `listing` as it comes.
fn walk(kind_of: HloMessage, bytes: &[u8], meshes: &Meshes, listing: &mut Listing<'_>) -> Result<Tally, Failure> {
    let mut tally = Tally::default();
    for found in hlo::walk(bytes, kind_of) {
        match found? {
            Found::Shape(sited) => {
                let sharding = sharding_of(&sited.site);
                let text = match sited.site {
                    ShapeSite::Instruction { shardy: Some(text), .. } => Some(Ok(text)),
                    _ => None,
                };
                let shardy = shardy_of(text, meshes, sharding.as_ref());
                shape(Site::Hlo(&sited.site), (&sited.shape, None), (sharding, shardy), &mut tally, listing)?;
            }
            Found::Report(found) => {
                let site = found.site.to_string();
                tally.report(&site, &found.report);
                if let Listing::Text(_) = listing {
                    for line in found.report.to_string().lines() {
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
        let header = hlo::header(bytes, kind_of)?;
        let tally = walk(kind_of, bytes, &meshes(header.sdy_meshes), &mut Listing::None)?;
        Ok((header, tally))
    };
    let (header, tally) = read().map_err(|f| hinted(f, given, bytes, Some(path)))?;
    let mut json = serde_json::Map::new();
    json.insert("module".into(), json!(header.name));
    json.insert("computations".into(), json!(header.computations));
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

/// The full listing of one module, written as the walk goes.
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
    let header = hlo::header(bytes, kind_of).map_err(|e| hinted(e.into(), given, bytes, path))?;
    spooled(json, stdout, |listing| {
        let tally =
            walk(kind_of, bytes, &meshes(header.sdy_meshes), listing).map_err(|f| hinted(f, given, bytes, path))?;
        Ok((header.name.to_owned(), header.computations, tally))
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
// HLO text: the same listing from `hlo::text::TextReader`.

/// The name errors give the input: its path, or `<stdin>`.
pub(crate) fn display_path(path: Option<&Path>) -> String {
    path.map_or_else(|| "<stdin>".to_owned(), |p| p.display().to_string())
}

/// A text reader's error as `path:line:col: message` with the line and caret.
pub(crate) fn text_failure(path: &str, error: &crate::Error) -> Failure {
    Failure::invalid(format!("{path}:{error}"))
}

/// The sites of a program shape's parameters and result.
fn program_sites<'a>(
    program: &'a ProgramShapeProto,
    host: bool,
    computation: &'a str,
) -> impl Iterator<Item = (ShapeSite<'a>, &'a ShapeProto)> {
    let parameters = program.parameters.iter().enumerate().map(move |(index, shape)| {
        let name = program.parameter_names.get(index).map_or("", String::as_str);
        let site = if host {
            ShapeSite::HostParameter { index, name }
        } else {
            ShapeSite::ComputationParameter { computation, index, name }
        };
        (site, shape)
    });
    let result = program
        .result
        .as_ref()
        .map(|shape| (if host { ShapeSite::HostResult } else { ShapeSite::ComputationResult { computation } }, shape));
    parameters.chain(result)
}

/// The module's name and computation count, and the tally, of one pass over the text.
fn walk_text(
    text: &ModuleInput,
    format: ModuleFormatArgs,
    path: &str,
    listing: &mut Listing<'_>,
) -> Result<(String, usize, Tally), Failure> {
    if text.is_mlir() {
        return walk_mlir(text, format, path, listing);
    }
    let options = TextOptions { max_statement_bytes: format.max_statement_bytes };
    let mut reader = TextReader::with_options(text.text_reader()?, options);
    let mut tally = Tally::default();
    let (mut name, mut computations, mut host_given) = (String::new(), 0usize, false);
    let mut module_meshes: Meshes = Ok(BTreeMap::new());
    loop {
        let item = match reader.next_item() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(error) => return Err(text_failure(path, &error)),
        };
        match item {
            TextItem::Module(module) => {
                module.name.clone_into(&mut name);
                module_meshes =
                    match module.frontend_attributes.map(|a| hlo::text::frontend_attribute(a, hlo::SDY_MESHES)) {
                        Some(Err(e)) => Err(format!("{}: {e}", hlo::SDY_MESHES)),
                        Some(Ok(found)) => meshes(found.as_deref()),
                        None => Ok(BTreeMap::new()),
                    };
                if let Some(layout) = module.entry_computation_layout {
                    host_given = true;
                    for (site, shape_proto) in program_sites(layout, true, "") {
                        shape(Site::Hlo(&site), (shape_proto, None), (None, None), &mut tally, listing)?;
                    }
                }
            }
            TextItem::Computation(_) => computations = computations.saturating_add(1),
            TextItem::Instruction(i) => {
                let (computation, instruction) = (i.computation, i.name);
                let sdy =
                    i.attribute("frontend_attributes").map(|a| hlo::text::frontend_attribute(a, hlo::SDY_SHARDING));
                let sdy = match sdy {
                    Some(Ok(Some(text))) => Some(Ok(text)),
                    Some(Err(e)) => Some(Err(format!("frontend_attributes: {e}"))),
                    Some(Ok(None)) | None => None,
                };
                let site =
                    ShapeSite::Instruction { computation, instruction, opcode: i.opcode, sharding: None, shardy: None };
                let sharding = sharding_of_text(i.attribute("sharding"));
                let shardy = shardy_of(
                    sdy.as_ref().map(|r| r.as_deref().map_err(Clone::clone)),
                    &module_meshes,
                    sharding.as_ref(),
                );
                shape(Site::Hlo(&site), (i.shape, Some(i.shape_text)), (sharding, shardy), &mut tally, listing)?;
                if let Some(outfeed) = i.outfeed_shape {
                    shape(
                        Site::Hlo(&ShapeSite::OutfeedShape { computation, instruction }),
                        (outfeed, None),
                        (None, None),
                        &mut tally,
                        listing,
                    )?;
                }
                for (operand, operand_shape) in i.operand_shapes_with_layout.iter().enumerate() {
                    let site = ShapeSite::OperandShape { computation, instruction, operand };
                    shape(Site::Hlo(&site), (operand_shape, None), (None, None), &mut tally, listing)?;
                }
            }
            TextItem::ComputationEnd(end) => {
                if end.entry && !host_given {
                    for (site, shape_proto) in program_sites(end.program_shape, true, "") {
                        shape(Site::Hlo(&site), (shape_proto, None), (None, None), &mut tally, listing)?;
                    }
                }
                for (site, shape_proto) in program_sites(end.program_shape, false, end.name) {
                    shape(Site::Hlo(&site), (shape_proto, None), (None, None), &mut tally, listing)?;
                }
            }
        }
    }
    Ok((name, computations, tally))
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

// ---------------------------------------------------------------------------------------------
// StableHLO MLIR text: the same listing from `hlo::mlir::MlirReader` (`docs/stablehlo.md` §4).

/// The `HloSharding` text XLA makes of a function argument's or result's sharding attribute,
/// or why it is refused.
fn mlir_sharding(attribute: &MlirSharding, meshes: &BTreeMap<String, shardy::Mesh>) -> Result<String, String> {
    match attribute {
        MlirSharding::Shardy(text) => {
            shardy::to_hlo_sharding(text, meshes).map(|s| s.to_string()).map_err(|e| format!("sdy.sharding: {e}"))
        }
        MlirSharding::Hlo(text) => sharding::canonical_text(text).map_err(|e| format!("mhlo.sharding: {e}")),
    }
}

/// The attributes listed beside a function argument or result.
fn mlir_extras(value: &MlirValue) -> serde_json::Map<String, Value> {
    let mut extras = serde_json::Map::new();
    let attributes = &value.attributes;
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

/// The module's name, function count and tally of one pass over StableHLO text.
fn walk_mlir(
    text: &ModuleInput,
    format: ModuleFormatArgs,
    path: &str,
    listing: &mut Listing<'_>,
) -> Result<(String, usize, Tally), Failure> {
    let options = TextOptions { max_statement_bytes: format.max_statement_bytes };
    let mut reader = MlirReader::with_options(text.text_reader()?, options);
    let mut tally = Tally::default();
    let (mut name, mut functions) = (String::new(), 0usize);
    let mut meshes: Meshes = Ok(BTreeMap::new());
    let mut entry = false;
    let mut op_site = MlirSite { text: String::new(), kind: INSTRUCTION, entry, extras: serde_json::Map::new() };
    loop {
        let item = match reader.next_item() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(error) => return Err(text_failure(path, &error)),
        };
        match item {
            MlirItem::Module(module) => module.name.unwrap_or_default().clone_into(&mut name),
            MlirItem::Mesh(mesh) => {
                let parsed = shardy::parse_meshes(&format!("{} = #sdy.mesh{}", mesh.name, mesh.mesh))
                    .map_err(|e| format!("sdy.mesh @{}: {e}", mesh.name));
                meshes = match (meshes, parsed) {
                    (Ok(mut all), Ok(more)) => {
                        all.extend(more);
                        Ok(all)
                    }
                    (Err(e), _) | (_, Err(e)) => Err(e),
                };
            }
            MlirItem::Function(function) => {
                functions = functions.saturating_add(1);
                entry = function.is_entry();
                let lists = [(PARAMETER, "parameter", function.parameters), (RESULT, "result", function.results)];
                for (kind, word, values) in lists {
                    for (index, value) in values.iter().enumerate() {
                        let Some(shape_proto) = &value.shape else { continue };
                        let site = MlirSite {
                            text: format!("{} / {word} {index}", function.name),
                            kind,
                            entry,
                            extras: mlir_extras(value),
                        };
                        let sharding = value.attributes.sharding.as_ref().map(|attribute| {
                            meshes.as_ref().map_err(Clone::clone).and_then(|meshes| mlir_sharding(attribute, meshes))
                        });
                        let key = value.attributes.layout_mode.is_none() && value.attributes.memory_kind.is_none();
                        let text = key.then_some(value.type_text.as_str());
                        shape(Site::Mlir(&site), (shape_proto, text), (sharding, None), &mut tally, listing)?;
                    }
                }
            }
            MlirItem::Op(op) => {
                for index in 0..op.len() {
                    let Some(shape_proto) = op.shape(index) else { continue };
                    // One site reused: its text rewritten, no allocation per result.
                    op_site.entry = entry;
                    op_site.text.clear();
                    op_site.text.push_str(op.function);
                    op_site.text.push_str(" / ");
                    op.push_result_name(index, &mut op_site.text);
                    let key = op.slot(index).map_or(Key::from(op.type_text(index)), |(g, at)| Key::Slot(g, at));
                    shape(Site::Mlir(&op_site), (shape_proto, key), (None, None), &mut tally, listing)?;
                }
            }
            MlirItem::FunctionEnd(_) => entry = false,
        }
    }
    Ok((name, functions, tally))
}
