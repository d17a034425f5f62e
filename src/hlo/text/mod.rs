//! HLO text, as XLA's printer writes it (`--xla_dump_to` dumps, `lowered.as_text(dialect="hlo")`,
//! `compiled.as_text()`), read as a stream.
//!
//! [`TextReader`] walks a [`BufRead`] once and yields one [`Item`] at a time: the module header,
//! each computation's start, each instruction, each computation's end (with its program shape).
//! Its memory is bounded by the current statement — one line, or the lines an open bracket
//! joins — which may hold at most [`TextOptions::max_statement_bytes`]; beyond that the reader
//! fails with [`HloTextProblem::StatementTooLong`], never by the file's size.
//!
//! ```text
//! HloModule name, attr=value, entry_computation_layout={(f32[2]{0})->f32[2]{0}}
//!
//! FileNames / FunctionNames / FileLocations / StackFrames     (optional sections, skipped)
//! 1 "file.py"
//!
//! [ENTRY] [%]name [(p: f32[2]) -> f32[2]] {
//!   [ROOT] [%]name = SHAPE opcode(operands), attr=value, …
//! }
//! ```
//!
//! Shapes are read by the crate's shape parser ([`crate::text`]); constants' literal text by
//! [`crate::literal::parse_constant`]. Attributes the crate does not interpret are skipped by
//! their bracket and string structure, so attributes newer XLA prints never break the reader.
//!
//! ```
//! use xla_shape::hlo::text::{Item, TextReader};
//!
//! let text = "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n\
//!             ENTRY %main (p: f32[2]) -> f32[2] {\n  \
//!               %p = f32[2]{0} parameter(0), metadata={op_name=\"p\"}\n  \
//!               ROOT %n = f32[2]{0} negate(%p), sharding={replicated}\n}\n";
//! let mut reader = TextReader::new(text.as_bytes());
//! let mut listed = Vec::new();
//! while let Some(item) = reader.next_item()? {
//!     if let Item::Instruction(i) = item {
//!         listed.push(format!("{} / {}: {} {:?}", i.computation, i.name, i.shape, i.attribute("sharding")));
//!         assert_eq!(i.shape_text, "f32[2]{0}");
//!     }
//! }
//! assert_eq!(listed, ["main / p: f32[2]{0} None", "main / n: f32[2]{0} Some(\"{replicated}\")"]);
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! Errors are [`Error::HloText`] with the line and column (`3:17: expects ...`), the line and a
//! caret; after an error the reader yields nothing more.
//!
//! The rules: docs/hlo.md §1 (format detection), §2 (the grammar read, program shapes), §3
//! (constants), §5 (errors), §6 (memory), §7 (divergences from XLA's parser).

pub(in crate::hlo) mod cursor;
mod find;
mod shapes;
pub(in crate::hlo) mod source;

use std::io::BufRead;
use std::ops::Range;

use crate::error::{Error, HloTextProblem, Result};
use crate::literal::{self, Constant};
use crate::proto::{ProgramShapeProto, ShapeProto};
use crate::text;

use cursor::{Cursor, Failed};
// The listing's printed shapes (`cli/cmd/printed.rs`) and the MLIR reader's types share the
// reader's bounded cache.
pub(crate) use shapes::TextCache;
pub use shapes::{MAX_CACHED_SHAPE_TEXT, MAX_CACHED_SHAPES};
use shapes::{Parsed, ShapeCache};
use source::{Source, Statement};

/// The default [`TextOptions::max_statement_bytes`]: 256 MiB, room for a printed constant of
/// tens of millions of elements.
pub const DEFAULT_MAX_STATEMENT_BYTES: usize = 256 << 20;

/// How to read HLO text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    /// The longest statement (a line, or the lines an open bracket joins) the reader holds; the
    /// reader's memory is this plus the current instruction's shapes.
    pub max_statement_bytes: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        Self { max_statement_bytes: DEFAULT_MAX_STATEMENT_BYTES }
    }
}

