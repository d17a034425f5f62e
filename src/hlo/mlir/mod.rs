//! StableHLO MLIR text — what `jax.jit(f).lower(...).as_text()` prints by default — read as a
//! stream, giving the same answers as HLO text for the shapes and shardings of a module's
//! functions.
//!
//! [`MlirReader`] walks a [`BufRead`] once and yields one [`Item`] at a time: the module, each
//! `sdy.mesh`, each function with its parameters and results (their attribute dictionaries
//! read), each operation whose result types are stated, each function's end. Statements are
//! cut by `hlo::text`'s source (one line, or the lines an open bracket joins; a line that ends
//! with `{` ends its statement, so a region's operations are statements of their own), in a
//! buffer of at most [`TextOptions::max_statement_bytes`](crate::hlo::text::TextOptions).
//!
//! ```text
//! #loc1 = loc("x")                                            (aliases, skipped)
//! module @jit_f attributes {mhlo.num_partitions = 8 : i32} {
//!   sdy.mesh @mesh = <["x"=2, "y"=4]>
//!   func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>} loc("x"))
//!       -> (tensor<8x4xf32> {jax.result_info = "result"}) {
//!     %0 = stablehlo.add %arg0, %arg0 : tensor<8x4xf32> loc(#loc5)
//!     return %0 : tensor<8x4xf32>
//!   }
//! }
//! ```
//!
//! Types become XLA shapes ([`element_type`]: `i4` → `s4`, `ui8` → `u8`, `f8E4M3FN` →
//! `f8e4m3fn`, `complex<f32>` → `c64`, `tensor<?x4xf32>` → `f32[?,4]`, bounded dimensions
//! `<=N`), read by the crate's shape parser with the default layout unless `mhlo.layout_mode`
//! states one; `mhlo.memory_kind = "pinned_host"` is memory space `S(5)`. Anything the reader
//! does not interpret is skipped by its bracket and string structure.
//!
//! ```
//! use xla_shape::hlo::mlir::{Item, MlirReader, ShardingAttribute};
//!
//! let text = r#"module @jit_f {
//!   sdy.mesh @mesh = <["x"=2]>
//!   func.func public @main(%arg0: tensor<8xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xbf16> {jax.result_info = "result"}) {
//!     %0 = stablehlo.negate %arg0 : tensor<8xbf16>
//!     return %0 : tensor<8xbf16>
//!   }
//! }
//! "#;
//! let mut reader = MlirReader::new(text.as_bytes());
//! let mut seen = Vec::new();
//! while let Some(item) = reader.next_item()? {
//!     match item {
//!         Item::Function(f) => {
//!             let p = &f.parameters[0];
//!             assert_eq!(p.shape.as_ref().map(ToString::to_string).as_deref(), Some("bf16[8]{0}"));
//!             assert!(matches!(&p.attributes.sharding, Some(ShardingAttribute::Shardy(_))));
//!             seen.push(format!("{} {} -> {}", f.name, f.parameters.len(), f.results.len()));
//!         }
//!         Item::Op(op) => seen.push(format!("{} {}", op.result_name(0), op.shape(0).unwrap())),
//!         _ => {}
//!     }
//! }
//! assert_eq!(seen, ["main 1 -> 1", "%0 bf16[8]{0}"]);
//! # Ok::<(), xla_shape::Error>(())
//! ```
//!
//! Errors are [`Error::HloText`](crate::Error::HloText) with the line and column, as for HLO text; after an error the
//! reader yields nothing more. The rules: docs/stablehlo.md.

mod attributes;
mod scan;
mod types;

use std::fmt::Write as _;
use std::io::BufRead;
use std::ops::Range;

pub use attributes::{ShardingAttribute, ValueAttributes};
pub use types::element_type;

use crate::error::{HloTextProblem, Result};
use crate::hlo::text::cursor::{Cursor, Failed};
use crate::hlo::text::source::{Grammar, Source, Statement, TypeSeparator};
use crate::hlo::text::{TextCache, TextOptions, error_position};
use crate::proto::ShapeProto;
use crate::text;

