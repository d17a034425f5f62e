//! XLA's sharding text (`hlo_parser.cc` `ParseSharding` / `ParseSingleSharding`,
//! `docs/sharding.md` §3.1), strictly: everything XLA's parser accepts and then builds is
//! accepted and canonicalized the same way; what it accepts but builds wrongly or aborts on (a
//! short or long device list, duplicate or negative devices, an iota whose products differ, a
//! transpose that is not a permutation) is an error with the position of the sharding.

use std::str::FromStr;

use crate::error::{Error, Result};
use crate::proto::OpMetadata;
use crate::text::lexer::{Found, Kind, Lexer, Token};
use crate::text::parse::parse_error;

use super::build::{TilePaths, build_explicit, build_iota};
use super::canonical;
use super::model::{HloSharding, ShardGroup, ShardGroupKind, ShardingKind, SubgroupType};
use super::proto::subgroups;

#[path = "parse_named.rs"]
mod named;

impl FromStr for HloSharding {
    type Err = Error;

    /// Parses XLA's sharding text (see [`parse`]).
    fn from_str(s: &str) -> Result<Self> {
        parse(s)
    }
}

/// Parses XLA's text of a sharding, `{devices=[2,2]<=[4]}`, a tuple `{{replicated}, {manual}}`
/// or an empty tuple `{}`, with metadata (kept, not printed) and shard groups.
///
/// # Errors
///
/// [`Error::Parse`] with the byte position: a syntax error, or a sharding XLA would refuse,
/// abort on or build wrongly (the problem is named in the message).
///
/// ```
/// use xla_shape::sharding;
/// let parsed = sharding::parse("{devices=[2,2]0,2,1,3 metadata={op_name=\"x\"}}")?;
/// assert_eq!(parsed.to_string(), "{devices=[2,2]0,2,1,3}");
/// assert_eq!(parsed.metadata()[0].op_name, "x");
/// let err = sharding::parse("{devices=[2,2]0,1,1,3}").unwrap_err();
/// assert!(err.to_string().contains("device 1 is not unique in tile assignment"));
/// # Ok::<(), xla_shape::Error>(())
/// ```
pub fn parse(input: &str) -> Result<HloSharding> {
    let mut parser = Parser::new(input);
    let sharding = parser.sharding()?;
    parser.expect_eof()?;
    Ok(sharding)
}

/// Parses sharding text and prints it back as XLA prints it (the canonical form): what a reader
/// of HLO text shows for a `sharding={…}` attribute.
///
/// # Errors
///
/// As [`parse`].
///
/// ```
/// use xla_shape::sharding;
/// let text = sharding::canonical_text("{devices=[2,1,4]<=[8] last_tile_dims={replicated}}")?;
/// assert_eq!(text, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
/// # Ok::<(), xla_shape::Error>(())
/// ```
pub fn canonical_text(input: &str) -> Result<String> {
    parse(input).map(|s| s.to_string())
}

struct Parser<'a> {
    input: &'a str,
    lexer: Lexer<'a>,
    token: Token<'a>,
}