/// Whether `bytes` look like HLO text: after whitespace they start with `HloModule` (a
/// serialized proto cannot: its first byte would be a field tag, and `H` is field 9, wire type 0,
/// which no HLO message has at the top).
///
/// ```
/// assert!(xla_shape::hlo::text::is_hlo_text(b"\n  HloModule m\n"));
/// assert!(!xla_shape::hlo::text::is_hlo_text(&[0x0a, 0x01, b'm']));
/// ```
pub fn is_hlo_text(bytes: &[u8]) -> bool {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    bytes.get(start..).is_some_and(|rest| rest.starts_with(b"HloModule"))
}

/// The module header: `HloModule name, …`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Module<'a> {
    /// The module's name.
    pub name: &'a str,
    /// `entry_computation_layout={(…)->…}`, parsed; parameter names are `p0`, `p1`, … as in
    /// the `host_program_shape` XLA writes from it.
    pub entry_computation_layout: Option<&'a ProgramShapeProto>,
    /// `frontend_attributes={…}` as written (read one with [`frontend_attribute`]).
    pub frontend_attributes: Option<&'a str>,
}

/// A computation's start: `[ENTRY] name [signature] {`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Computation<'a> {
    /// Its name (without `%`).
    pub name: &'a str,
    /// Marked `ENTRY`.
    pub entry: bool,
}

/// A computation's end, with its program shape as XLA computes it from the instructions: the
/// `parameter` instructions' shapes by parameter number (named by the instructions), and the
/// root's shape (the `ROOT` instruction, else the last one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComputationEnd<'a> {
    /// The computation's name.
    pub name: &'a str,
    /// Marked `ENTRY`.
    pub entry: bool,
    /// Its program shape.
    pub program_shape: &'a ProgramShapeProto,
}

/// One instruction: `[ROOT] name = SHAPE opcode(operands), attr=value, …`.
#[derive(Debug, Clone, Copy)]
pub struct Instruction<'a> {
    /// The computation it belongs to.
    pub computation: &'a str,
    /// Its name (without `%`).
    pub name: &'a str,
    /// Marked `ROOT`.
    pub root: bool,
    /// Its shape, parsed as XLA parses it (missing layouts filled in; not validated).
    pub shape: &'a ShapeProto,
    /// Its shape as written (`f32[2]{0}`; comments inside kept). Equal texts parse to equal
    /// shapes, so a caller can key what it derives from a shape by this text.
    pub shape_text: &'a str,
    /// Its opcode (`add`, `custom-call`, …).
    pub opcode: &'a str,
    /// The text between the operand parentheses, as written (for a constant, its literal).
    pub operands: &'a str,
    /// `outfeed_shape=…`, parsed.
    pub outfeed_shape: Option<&'a ShapeProto>,
    /// `operand_layout_constraints={…}` (a custom call's `operand_shapes_with_layout`), parsed.
    pub operand_shapes_with_layout: &'a [ShapeProto],
    attributes: &'a [(Range<usize>, Range<usize>)],
    operands_at: usize,
    statement: &'a Statement,
}

impl<'a> Instruction<'a> {
    /// Every attribute as written: `(name, value)`, the value verbatim (`{devices=[2,1]0,1}`,
    /// `"a \"quoted\" string"` with its quotes and escapes).
    pub fn attributes(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let text = self.statement.text();
        self.attributes
            .iter()
            .map(move |(name, value)| (text.get(name.clone()).unwrap_or(""), text.get(value.clone()).unwrap_or("")))
    }

    /// The value of attribute `name` as written, if present (the last one if repeated).
    pub fn attribute(&self, name: &str) -> Option<&'a str> {
        self.attributes().filter(|(n, _)| *n == name).last().map(|(_, value)| value)
    }

    /// A `constant`'s value: its literal parsed against its shape, or [`Constant::Elided`] for
    /// XLA's `{...}`. `None` for another opcode.
    ///
    /// # Errors
    ///
    /// [`Error::HloText`] ([`HloTextProblem::Constant`]) with the literal's position when the
    /// text does not hold the values the shape describes.
    pub fn constant(&self) -> Result<Option<Constant>> {
        if self.opcode != "constant" {
            return Ok(None);
        }
        literal::parse_constant(self.shape, self.operands).map(Some).map_err(|error| {
            let offset = self.operands_at.saturating_add(error_position(&error));
            self.statement.error(offset, HloTextProblem::Constant(error))
        })
    }
}