use scan::{last_colon, value_end};
use types::Stated;

/// Whether `bytes` look like MLIR text: after whitespace and `//` comment lines they start with
/// `module` (then a space, `@` or `{`), `func.func`, `"builtin.module"`, or an alias definition
/// (`#loc = …`, `!t = …`). A serialized HLO proto cannot start so: `m` would be field 13 with wire
/// type 5, `#` field 4 with wire type 3, `f` and `"` invalid wire types.
///
/// ```
/// use xla_shape::hlo::mlir::is_mlir_text;
/// assert!(is_mlir_text(b"#loc1 = loc(\"x\")\nmodule @jit_f {\n"));
/// assert!(is_mlir_text(b"// comment\nmodule {\n}\n"));
/// assert!(!is_mlir_text(b"HloModule m\n"));
/// assert!(!is_mlir_text(b"modules"));
/// ```
pub fn is_mlir_text(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    loop {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len());
        rest = rest.get(start..).unwrap_or_default();
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            rest = rest.get(end..).unwrap_or_default();
            continue;
        }
        break;
    }
    if let Some(after) = rest.strip_prefix(b"module") {
        return after.first().is_some_and(|&b| b.is_ascii_whitespace() || b == b'@' || b == b'{');
    }
    rest.starts_with(b"func.func")
        || rest.starts_with(b"\"builtin.module\"")
        || rest.starts_with(b"#")
        || rest.starts_with(b"!")
}

/// The module: `module [@name] [attributes {…}] {`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module<'a> {
    /// Its name (without `@`), if it has one.
    pub name: Option<&'a str>,
    /// Its attribute dictionary as written (`{mhlo.num_partitions = 8 : i32, …}`).
    pub attributes: Option<&'a str>,
}

/// A Shardy mesh: `sdy.mesh @name = <["x"=2, "y"=4]>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mesh<'a> {
    /// Its name (without `@`).
    pub name: &'a str,
    /// The mesh as written, `<…>` (read it with
    /// [`parse_meshes`](crate::sharding::shardy::parse_meshes) as `NAME = #sdy.mesh<…>`).
    pub mesh: &'a str,
}

/// A function argument or result.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The argument's name (`%arg0`), if written.
    pub name: Option<String>,
    /// Its type as written (`tensor<8x4xf32>`).
    pub type_text: String,
    /// Its XLA shape, with the layout and memory space the attributes state (else the default
    /// layout); `None` for a type XLA has no shape for.
    pub shape: Option<ShapeProto>,
    /// The attributes the reader interprets.
    pub attributes: ValueAttributes,
}

/// A function: `func.func [visibility] @name(args) [-> results] [attributes {…}] [{`.
#[derive(Debug, Clone, Copy)]
pub struct Function<'a> {
    /// Its name (without `@`).
    pub name: &'a str,
    /// `public`, `private`, `nested`, or `None` when not written (public).
    pub visibility: Option<&'a str>,
    /// Its parameters.
    pub parameters: &'a [Value],
    /// Its results.
    pub results: &'a [Value],
}

impl Function<'_> {
    /// Whether XLA would take it as the entry computation: named `main` and not private.
    pub fn is_entry(&self) -> bool {
        self.name == "main" && self.visibility != Some("private")
    }
}

/// One shape of an operation's results.
#[derive(Debug, Clone)]
enum ShapeRef {
    /// The cache's entry at this index.
    Cached(usize),
    /// Parsed for this operation alone.
    Fresh(ShapeProto),
}

/// An operation with results whose types are stated: `%0 = stablehlo.add … : tensor<…>`,
/// `%0:2 = stablehlo.while(…) : tensor<i32>, tensor<8xf32>`, or an operation with regions
/// whose types follow its last region (`}) : (…) -> tensor<…>`).
#[derive(Debug, Clone, Copy)]
pub struct Op<'a> {
    /// The function it is in.
    pub function: &'a str,
    /// The operation's name (`stablehlo.add`, `sdy.manual_computation`; a generic form's
    /// `"stablehlo.case"` without its quotes).
    pub name: &'a str,
    /// Each result name's range in `names_text`, and its count when written `%0:N`.
    names: &'a [(Range<usize>, Option<usize>)],
    names_text: &'a str,
    shapes: &'a [ShapeRef],
    type_texts: &'a [Range<usize>],
    type_source: &'a str,
    cache: &'a TextCache<ShapeProto>,
}