/// What one `{…}` single sharding said before it is built: XLA's parser keeps one flag per
/// keyword and resolves them afterwards, in a fixed order.
#[derive(Default)]
#[allow(clippy::struct_excessive_bools, reason = "one flag per keyword, as XLA's parser keeps them")]
struct Single {
    maximal: bool,
    replicated: bool,
    manual: bool,
    unknown: bool,
    unreduced: bool,
    last_tile_dim_replicate: bool,
    devices: Vec<i64>,
    dims: Vec<i64>,
    reshape_dims: Vec<i64>,
    perm: Vec<i64>,
    types: Option<Vec<SubgroupType>>,
    metadata: Vec<OpMetadata>,
    group: Option<ShardGroup>,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        let mut lexer = Lexer::new(input);
        let token = lexer.next_token();
        Self { input, lexer, token }
    }

    fn bump(&mut self) {
        self.token = self.lexer.next_token();
    }

    fn error_at(&self, position: usize, expected: &str, found: String) -> Error {
        parse_error(self.input, position, expected, found)
    }

    fn unexpected(&self, expected: &str) -> Error {
        let found = Found { token: &self.token, input: self.input }.to_string();
        self.error_at(self.token.start, expected, found)
    }

    fn expect(&mut self, kind: Kind<'static>, expected: &str) -> Result<()> {
        if self.token.kind == kind {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_eof(&self) -> Result<()> {
        if self.token.kind == Kind::Eof { Ok(()) } else { Err(self.unexpected("end of input after the sharding")) }
    }

    fn int(&mut self, expected: &str) -> Result<(i64, usize)> {
        if let Kind::Int(v) = self.token.kind {
            let at = self.token.start;
            self.bump();
            Ok((v, at))
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// `'{' (single_body | '}' | single (',' single)* '}')`.
    fn sharding(&mut self) -> Result<HloSharding> {
        self.expect(Kind::LBrace, "`{` to start a sharding")?;
        match self.token.kind {
            Kind::RBrace => {
                self.bump();
                Ok(HloSharding::tuple(Vec::new()))
            }
            Kind::LBrace => {
                let mut elements = Vec::new();
                loop {
                    self.expect(Kind::LBrace, "`{` to start a tuple element's sharding")?;
                    elements.push(self.single()?);
                    if self.token.kind == Kind::Comma {
                        self.bump();
                    } else {
                        break;
                    }
                }
                self.expect(Kind::RBrace, "`}` to end the tuple sharding")?;
                Ok(HloSharding::tuple(elements))
            }
            _ => self.single(),
        }
    }

    /// The body of a single sharding after its `{`, up to and including its `}`.
    fn single(&mut self) -> Result<HloSharding> {
        if matches!(self.token.kind, Kind::Ident("mesh" | "maximal_mesh")) {
            return self.named();
        }
        let loc = self.token.start;
        let mut s = Single::default();
        loop {
            match self.token.kind {
                Kind::RBrace => break,
                Kind::Ident("maximal") => s.maximal = true,
                Kind::Ident("replicated") => s.replicated = true,
                Kind::Ident("manual") => s.manual = true,
                Kind::Ident("unknown") => s.unknown = true,
                Kind::Ident("unreduced") => s.unreduced = true,
                Kind::Ident("last_tile_dim_replicate") => s.last_tile_dim_replicate = true,
                Kind::Ident(kind @ ("shard_as" | "shard_like")) => {
                    self.bump();
                    let (id, _) = self.int("a shard group id")?;
                    let kind = if kind == "shard_as" { ShardGroupKind::As } else { ShardGroupKind::Like };
                    s.group = Some(ShardGroup { id, kind });
                    continue;
                }
                Kind::Name("device") => {
                    self.bump();
                    let (device, _) = self.int("an integer after `device=`")?;
                    s.devices = vec![device];
                    continue;
                }
                Kind::Name("devices") => {
                    self.bump();
                    self.tile_assignment(&mut s)?;
                    continue;
                }
                Kind::Name("metadata") => {
                    self.bump();
                    self.metadata_list(&mut s.metadata)?;
                    continue;
                }
                Kind::Name("last_tile_dims") => {
                    self.bump();
                    s.types = Some(self.subgroup_types()?);
                    continue;
                }
                Kind::Name(_) => {
                    return Err(
                        self.unexpected("`device=`, `devices=`, `metadata=` or `last_tile_dims=` in a sharding")
                    );
                }
                _ => return Err(self.unexpected("a sharding attribute or `}`")),
            }
            self.bump();
        }
        let sharding = self.build(&s, loc)?;
        self.bump(); // the closing `}`
        Ok(sharding)
    }

    /// `'[' dims ']' ( '<=' '[' reshape ']' ('T(' perm ')')? | devices )`.
    fn tile_assignment(&mut self, s: &mut Single) -> Result<()> {
        self.expect(Kind::LSquare, "`[` to start the sharding devices shape")?;
        s.dims.extend(self.int_list("a tile assignment dimension")?);
        self.expect(Kind::RSquare, "`]` to end the sharding devices shape")?;
        if self.token.kind == Kind::Leq {
            self.bump();
            let (reshape, perm) = self.iota()?;
            s.perm.extend(perm);
            s.reshape_dims.extend(reshape);
        } else {
            s.devices.extend(self.int_list("a device id")?);
        }
        Ok(())
    }

    /// `'[' reshape ']' ('T(' perm ')')?`, the `T` exactly when there is more than one reshape
    /// dimension (a single one has perm `[0]`).
    fn iota(&mut self) -> Result<(Vec<i64>, Vec<i64>)> {
        self.expect(Kind::LSquare, "`[` to start the iota reshape dims")?;
        let reshape = self.int_list("an iota reshape dimension")?;
        self.expect(Kind::RSquare, "`]` to end the iota reshape dims")?;
        if reshape.len() == 1 {
            return Ok((reshape, vec![0]));
        }
        if self.token.kind != Kind::Ident("T") {
            return Err(self.unexpected("`T(` to start the iota transpose perm"));
        }
        self.bump();
        self.expect(Kind::LParen, "`(` after `T`")?;
        let perm = self.int_list("an iota transpose dimension")?;
        self.expect(Kind::RParen, "`)` to end the iota transpose perm")?;
        Ok((reshape, perm))
    }

    /// `int (',' int)*`.
    fn int_list(&mut self, expected: &str) -> Result<Vec<i64>> {
        let mut out = vec![self.int(expected)?.0];
        while self.token.kind == Kind::Comma {
            self.bump();
            out.push(self.int(expected)?.0);
        }
        Ok(out)
    }

    /// `'{' type (',' type)* '}'`.
    fn subgroup_types(&mut self) -> Result<Vec<SubgroupType>> {
        self.expect(Kind::LBrace, "`{` to start last_tile_dims")?;
        let mut types = Vec::new();
        loop {
            let ty = match self.token.kind {
                Kind::Ident("replicated") => SubgroupType::Replicated,
                Kind::Ident("manual") => SubgroupType::Manual,
                Kind::Ident("unreduced") => SubgroupType::Unreduced,
                _ => return Err(self.unexpected("`replicated`, `manual` or `unreduced`")),
            };
            types.push(ty);
            self.bump();
            if self.token.kind == Kind::Comma {
                self.bump();
            } else {
                break;
            }
        }
        self.expect(Kind::RBrace, "`}` to end last_tile_dims")?;
        Ok(types)
    }

    /// `'{' metadata_body` or `'{' '{' metadata_body (',' '{' metadata_body)* '}'`.
    fn metadata_list(&mut self, out: &mut Vec<OpMetadata>) -> Result<()> {
        self.expect(Kind::LBrace, "`{` to start metadata")?;
        if self.token.kind == Kind::LBrace {
            loop {
                self.expect(Kind::LBrace, "`{` to start one metadata")?;
                out.push(self.metadata_body()?);
                if self.token.kind == Kind::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            return self.expect(Kind::RBrace, "`}` to end the metadata list");
        }
        out.push(self.metadata_body()?);
        Ok(())
    }

    /// `(name '=' value)* '}'`: the string and integer attributes of `OpMetadata`.
    fn metadata_body(&mut self) -> Result<OpMetadata> {
        let mut m = OpMetadata::default();
        while self.token.kind != Kind::RBrace {
            let Kind::Name(name) = self.token.kind else {
                return Err(self.unexpected("a metadata attribute or `}`"));
            };
            let at = self.token.start;
            let text = match name {
                "op_type" => Some(&mut m.op_type),
                "op_name" => Some(&mut m.op_name),
                "source_file" => Some(&mut m.source_file),
                "deduplicated_name" => Some(&mut m.deduplicated_name),
                "scheduling_name" => Some(&mut m.scheduling_name),
                _ => None,
            };
            if let Some(slot) = text {
                let (value, _) = self
                    .lexer
                    .string_literal()
                    .map_err(|pos| self.error_at(pos, "a quoted string", "something else".to_owned()))?;
                *slot = value;
                self.bump();
            } else {
                self.bump();
                let (value, value_at) = self.int("an integer metadata value")?;
                let narrow =
                    |v: i64| i32::try_from(v).map_err(|_| self.error_at(value_at, "a 32-bit integer", v.to_string()));
                match name {
                    "source_line" => m.source_line = narrow(value)?,
                    "source_end_line" => m.source_end_line = narrow(value)?,
                    "source_column" => m.source_column = narrow(value)?,
                    "source_end_column" => m.source_end_column = narrow(value)?,
                    "stack_frame_id" => m.stack_frame_id = narrow(value)?,
                    "size_of_generated_code_in_bytes" => m.size_of_generated_code_in_bytes = value,
                    "size_of_memory_working_set_in_bytes" => m.size_of_memory_working_set_in_bytes = value,
                    _ => return Err(self.error_at(at, "a metadata attribute", format!("`{name}=`"))),
                }
            }
            if self.token.kind == Kind::Comma {
                self.bump();
            }
        }
        self.bump();
        Ok(m)
    }

    /// XLA's resolution of the flags (replicated, then maximal, manual, unknown, unreduced, then
    /// tiled), with the checks XLA's parser and constructors make.
    fn build(&self, s: &Single, loc: usize) -> Result<HloSharding> {
        let refuse = |message: &str| self.error_at(loc, message, "a sharding that breaks it".to_owned());
        let no_devices = |kind: &str, s: &Single| {
            if s.devices.is_empty() && s.dims.is_empty() {
                Ok(())
            } else {
                Err(refuse(&format!("{kind} shardings should not have any devices assigned")))
            }
        };
        let flagged = |kind: ShardingKind, s: &Single| HloSharding::of(kind, s.metadata.clone());
        let sharding = if s.replicated {
            no_devices("replicated", s)?;
            flagged(ShardingKind::Replicated, s)
        } else if s.maximal {
            let [device] = s.devices[..] else {
                return Err(refuse("maximal shardings should have exactly one device assigned"));
            };
            let device = u64::try_from(device)
                .map_err(|_| self.semantic(loc, &format!("device {device} is negative in tile assignment")))?;
            flagged(ShardingKind::Maximal(super::DeviceId(device)), s)
        } else if s.manual {
            no_devices("manual", s)?;
            flagged(ShardingKind::Manual, s)
        } else if s.unknown {
            no_devices("unknown", s)?;
            flagged(ShardingKind::Unknown, s)
        } else if s.unreduced {
            no_devices("unreduced", s)?;
            flagged(ShardingKind::Unreduced, s)
        } else {
            if s.dims.is_empty() {
                return Err(refuse("non-maximal shardings must have a tile assignment list including dimensions"));
            }
            if s.perm.len() != s.reshape_dims.len() {
                return Err(refuse("iota_transpose_perm should have the same rank as iota_reshape_dims"));
            }
            if s.last_tile_dim_replicate && s.types.is_some() {
                return Err(refuse("last_tile_dim_replicate and last_tile_dims are exclusive"));
            }
            let paths = TilePaths::text();
            let tiles = if s.reshape_dims.is_empty() {
                if s.devices.len() <= 1 {
                    return Err(refuse("non-maximal shardings must have more than one device assigned"));
                }
                build_explicit(&s.dims, &s.devices, &paths)
            } else {
                build_iota(&s.dims, &s.reshape_dims, &s.perm, &paths)
            }
            .map_err(|e| self.semantic_error(loc, &e))?;
            let types = s.types.clone().unwrap_or_default();
            if types.is_empty() && !s.last_tile_dim_replicate {
                canonical::tile(tiles, s.metadata.clone())
            } else {
                subgroups(tiles, &types, s.last_tile_dim_replicate, s.metadata.clone(), &paths.dims)
                    .map_err(|e| self.semantic_error(loc, &e))?
            }
        };
        Ok(sharding.with_shard_group(s.group))
    }

    fn semantic(&self, loc: usize, message: &str) -> Error {
        self.error_at(loc, "a sharding XLA accepts", message.to_owned())
    }

    fn semantic_error(&self, loc: usize, error: &Error) -> Error {
        match error {
            Error::Sharding(e) => self.semantic(loc, &e.problem.to_string()),
            other => self.semantic(loc, &other.to_string()),
        }
    }
}