/// One part of a module, in text order.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// The `HloModule` header (always the first item).
    Module(Module<'a>),
    /// A computation starts.
    Computation(Computation<'a>),
    /// An instruction of the open computation.
    Instruction(Instruction<'a>),
    /// The open computation ends.
    ComputationEnd(ComputationEnd<'a>),
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the `HloModule` line.
    Start,
    /// Between computations (`section`: inside a `FileNames`-like section).
    Module { section: bool },
    /// Inside a computation.
    Computation,
    /// After the end or an error.
    Done,
}

/// The parameters a computation declared so far.
#[derive(Debug, Default)]
struct Parameters {
    /// (number, name, shape) in text order.
    list: Vec<(i64, String, ShapeProto)>,
}

/// Reads HLO text one [`Item`] at a time (see the [module](self) docs).
pub struct TextReader<R> {
    source: Source<R>,
    state: State,
}

/// Everything the reader keeps besides the statement.
#[derive(Debug)]
struct State {
    phase: Phase,
    module_name: String,
    entry_layout: Option<ProgramShapeProto>,
    module_attributes: Option<String>,
    computation: String,
    entry: bool,
    parameters: Parameters,
    root: Option<ShapeProto>,
    /// The current instruction's shape: `shape`, or the cache's entry.
    shape: ShapeProto,
    cached: Option<usize>,
    shapes: ShapeCache,
    outfeed: Option<ShapeProto>,
    operand_shapes: Vec<ShapeProto>,
    attributes: Vec<(Range<usize>, Range<usize>)>,
    program: ProgramShapeProto,
    /// The name, opcode and operands of the current instruction (ranges in the statement).
    current: (Range<usize>, Range<usize>, Range<usize>, bool),
    /// The current instruction's shape text (a range in the statement).
    shape_text: Range<usize>,
}

/// The section headers newer XLA prints between the module header and the computations.
const SECTIONS: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

impl<R: BufRead> TextReader<R> {
    /// A reader with the default options.
    pub fn new(reader: R) -> Self {
        Self::with_options(reader, TextOptions::default())
    }

    /// A reader with `options`.
    pub fn with_options(reader: R, options: TextOptions) -> Self {
        Self { source: Source::new(reader, options.max_statement_bytes), state: State::new() }
    }

    /// The next item; `None` after the last computation.
    ///
    /// # Errors
    ///
    /// [`Error::HloText`] for text outside the grammar, a statement beyond the limit, bytes that
    /// are not UTF-8 or a failed read; every later call returns `None`.
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>> {
        let result = self.advance();
        if result.is_err() {
            self.state.phase = Phase::Done;
        }
        match result? {
            None => Ok(None),
            Some(kind) => Ok(Some(self.state.item(kind, &self.source.statement))),
        }
    }

    /// Reads statements until one makes an item; returns which.
    fn advance(&mut self) -> Result<Option<Kind>> {
        loop {
            if self.state.phase == Phase::Done {
                return Ok(None);
            }
            let Some(statement) = self.source.next()? else {
                return match self.state.phase {
                    Phase::Start => Err(self
                        .source
                        .error_at_end(HloTextProblem::UnexpectedEnd { inside: "a module (no `HloModule` line)" })),
                    Phase::Computation => {
                        Err(self.source.error_at_end(HloTextProblem::UnexpectedEnd { inside: "a computation" }))
                    }
                    _ => {
                        self.state.phase = Phase::Done;
                        Ok(None)
                    }
                };
            };
            match self.state.statement(statement.text()) {
                Ok(Some(kind)) => return Ok(Some(kind)),
                Ok(None) => {}
                Err((offset, problem)) => return Err(self.source.statement.error(offset, problem)),
            }
        }
    }
}

impl State {
    fn new() -> Self {
        Self {
            phase: Phase::Start,
            module_name: String::new(),
            entry_layout: None,
            module_attributes: None,
            computation: String::new(),
            entry: false,
            parameters: Parameters::default(),
            root: None,
            shape: ShapeProto::default(),
            cached: None,
            shapes: ShapeCache::default(),
            outfeed: None,
            operand_shapes: Vec::new(),
            attributes: Vec::new(),
            program: ProgramShapeProto::default(),
            current: (0..0, 0..0, 0..0, false),
            shape_text: 0..0,
        }
    }

    /// One statement: the item it makes, if any.
    fn statement(&mut self, text: &str) -> Result<Option<Kind>, Failed> {
        if Cursor::new(text).at_end() {
            // Only comments.
            return Ok(None);
        }
        match self.phase {
            Phase::Start => {
                header(text, &mut self.module_name, &mut self.entry_layout, &mut self.module_attributes)?;
                self.phase = Phase::Module { section: false };
                Ok(Some(Kind::Module))
            }
            Phase::Module { section } => {
                let first = Cursor::new(text).skip_trivia_then_byte();
                if SECTIONS.iter().any(|s| text.trim() == *s) {
                    self.phase = Phase::Module { section: true };
                    Ok(None)
                } else if section && first.is_some_and(|b| b.is_ascii_digit()) {
                    section_entry(text)?;
                    Ok(None)
                } else {
                    self.phase = Phase::Module { section: false };
                    computation_header(text, &mut self.computation, &mut self.entry)?;
                    self.phase = Phase::Computation;
                    self.parameters.list.clear();
                    self.root = None;
                    self.shape = ShapeProto::default();
                    self.cached = None;
                    Ok(Some(Kind::Computation))
                }
            }
            Phase::Computation => {
                if closes_computation(text)? {
                    self.phase = Phase::Module { section: false };
                    self.finish_computation();
                    Ok(Some(Kind::ComputationEnd))
                } else {
                    self.instruction(text)?;
                    Ok(Some(Kind::Instruction))
                }
            }
            Phase::Done => Ok(None),
        }
    }

    /// Parses one instruction statement into the reader's fields.
    fn instruction(&mut self, text: &str) -> Result<(), Failed> {
        let mut cursor = Cursor::new(text);
        let mut probe = cursor;
        // `ROOT` is the marker only when a name follows it, not `=`.
        let root = probe.keyword("ROOT") && !probe.clone().eat(b'=');
        if root {
            cursor = probe;
        }
        cursor.skip_trivia();
        let name_start = cursor.pos.saturating_add(usize::from(cursor.text.as_bytes().get(cursor.pos) == Some(&b'%')));
        let name = cursor.name("an instruction name (or `}` to end the computation)")?;
        let name_range = name_start..name_start.saturating_add(name.len());
        cursor.expect(b'=', "`=` after the instruction name")?;
        cursor.skip_trivia();
        let shape_at = cursor.pos;
        let (shape, used) = self
            .shapes
            .parse_prefix(cursor.text.get(shape_at..).unwrap_or(""))
            .map_err(|error| (shape_at.saturating_add(error_position(&error)), HloTextProblem::Shape(error)))?;
        cursor.pos = shape_at.saturating_add(used);
        let shape_text = text.get(shape_at..cursor.pos).unwrap_or("").trim_end();
        self.shape_text = shape_at..shape_at.saturating_add(shape_text.len());
        cursor.skip_trivia();
        let opcode_at = cursor.pos;
        let opcode = cursor.word().ok_or_else(|| cursor.expected("an opcode"))?;
        let opcode_range = opcode_at..opcode_at.saturating_add(opcode.len());
        cursor.expect(b'(', "`(` to start the operands")?;
        let operands = cursor.group(b')', "`)` to end the operands")?;
        self.attributes.clear();
        self.outfeed = None;
        self.operand_shapes.clear();
        while !cursor.at_end() {
            cursor.expect(b',', "`,` before the next attribute")?;
            if cursor.at_end() {
                break;
            }
            cursor.skip_trivia();
            let attribute_at = cursor.pos;
            let attribute = cursor.word().ok_or_else(|| cursor.expected("an attribute name"))?;
            cursor.expect(b'=', "`=` after the attribute name")?;
            let value = cursor.value()?;
            let value_text = text.get(value.clone()).unwrap_or("");
            match attribute {
                "outfeed_shape" => {
                    let parsed = shape_value(value_text, value.start)?;
                    self.outfeed = Some(parsed);
                }
                "operand_layout_constraints" => {
                    self.operand_shapes = text::parse_shape_list_raw(value_text).map_err(|error| {
                        (value.start.saturating_add(error_position(&error)), HloTextProblem::Shape(error))
                    })?;
                }
                _ => {}
            }
            self.attributes.push((attribute_at..attribute_at.saturating_add(attribute.len()), value));
        }
        match shape {
            Parsed::Cached(at) => self.cached = Some(at),
            Parsed::Fresh(shape) => {
                self.shape = shape;
                self.cached = None;
            }
        }
        if opcode == "parameter" {
            let mut operand = Cursor::new(text.get(operands.clone()).unwrap_or(""));
            let number =
                operand.integer("a parameter number").map_err(|(at, p)| (operands.start.saturating_add(at), p))?;
            self.parameters.list.push((number, name.to_owned(), self.shape().clone()));
        }
        if root {
            self.root = Some(self.shape().clone());
        }
        self.current = (name_range, opcode_range, operands, root);
        Ok(())
    }

    /// The computation's program shape, from its parameters and root.
    fn finish_computation(&mut self) {
        let mut parameters = std::mem::take(&mut self.parameters.list);
        parameters.sort_by_key(|(number, _, _)| *number);
        self.program.parameters.clear();
        self.program.parameter_names.clear();
        for (_, name, shape) in parameters.drain(..) {
            self.program.parameters.push(shape);
            self.program.parameter_names.push(name);
        }
        self.parameters.list = parameters;
        let last = match self.cached {
            Some(_) => self.shape().clone(),
            None => std::mem::take(&mut self.shape),
        };
        self.cached = None;
        self.program.result = Some(self.root.take().unwrap_or(last));
    }

    /// The current instruction's shape.
    fn shape(&self) -> &ShapeProto {
        self.cached.and_then(|at| self.shapes.get(at)).unwrap_or(&self.shape)
    }

    fn item<'a>(&'a self, kind: Kind, statement: &'a Statement) -> Item<'a> {
        let text = statement.text();
        match kind {
            Kind::Module => Item::Module(Module {
                name: &self.module_name,
                entry_computation_layout: self.entry_layout.as_ref(),
                frontend_attributes: self.module_attributes.as_deref(),
            }),
            Kind::Computation => Item::Computation(Computation { name: &self.computation, entry: self.entry }),
            Kind::ComputationEnd => Item::ComputationEnd(ComputationEnd {
                name: &self.computation,
                entry: self.entry,
                program_shape: &self.program,
            }),
            Kind::Instruction => {
                let (name, opcode, operands, root) = &self.current;
                Item::Instruction(Instruction {
                    computation: &self.computation,
                    name: text.get(name.clone()).unwrap_or(""),
                    root: *root,
                    shape: self.shape(),
                    shape_text: text.get(self.shape_text.clone()).unwrap_or(""),
                    opcode: text.get(opcode.clone()).unwrap_or(""),
                    operands: text.get(operands.clone()).unwrap_or(""),
                    outfeed_shape: self.outfeed.as_ref(),
                    operand_shapes_with_layout: &self.operand_shapes,
                    attributes: &self.attributes,
                    operands_at: operands.start,
                    statement,
                })
            }
        }
    }
}

/// Which item a statement made.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Module,
    Computation,
    Instruction,
    ComputationEnd,
}

impl Cursor<'_> {
    /// The first byte after trivia, without consuming it.
    fn skip_trivia_then_byte(&mut self) -> Option<u8> {
        self.skip_trivia();
        self.text.as_bytes().get(self.pos).copied()
    }
}

/// The byte position of a shape parser's error inside the text it was given.
pub(in crate::hlo) fn error_position(error: &Error) -> usize {
    match error {
        Error::Parse(parse) => parse.position,
        _ => 0,
    }
}

/// The value of `key` in a `frontend_attributes={k=v, k="…", …}` value as written (a module's
/// [`Module::frontend_attributes`], an instruction's `attribute("frontend_attributes")`): a
/// quoted value unescaped (`\"`, `\\`, `\n`, `\t`, `\'`, `\r` and three-digit octal, as XLA's
/// `CEscape` writes them), another verbatim; the last one if repeated.
///
/// ```
/// use xla_shape::hlo::text::frontend_attribute;
/// let attributes = r##"{xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}]>", b={c = 1}}"##;
/// let value = frontend_attribute(attributes, "xla.sdy.sharding")?;
/// assert_eq!(value.as_deref(), Some(r#"#sdy.sharding<@mesh, [{"x"}]>"#));
/// assert_eq!(frontend_attribute(attributes, "b")?.as_deref(), Some("{c = 1}"));
/// # Ok::<(), xla_shape::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Parse`] when the text is not `{key=value, …}` or a quoted value ends or escapes
/// wrongly.
pub fn frontend_attribute(text: &str, key: &str) -> Result<Option<String>> {
    let refused = |(position, problem): Failed| {
        let (expected, found) = match problem {
            HloTextProblem::Expected { expected, found } => (expected.to_owned(), found),
            other => ("frontend attributes `{key=value, …}`".to_owned(), other.to_string()),
        };
        Error::Parse(Box::new(crate::error::ParseError {
            position,
            expected,
            found,
            input: text.chars().take(200).collect(),
        }))
    };
    let mut cursor = Cursor::new(text);
    cursor.expect(b'{', "`{` to start the frontend attributes").map_err(refused)?;
    let mut found = None;
    loop {
        cursor.skip_trivia();
        if cursor.eat(b'}') {
            break;
        }
        let name = cursor.word().ok_or_else(|| cursor.expected("an attribute name")).map_err(refused)?;
        cursor.expect(b'=', "`=` after the attribute name").map_err(refused)?;
        let range = cursor.value().map_err(refused)?;
        if name == key {
            let value = text.get(range.clone()).unwrap_or("");
            found = Some(match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(quoted) => unescape(quoted).map_err(|at| {
                    let problem =
                        HloTextProblem::Expected { expected: "an escape XLA writes", found: "another".to_owned() };
                    refused((range.start.saturating_add(1).saturating_add(at), problem))
                })?,
                None => value.to_owned(),
            });
        }
        if !cursor.eat(b',') {
            cursor.expect(b'}', "`}` to end the frontend attributes").map_err(refused)?;
            break;
        }
    }
    if !cursor.at_end() {
        return Err(refused(cursor.expected("the end of the frontend attributes")));
    }
    Ok(found)
}