impl<'a> Op<'a> {
    /// How many results it has.
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// Whether it has none (never, for a listed operation).
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// The name of result `index`: `%0`, or `%0#1` for the second of `%0:2`.
    pub fn result_name(&self, index: usize) -> String {
        let mut name = String::new();
        self.push_result_name(index, &mut name);
        name
    }

    /// Appends [`result_name`](Self::result_name) to `out` (the listing reuses one buffer).
    pub(crate) fn push_result_name(&self, index: usize, out: &mut String) {
        let mut first = 0usize;
        for (range, count) in self.names {
            let name = self.names_text.get(range.clone()).unwrap_or("");
            let within = index.checked_sub(first);
            match (count, within) {
                (None, Some(0)) => return out.push_str(name),
                (Some(count), Some(i)) if i < *count => {
                    out.push_str(name);
                    out.push('#');
                    // Writing to a String cannot fail.
                    let _ = write!(out, "{i}");
                    return;
                }
                _ => first = first.saturating_add(count.unwrap_or(1)),
            }
        }
    }

    /// The XLA shape of result `index`.
    pub fn shape(&self, index: usize) -> Option<&'a ShapeProto> {
        match self.shapes.get(index)? {
            ShapeRef::Cached(at) => self.cache.get(*at),
            ShapeRef::Fresh(shape) => Some(shape),
        }
    }

    /// Where the reader's cache keeps the shape of result `index`, if it does: the cache's
    /// generation and the index, which name the same shape until the cache starts over (the
    /// listing prints each shape once by them).
    pub(crate) fn slot(&self, index: usize) -> Option<(u64, usize)> {
        match self.shapes.get(index)? {
            ShapeRef::Cached(at) => Some((self.cache.generation(), *at)),
            ShapeRef::Fresh(_) => None,
        }
    }

    /// The MLIR type of result `index` as written; equal texts are equal shapes.
    pub fn type_text(&self, index: usize) -> Option<&'a str> {
        self.type_texts.get(index).and_then(|range| self.type_source.get(range.clone()))
    }
}

/// One part of a module, in text order.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// `module … {` (absent when the text holds bare functions).
    Module(Module<'a>),
    /// An `sdy.mesh` declaration.
    Mesh(Mesh<'a>),
    /// A function's signature.
    Function(Function<'a>),
    /// An operation of the open function.
    Op(Op<'a>),
    /// The open function ends (its name).
    FunctionEnd(&'a str),
}

/// Which item a statement made.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Module,
    Mesh,
    Function,
    Op,
    FunctionEnd,
}

/// Where the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Body,
    Done,
}

/// An operation whose regions are open: its results, and the depth before it.
#[derive(Debug)]
struct Pending {
    names: String,
    opcode: String,
    depth: i64,
}

/// The most operations with open regions tracked at once (deeper ones are not listed).
const MAX_PENDING: usize = 1024;

/// Reads StableHLO MLIR text one [`Item`] at a time (see the [module](self) docs).
pub struct MlirReader<R> {
    source: Source<R>,
    state: State,
}

/// Everything the reader keeps besides the statement.
#[derive(Debug)]
struct State {
    phase: Phase,
    depth: i64,
    /// Ranges of the module's name and attributes, or of the mesh's name and text.
    ranges: (Option<Range<usize>>, Option<Range<usize>>),
    function: String,
    visibility: Option<String>,
    function_depth: Option<i64>,
    values: Vec<Value>,
    parameters: usize,
    pending: Vec<Pending>,
    /// The current operation: its name, result names, shapes and type texts.
    opcode: String,
    names: String,
    name_list: Vec<(Range<usize>, Option<usize>)>,
    shapes: Vec<ShapeRef>,
    type_texts: Vec<Range<usize>>,
    cache: TextCache<ShapeProto>,
    scratch: String,
    /// The statement's type separator as the statement cut found it (`Statement::separator`).
    separator: TypeSeparator,
}

impl<R: BufRead> MlirReader<R> {
    /// A reader with the default options.
    pub fn new(reader: R) -> Self {
        Self::with_options(reader, TextOptions::default())
    }

    /// A reader with `options` (the statement limit).
    pub fn with_options(reader: R, options: TextOptions) -> Self {
        Self { source: Source::with_grammar(reader, options.max_statement_bytes, Grammar::Mlir), state: State::new() }
    }

    /// The next item; `None` after the last.
    ///
    /// # Errors
    ///
    /// [`Error::HloText`](crate::Error::HloText) for text outside the grammar read, a statement beyond the limit,
    /// bytes that are not UTF-8 or a failed read; every later call returns `None`.
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

    fn advance(&mut self) -> Result<Option<Kind>> {
        loop {
            if self.state.phase == Phase::Done {
                return Ok(None);
            }
            let Some(statement) = self.source.next()? else {
                let inside = match self.state.phase {
                    Phase::Start => Some("a module (no `module` or `func.func`)"),
                    _ if self.state.depth > 0 => Some("a module or function (a `}` is missing)"),
                    _ => None,
                };
                self.state.phase = Phase::Done;
                return match inside {
                    Some(inside) => Err(self.source.error_at_end(HloTextProblem::UnexpectedEnd { inside })),
                    None => Ok(None),
                };
            };
            match self.state.statement(statement) {
                Ok(Some(kind)) => return Ok(Some(kind)),
                Ok(None) => {}
                Err((offset, problem)) => return Err(self.source.statement.error(offset, problem)),
            }
        }
    }
}

/// The offset after the bracket group that opens at `open`.
fn group_end(text: &str, open: usize) -> Result<usize, Failed> {
    let end = value_end(text, open.saturating_add(1), b"")?;
    let want = match text.as_bytes().get(open) {
        Some(b'(') => b')',
        Some(b'[') => b']',
        Some(b'<') => b'>',
        _ => b'}',
    };
    if text.as_bytes().get(end) != Some(&want) {
        let found =
            text.get(end..).and_then(|r| r.chars().next()).map_or("end of statement".to_owned(), |c| format!("`{c}`"));
        return Err((end, HloTextProblem::Expected { expected: "a closing bracket", found }));
    }
    Ok(end.saturating_add(1))
}

/// The end of the type at `from`: a name (`tensor`, `!stablehlo.token`, `i32`) and its `<…>`.
fn type_end(text: &str, from: usize) -> Result<usize, Failed> {
    let bytes = text.as_bytes();
    let mut i = from;
    while bytes.get(i).is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'!' | b'.' | b'_')) {
        i = i.saturating_add(1);
    }
    if bytes.get(i) == Some(&b'<') {
        i = group_end(text, i)?;
    }
    Ok(i)
}

/// A type at the cursor: its range.
fn read_type(cursor: &mut Cursor<'_>) -> Result<Range<usize>, Failed> {
    cursor.skip_trivia();
    let start = cursor.pos;
    let end = type_end(cursor.text, start)?;
    if end == start {
        return Err(cursor.expected("a type"));
    }
    cursor.pos = end;
    Ok(start..end)
}

/// Skips `loc(…)` at the cursor, if there.
fn skip_location(cursor: &mut Cursor<'_>) -> Result<(), Failed> {
    let saved = cursor.pos;
    if cursor.keyword("loc") {
        cursor.skip_trivia();
        if cursor.text.as_bytes().get(cursor.pos) == Some(&b'(') {
            cursor.pos = group_end(cursor.text, cursor.pos)?;
            return Ok(());
        }
    }
    cursor.pos = saved;
    Ok(())
}