/// The text of a `"…"` string (without its quotes) with `CEscape`'s escapes undone, or the
/// offset of a bad escape (or of the string, when the octal bytes are not UTF-8).
fn unescape(quoted: &str) -> std::result::Result<String, usize> {
    let bytes = quoted.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        i = i.saturating_add(1);
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let at = i.saturating_sub(1);
        let escaped = bytes.get(i).copied().ok_or(at)?;
        i = i.saturating_add(1);
        out.push(match escaped {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'"' | b'\'' | b'\\' => escaped,
            b'0'..=b'7' => {
                // Octal: three digits, one byte.
                let digits = bytes.get(at.saturating_add(1)..at.saturating_add(4)).ok_or(at)?;
                let digits = std::str::from_utf8(digits).map_err(|_| at)?;
                i = at.saturating_add(4);
                u8::from_str_radix(digits, 8).map_err(|_| at)?
            }
            _ => return Err(at),
        });
    }
    String::from_utf8(out).map_err(|_| 0)
}

/// One shape that must be the whole of `value` (at `at` in the statement).
fn shape_value(value: &str, at: usize) -> Result<ShapeProto, Failed> {
    text::parse_shape_raw(value)
        .map_err(|error| (at.saturating_add(error_position(&error)), HloTextProblem::Shape(error)))
}