/// `@name` or `@"name"`: the name's range.
fn symbol(cursor: &mut Cursor<'_>, expected: &'static str) -> Result<Range<usize>, Failed> {
    cursor.expect(b'@', expected)?;
    if cursor.text.as_bytes().get(cursor.pos) == Some(&b'"') {
        return cursor.string();
    }
    let start = cursor.pos;
    // No trivia between `@` and the name.
    let len = cursor
        .text
        .get(start..)
        .unwrap_or("")
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'$'))
        .count();
    if len == 0 {
        return Err(cursor.expected(expected));
    }
    cursor.pos = start.saturating_add(len);
    Ok(start..cursor.pos)
}

impl State {
    fn new() -> Self {
        Self {
            phase: Phase::Start,
            depth: 0,
            ranges: (None, None),
            function: String::new(),
            visibility: None,
            function_depth: None,
            values: Vec::new(),
            parameters: 0,
            pending: Vec::new(),
            opcode: String::new(),
            names: String::new(),
            name_list: Vec::new(),
            shapes: Vec::new(),
            type_texts: Vec::new(),
            cache: TextCache::default(),
            scratch: String::new(),
            separator: TypeSeparator::Unsure,
        }
    }

    fn item<'a>(&'a self, kind: Kind, statement: &'a Statement) -> Item<'a> {
        let text = statement.text();
        let range = |r: &Option<Range<usize>>| r.clone().and_then(|r| text.get(r));
        match kind {
            Kind::Module => Item::Module(Module { name: range(&self.ranges.0), attributes: range(&self.ranges.1) }),
            Kind::Mesh => Item::Mesh(Mesh {
                name: range(&self.ranges.0).unwrap_or(""),
                mesh: range(&self.ranges.1).unwrap_or(""),
            }),
            Kind::Function => {
                let (parameters, results) = self.values.split_at(self.parameters.min(self.values.len()));
                Item::Function(Function {
                    name: &self.function,
                    visibility: self.visibility.as_deref(),
                    parameters,
                    results,
                })
            }
            Kind::Op => Item::Op(Op {
                function: &self.function,
                name: &self.opcode,
                names: &self.name_list,
                names_text: &self.names,
                shapes: &self.shapes,
                type_texts: &self.type_texts,
                type_source: text,
                cache: &self.cache,
            }),
            Kind::FunctionEnd => Item::FunctionEnd(&self.function),
        }
    }

    /// One statement: the item it makes, if any.
    fn statement(&mut self, statement: &Statement) -> Result<Option<Kind>, Failed> {
        let text = statement.text();
        let mut cursor = Cursor::new(text);
        if cursor.at_end() {
            return Ok(None);
        }
        self.separator = statement.separator();
        let depth_before = self.depth;
        self.depth = self.depth.saturating_add(statement.depth());
        if self.depth < 0 {
            return Err(cursor.expected("no `}` beyond the module's"));
        }
        let first = text.as_bytes().get(cursor.pos).copied();
        match first {
            Some(b'#' | b'!') if depth_before == 0 => Ok(None),
            Some(b'}' | b')') => self.closing(text, cursor.pos),
            Some(b'%') => {
                self.require_started(&cursor)?;
                self.operation(text, cursor, depth_before, statement.depth())
            }
            _ => {
                let saved = cursor;
                let word = cursor.word().unwrap_or("");
                match word {
                    "module" | "builtin.module" => {
                        self.phase = Phase::Body;
                        self.module(cursor).map(Some)
                    }
                    "func.func" => {
                        self.phase = Phase::Body;
                        self.function(cursor, depth_before, statement.depth()).map(Some)
                    }
                    "sdy.mesh" => {
                        self.require_started(&saved)?;
                        self.mesh(cursor).map(Some)
                    }
                    _ if text.get(saved.pos..).is_some_and(|r| r.starts_with("\"builtin.module\"")) => {
                        self.phase = Phase::Body;
                        self.ranges = (None, None);
                        Ok(Some(Kind::Module))
                    }
                    _ => {
                        self.require_started(&saved)?;
                        Ok(None)
                    }
                }
            }
        }
    }

    fn require_started(&self, cursor: &Cursor<'_>) -> Result<(), Failed> {
        if self.phase == Phase::Start {
            return Err(cursor.expected("`module` or `func.func` to start the module"));
        }
        Ok(())
    }

    /// `module [@name] [attributes {…}] {`.
    fn module(&mut self, mut cursor: Cursor<'_>) -> Result<Kind, Failed> {
        cursor.skip_trivia();
        let name = if cursor.text.as_bytes().get(cursor.pos) == Some(&b'@') {
            Some(symbol(&mut cursor, "the module's name")?)
        } else {
            None
        };
        let mut attributes = None;
        if cursor.keyword("attributes") {
            cursor.skip_trivia();
            let start = cursor.pos;
            if cursor.text.as_bytes().get(start) != Some(&b'{') {
                return Err(cursor.expected("`{` to start the module's attributes"));
            }
            cursor.pos = group_end(cursor.text, start)?;
            attributes = Some(start..cursor.pos);
        }
        self.ranges = (name, attributes);
        Ok(Kind::Module)
    }

    /// `sdy.mesh @name = <…> …`.
    fn mesh(&mut self, mut cursor: Cursor<'_>) -> Result<Kind, Failed> {
        let name = symbol(&mut cursor, "the mesh's name (`@mesh`)")?;
        cursor.expect(b'=', "`=` after the mesh's name")?;
        cursor.skip_trivia();
        let start = cursor.pos;
        if cursor.text.as_bytes().get(start) != Some(&b'<') {
            return Err(cursor.expected("`<` to start the mesh"));
        }
        cursor.pos = group_end(cursor.text, start)?;
        self.ranges = (Some(name), Some(start..cursor.pos));
        Ok(Kind::Mesh)
    }

    /// `func.func [visibility] @name(args) [-> results] [attributes {…}] [{`.
    fn function(&mut self, mut cursor: Cursor<'_>, depth_before: i64, net: i64) -> Result<Kind, Failed> {
        let text = cursor.text;
        cursor.skip_trivia();
        self.visibility = None;
        if text.as_bytes().get(cursor.pos) != Some(&b'@') {
            self.visibility = cursor.word().map(str::to_owned);
        }
        let name = symbol(&mut cursor, "the function's name (`@main`)")?;
        self.function.clear();
        self.function.push_str(text.get(name).unwrap_or(""));
        self.values.clear();
        cursor.expect(b'(', "`(` to start the arguments")?;
        if !cursor.eat(b')') {
            loop {
                cursor.skip_trivia();
                let mut name = None;
                if cursor.eat(b'%') {
                    let word = cursor.word().ok_or_else(|| cursor.expected("an argument name"))?;
                    name = Some(format!("%{word}"));
                    cursor.expect(b':', "`:` after the argument name")?;
                }
                self.value(&mut cursor, name)?;
                if !cursor.eat(b',') {
                    cursor.expect(b')', "`,` or `)` in the arguments")?;
                    break;
                }
            }
        }
        self.parameters = self.values.len();
        cursor.skip_trivia();
        if text.get(cursor.pos..).is_some_and(|r| r.starts_with("->")) {
            cursor.arrow("`->`")?;
            if cursor.eat(b'(') {
                if !cursor.eat(b')') {
                    loop {
                        self.value(&mut cursor, None)?;
                        if !cursor.eat(b',') {
                            cursor.expect(b')', "`,` or `)` in the results")?;
                            break;
                        }
                    }
                }
            } else {
                let range = read_type(&mut cursor)?;
                self.push_value(text, range, None, ValueAttributes::default())?;
            }
        }
        if cursor.keyword("attributes") {
            cursor.skip_trivia();
            if text.as_bytes().get(cursor.pos) != Some(&b'{') {
                return Err(cursor.expected("`{` to start the function's attributes"));
            }
            cursor.pos = group_end(text, cursor.pos)?;
        }
        skip_location(&mut cursor)?;
        if cursor.eat(b'{') {
            if net != 1 {
                return Err(cursor.expected("the end of the line after the function's `{`"));
            }
            self.function_depth = Some(depth_before);
            self.pending.clear();
        }
        if !cursor.at_end() {
            return Err(cursor.expected("`{` or the end of the function's signature"));
        }
        Ok(Kind::Function)
    }