/// `HloModule name[, attr=value]*`.
fn header(
    text: &str,
    name: &mut String,
    layout: &mut Option<ProgramShapeProto>,
    frontend_attributes: &mut Option<String>,
) -> Result<(), Failed> {
    let mut cursor = Cursor::new(text);
    if !cursor.keyword("HloModule") {
        return Err(cursor.expected("`HloModule` to start the module"));
    }
    name.clear();
    name.push_str(cursor.name("the module's name")?);
    *layout = None;
    *frontend_attributes = None;
    while !cursor.at_end() {
        cursor.expect(b',', "`,` before the next module attribute")?;
        let attribute = cursor.word().ok_or_else(|| cursor.expected("an attribute name"))?;
        cursor.expect(b'=', "`=` after the attribute name")?;
        let value = cursor.value()?;
        if attribute == "entry_computation_layout" {
            *layout = Some(program_shape(text, value)?);
        } else if attribute == "frontend_attributes" {
            *frontend_attributes = text.get(value).map(str::to_owned);
        }
    }
    Ok(())
}

/// `{(parameters)->result}` (XLA's `ComputationLayout` text), at `range` of `text`.
fn program_shape(text: &str, range: Range<usize>) -> Result<ProgramShapeProto, Failed> {
    let mut cursor = Cursor::new(text);
    cursor.pos = range.start;
    cursor.expect(b'{', "`{` to start the computation layout")?;
    cursor.skip_trivia();
    let parameters_at = cursor.pos;
    cursor.expect(b'(', "`(` to start the parameter layouts")?;
    cursor.group(b')', "`)` to end the parameter layouts")?;
    let tuple = shape_value(text.get(parameters_at..cursor.pos).unwrap_or(""), parameters_at)?;
    cursor.arrow("`->` before the result layout")?;
    let result_at = cursor.pos;
    let result_end = range.end.saturating_sub(1);
    let result = shape_value(text.get(result_at..result_end).unwrap_or(""), result_at)?;
    let parameter_names = (0..tuple.tuple_shapes.len()).map(|i| format!("p{i}")).collect();
    Ok(ProgramShapeProto { parameters: tuple.tuple_shapes, result: Some(result), parameter_names })
}

/// `N "text"` or `N {…}`: one entry of a `FileNames`-like section.
fn section_entry(text: &str) -> Result<(), Failed> {
    let mut cursor = Cursor::new(text);
    cursor.integer("an entry number")?;
    cursor.skip_trivia();
    if cursor.eat(b'{') {
        cursor.group(b'}', "`}` to end the entry")?;
    } else {
        cursor.string()?;
    }
    if !cursor.at_end() {
        return Err(cursor.expected("the end of the entry"));
    }
    Ok(())
}

/// `[ENTRY] [%]name [(parameters) -> shape] {`.
fn computation_header(text: &str, name: &mut String, entry: &mut bool) -> Result<(), Failed> {
    let mut cursor = Cursor::new(text);
    *entry = cursor.keyword("ENTRY");
    name.clear();
    name.push_str(cursor.name("a computation name (or `HloModule` attributes)")?);
    if cursor.eat(b'(') {
        cursor.group(b')', "`)` to end the parameters")?;
        cursor.arrow("`->` before the result shape")?;
        let at = cursor.pos;
        let (_, used) = text::parse_shape_prefix(cursor.text.get(at..).unwrap_or(""))
            .map_err(|error| (at.saturating_add(error_position(&error)), HloTextProblem::Shape(error)))?;
        cursor.pos = at.saturating_add(used);
    }
    cursor.expect(b'{', "`{` to start the computation")?;
    if !cursor.at_end() {
        return Err(cursor.expected("the end of the line after `{`"));
    }
    Ok(())
}

/// `}` (optionally followed by `, execution_thread="…"` and other attributes).
fn closes_computation(text: &str) -> Result<bool, Failed> {
    let mut cursor = Cursor::new(text);
    if !cursor.eat(b'}') {
        return Ok(false);
    }
    while !cursor.at_end() {
        cursor.expect(b',', "`,` before a computation attribute")?;
        cursor.word().ok_or_else(|| cursor.expected("an attribute name"))?;
        cursor.expect(b'=', "`=` after the attribute name")?;
        cursor.value()?;
    }
    Ok(true)
}