    /// One argument or result after its name: a type, an optional attribute dictionary and
    /// location.
    fn value(&mut self, cursor: &mut Cursor<'_>, name: Option<String>) -> Result<(), Failed> {
        let range = read_type(cursor)?;
        let mut attributes = ValueAttributes::default();
        cursor.skip_trivia();
        if cursor.text.as_bytes().get(cursor.pos) == Some(&b'{') {
            attributes::dictionary(cursor, &mut attributes)?;
        }
        skip_location(cursor)?;
        self.push_value(cursor.text, range, name, attributes)
    }

    fn push_value(
        &mut self,
        text: &str,
        range: Range<usize>,
        name: Option<String>,
        attributes: ValueAttributes,
    ) -> Result<(), Failed> {
        let type_text = text.get(range.clone()).unwrap_or("");
        let layout = attributes.layout_mode.as_deref().filter(|mode| !matches!(*mode, "default" | "auto"));
        let memory_space = match attributes.memory_kind.as_deref() {
            Some("pinned_host") => Some(5),
            _ => None,
        };
        self.scratch.clear();
        let shape = if types::xla_text(type_text, range.start, Stated { layout, memory_space }, &mut self.scratch)? {
            Some(text::parse_shape_raw(&self.scratch).map_err(|error| {
                (range.start.saturating_add(error_position(&error).min(type_text.len())), HloTextProblem::Shape(error))
            })?)
        } else {
            None
        };
        self.values.push(Value { name, type_text: type_text.to_owned(), shape, attributes });
        Ok(())
    }

    /// `%0 = op …` or `%0:2, %1 = op …`: the results, and their types if the statement states
    /// them; an operation that opens regions waits for its closing statement.
    fn operation(
        &mut self,
        text: &str,
        mut cursor: Cursor<'_>,
        depth_before: i64,
        net: i64,
    ) -> Result<Option<Kind>, Failed> {
        let names_start = cursor.pos;
        loop {
            cursor.expect(b'%', "`%` before a result name")?;
            cursor.word().ok_or_else(|| cursor.expected("a result name"))?;
            if cursor.eat(b':') {
                cursor.integer("a result count")?;
            }
            if !cursor.eat(b',') {
                break;
            }
        }
        let names_end = cursor.pos;
        cursor.expect(b'=', "`=` after the results")?;
        cursor.skip_trivia();
        let opcode = if text.as_bytes().get(cursor.pos) == Some(&b'"') {
            cursor.string()?
        } else {
            let start = cursor.pos;
            let word = cursor.word().ok_or_else(|| cursor.expected("an operation name"))?;
            start..start.saturating_add(word.len())
        };
        let names = text.get(names_start..names_end).unwrap_or("");
        let opcode = text.get(opcode).unwrap_or("");
        if net > 0 {
            if self.pending.len() < MAX_PENDING {
                self.pending.push(Pending { names: names.to_owned(), opcode: opcode.to_owned(), depth: depth_before });
            }
            return Ok(None);
        }
        self.names.clear();
        self.names.push_str(names);
        self.opcode.clear();
        self.opcode.push_str(opcode);
        self.results(text, cursor.pos)
    }

    /// A statement that starts with `}` or `)`: the end of a function, or of an operation's
    /// regions (whose types follow).
    fn closing(&mut self, text: &str, at: usize) -> Result<Option<Kind>, Failed> {
        if let Some(depth) = self.function_depth {
            if self.depth <= depth {
                self.function_depth = None;
                self.pending.clear();
                return Ok(Some(Kind::FunctionEnd));
            }
        }
        match self.pending.last() {
            Some(pending) if self.depth <= pending.depth => {
                let pending = self.pending.pop().unwrap_or_else(|| Pending {
                    names: String::new(),
                    opcode: String::new(),
                    depth: 0,
                });
                self.names = pending.names;
                self.opcode = pending.opcode;
                self.results(text, at)
            }
            _ => Ok(None),
        }
    }

    /// The result types after the last `:` outside brackets from `from`, for the results in
    /// `self.names`; `None` when there are none or a type has no XLA shape.
    fn results(&mut self, text: &str, from: usize) -> Result<Option<Kind>, Failed> {
        // The names and counts as written (`%0:1000000` allocates nothing): the results number
        // their sum, which must equal the types the statement states.
        self.name_list.clear();
        let mut results = 0usize;
        let mut cursor = Cursor::new(&self.names);
        while cursor.eat(b'%') {
            let start = cursor.pos;
            let word = cursor.word().unwrap_or("");
            let range = start.saturating_sub(1)..start.saturating_add(word.len());
            let count = if cursor.eat(b':') {
                Some(usize::try_from(cursor.integer("a result count").unwrap_or(0)).unwrap_or(0))
            } else {
                None
            };
            results = results.saturating_add(count.unwrap_or(1));
            self.name_list.push((range, count));
            if !cursor.eat(b',') {
                break;
            }
        }
        // The statement cut's scan found the separator, if it was sure: no bracket is open at
        // `from` (after the result names and opcode, or at the statement's first byte), so its
        // last `:` from `from` on is the one `last_colon` would find.
        let colon = match self.separator {
            TypeSeparator::At(at) => Some(at).filter(|&at| at >= from),
            TypeSeparator::Absent => None,
            TypeSeparator::Unsure => last_colon(text, from)?,
        };
        let Some(colon) = colon else { return Ok(None) };
        self.type_texts.clear();
        let mut cursor = Cursor::new(text);
        cursor.pos = colon.saturating_add(1);
        cursor.skip_trivia();
        if cursor.eat(b'(') {
            // A function type: skip the operands' types, read the results'.
            cursor.pos = value_end(text, cursor.pos, b"")?;
            cursor.expect(b')', "`)` after the operand types")?;
            cursor.arrow("`->` before the result types")?;
            if cursor.eat(b'(') {
                if !cursor.eat(b')') {
                    self.type_list(&mut cursor)?;
                    cursor.expect(b')', "`)` after the result types")?;
                }
            } else {
                let range = read_type(&mut cursor)?;
                self.type_texts.push(range);
            }
        } else {
            self.type_list(&mut cursor)?;
        }
        skip_location(&mut cursor)?;
        if !cursor.at_end() {
            return Err(cursor.expected("the end of the operation after its types"));
        }
        if self.type_texts.len() != results || self.type_texts.is_empty() {
            return Ok(None);
        }
        self.shapes.clear();
        // Room for every result first: a cache starting over in the loop would move the earlier
        // ones.
        let keep = self.cache.reserve(self.type_texts.len());
        for range in &self.type_texts {
            let type_text = text.get(range.clone()).unwrap_or("");
            if let Some(at) = self.cache.find(type_text).filter(|_| keep) {
                self.shapes.push(ShapeRef::Cached(at));
                continue;
            }
            self.scratch.clear();
            if !types::xla_text(type_text, range.start, Stated::default(), &mut self.scratch)? {
                return Ok(None);
            }
            let shape =
                text::parse_shape_raw(&self.scratch).map_err(|error| (range.start, HloTextProblem::Shape(error)))?;
            if keep {
                match self.cache.insert(type_text, shape) {
                    Ok(at) => self.shapes.push(ShapeRef::Cached(at)),
                    Err(shape) => self.shapes.push(ShapeRef::Fresh(shape)),
                }
            } else {
                self.shapes.push(ShapeRef::Fresh(shape));
            }
        }
        Ok(Some(Kind::Op))
    }

    /// `type (, type)*` into `self.type_texts`.
    fn type_list(&mut self, cursor: &mut Cursor<'_>) -> Result<(), Failed> {
        loop {
            let range = read_type(cursor)?;
            self.type_texts.push(range);
            if !cursor.eat(b',') {
                return Ok(());
            }
        }
    }
}
