//! The text of named ("V3") shardings, as jaxlib 0.10.2's HLO parser reads it
//! (`docs/sharding.md` §9.5):
//!
//! ```text
//! named  := 'maximal_mesh' '[' 'device_id=' INT ']' (',' attr)* '}'
//!         | 'mesh' '[' (name '=' INT (',' name '=' INT)*)? ']' (',' ('device_ids=' '(' order ')')?)?
//!           ','? ('[' (dim (',' dim)*)? ']' | 'replicated' | 'unreduced' | 'manual') (',' attr)* '}'
//! order  := INT (',' INT)* | '[' INT ']' | '[' INT (',' INT)+ ']' 'T' '(' INT (',' INT)* ')'
//! dim    := '{' '?'? '}' | '{' axis (',' axis)* (',' '?')? '}'
//! axis   := name (':' '(' INT ')' INT)?            name := a quoted string, '…' or "…"
//! attr   := ('replicated=' | 'unreduced=' | 'manual=') '{' (axis (',' axis)*)? '}' | 'metadata=' …
//! ```
//!
//! A list given more than once is one list, the axes in the order given.
//!
//! An axis name that is no mesh axis but an integer is that axis' index (XLA's `SimpleAtoi`
//! fallback). The body after `{` is read here; [`super::Parser::single`] hands it over.

use crate::error::{AxisList, FieldPath, NamedShardingProblem, Result, ShardingProblem};
use crate::proto::OpMetadata;
use crate::text::lexer::Kind;

use super::super::device::DeviceId;
use super::super::model::{HloSharding, ShardingKind};
use super::super::named::{AxisRef, DimSharding, Mesh, MeshOrder, NamedSharding, axis_ref, mesh_of, named_error};
use super::Parser;

/// An axis as written: its name and sub-axis, resolved once the mesh is known.
type Written = (String, usize, Option<(i64, i64)>);

/// What the text said, before it is checked.
#[derive(Default)]
struct Parts {
    names: Vec<String>,
    sizes: Vec<i64>,
    maximal: Option<i64>,
    ids: Option<Vec<i64>>,
    transform: Option<(Vec<i64>, Vec<i64>)>,
    dims: Vec<(Vec<Written>, bool)>,
    lists: [Vec<Written>; 3],
    all: Option<usize>,
    metadata: Vec<OpMetadata>,
}

impl<'a> Parser<'a> {
    /// The body of a named sharding after its `{`, up to and including its `}`.
    pub(super) fn named(&mut self) -> Result<HloSharding> {
        let loc = self.token.start;
        let mut p = Parts::default();
        if self.token.kind == Kind::Ident("maximal_mesh") {
            self.bump();
            self.expect(Kind::LSquare, "`[` after maximal_mesh")?;
            if self.token.kind != Kind::Name("device_id") {
                return Err(self.unexpected("`device_id=` in maximal_mesh"));
            }
            self.bump();
            p.maximal = Some(self.int("a device id")?.0);
            self.expect(Kind::RSquare, "`]` to end maximal_mesh")?;
        } else {
            self.bump(); // `mesh`
            if self.token.kind != Kind::LSquare {
                return Err(self.unexpected("`[` after mesh"));
            }
            if self.peek() == Kind::RSquare {
                self.bump();
            } else {
                loop {
                    let (name, at) = self
                        .lexer
                        .string_literal()
                        .map_err(|pos| self.error_at(pos, "a quoted axis name", "something else".to_owned()))?;
                    if !self.lexer.eat(b'=') {
                        return Err(self.error_at(at, "`=` after a mesh axis name", "something else".to_owned()));
                    }
                    self.bump();
                    p.names.push(name);
                    p.sizes.push(self.int("a mesh axis size")?.0);
                    if self.token.kind != Kind::Comma {
                        break;
                    }
                }
            }
            self.expect(Kind::RSquare, "`]` to end the mesh")?;
            // jaxlib's commas here are optional, each on its own: `mesh[…] [{…}]`,
            // `mesh[…],, [{…}]` and `device_ids=(…) replicated` parse; `device_ids` only after a
            // comma (`docs/sharding.md` §9.6, DS-16).
            let comma = self.eat_comma();
            if comma && self.token.kind == Kind::Name("device_ids") {
                self.bump();
                self.device_ids(&mut p)?;
            }
            self.eat_comma();
            match self.token.kind {
                Kind::LSquare => self.dims(&mut p)?,
                Kind::Ident("replicated") => self.bump(),
                Kind::Ident("unreduced") => {
                    p.all = Some(1);
                    self.bump();
                }
                Kind::Ident("manual") => {
                    p.all = Some(2);
                    self.bump();
                }
                _ => return Err(self.unexpected("`[`, `replicated`, `unreduced` or `manual` after the mesh")),
            }
        }
        while self.token.kind == Kind::Comma {
            self.bump();
            match self.token.kind {
                Kind::Name(list @ ("replicated" | "unreduced" | "manual")) => {
                    self.bump();
                    let k = match list {
                        "replicated" => 0,
                        "unreduced" => 1,
                        _ => 2,
                    };
                    let (axes, _) = self.axes(false)?;
                    // A list given twice is one list, the second's axes after the first's, as
                    // jaxlib reads it; an axis named twice or out of order is then refused where
                    // jaxlib aborts (§9.6, DS-17).
                    if let Some(slot) = p.lists.get_mut(k) {
                        slot.extend(axes);
                    }
                }
                Kind::Name("metadata") => {
                    self.bump();
                    self.metadata_list(&mut p.metadata)?;
                }
                _ => return Err(self.unexpected("`replicated=`, `unreduced=`, `manual=` or `metadata=`")),
            }
        }
        if self.token.kind != Kind::RBrace {
            return Err(self.unexpected("`,` or `}` in a named sharding"));
        }
        let sharding = build_named(p).map_err(|e| self.semantic_error(loc, &e))?;
        self.bump();
        Ok(sharding)
    }

    /// Steps past a `,` if it is the current token; whether it was.
    fn eat_comma(&mut self) -> bool {
        let comma = self.token.kind == Kind::Comma;
        if comma {
            self.bump();
        }
        comma
    }

    /// The kind of the token after the current one.
    fn peek(&self) -> Kind<'a> {
        let mut look = self.lexer;
        look.next_token().kind
    }

    /// A quoted name right after the current token; the token after it becomes current.
    fn quoted(&mut self) -> Result<(String, usize)> {
        let found = self
            .lexer
            .string_literal()
            .map_err(|pos| self.error_at(pos, "a quoted axis name", "something else".to_owned()))?;
        self.bump();
        Ok(found)
    }

    /// `'(' order ')'`.
    fn device_ids(&mut self, p: &mut Parts) -> Result<()> {
        self.expect(Kind::LParen, "`(` to start device_ids")?;
        if self.token.kind == Kind::LSquare {
            p.transform = Some(self.iota()?);
        } else {
            p.ids = Some(self.int_list("a device id")?);
        }
        self.expect(Kind::RParen, "`)` to end device_ids")
    }

    /// `'[' (dim (',' dim)*)? ']'`.
    fn dims(&mut self, p: &mut Parts) -> Result<()> {
        self.bump(); // `[`
        if self.token.kind == Kind::RSquare {
            self.bump();
            return Ok(());
        }
        loop {
            let (axes, open) = self.axes(true)?;
            p.dims.push((axes, !open));
            if self.token.kind != Kind::Comma {
                break;
            }
            self.bump();
        }
        self.expect(Kind::RSquare, "`]` to end the dimension shardings")
    }

    /// The axes of one `{…}` (its `{` the current token, never bumped past: the lexer must stop
    /// before a quote), up to and including `}`, and whether a `?` (allowed in a `dimension`
    /// only) made it open.
    fn axes(&mut self, dimension: bool) -> Result<(Vec<Written>, bool)> {
        if self.token.kind != Kind::LBrace {
            return Err(self.unexpected("`{` to start an axis list"));
        }
        let mut axes = Vec::new();
        let mut open = false;
        // The current token is what came before: `{` or `,`.
        loop {
            match self.peek() {
                Kind::RBrace if axes.is_empty() => self.bump(),
                Kind::Question if dimension => {
                    self.bump();
                    open = true;
                    self.bump();
                }
                _ => {
                    let (name, at) = self.quoted()?;
                    let sub = if self.token.kind == Kind::Colon {
                        self.bump();
                        self.expect(Kind::LParen, "`(` to start a sub-axis")?;
                        let pre = self.int("a sub-axis pre-size")?.0;
                        self.expect(Kind::RParen, "`)` after the sub-axis pre-size")?;
                        Some((pre, self.int("a sub-axis size")?.0))
                    } else {
                        None
                    };
                    axes.push((name, at, sub));
                    if self.token.kind == Kind::Comma {
                        continue;
                    }
                }
            }
            break;
        }
        if self.token.kind != Kind::RBrace {
            return Err(self.unexpected("`,` or `}` in an axis list"));
        }
        self.bump();
        Ok((axes, open))
    }
}

/// Resolves names against the mesh and checks the whole as `from_proto` does.
fn build_named(p: Parts) -> Result<HloSharding> {
    let root = FieldPath::root();
    let mesh = if let Some(device) = p.maximal {
        let device = u64::try_from(device)
            .map_err(|_| crate::error::Error::sharding(root.clone(), ShardingProblem::NegativeDevice { device }))?;
        Mesh::Maximal(DeviceId(device))
    } else if p.names.is_empty() {
        if let Some(ids) = &p.ids {
            return Err(named_error(root, NamedShardingProblem::DeviceIdCount { ids: ids.len(), mesh: 0 }));
        }
        Mesh::Empty
    } else {
        let order = match (&p.ids, &p.transform) {
            (Some(ids), _) => MeshOrder::List(ids),
            (None, Some((reshape, perm))) => MeshOrder::Transform { reshape_dims: reshape, perm },
            (None, None) => MeshOrder::Iota,
        };
        mesh_of(p.names.clone(), &p.sizes, &order, &root)?
    };
    let resolve = |axes: &[Written]| -> Result<Vec<AxisRef>> {
        axes.iter()
            .map(|(name, _, sub)| {
                let index = match p.names.iter().position(|n| n == name) {
                    Some(i) => i64::try_from(i).unwrap_or(i64::MAX),
                    None => name.parse::<i64>().map_err(|_| {
                        named_error(root.clone(), NamedShardingProblem::UnknownAxisName { name: name.clone() })
                    })?,
                };
                axis_ref(index, *sub, &root)
            })
            .collect()
    };
    let dims = p
        .dims
        .iter()
        .map(|(axes, closed)| Ok(DimSharding { axes: resolve(axes)?, closed: *closed }))
        .collect::<Result<Vec<_>>>()?;
    let [replicated, unreduced, manual] = &p.lists;
    let mut lists = [resolve(replicated)?, resolve(unreduced)?, resolve(manual)?];
    if let Some(k) = p.all.filter(|_| p.names.is_empty()) {
        let list = if k == 1 { AxisList::Unreduced } else { AxisList::Manual };
        return Err(named_error(root, NamedShardingProblem::EmptyMeshKeyword { list }));
    }
    if let Some(slot) = p.all.and_then(|k| lists.get_mut(k)) {
        *slot = (0..p.names.len()).map(|index| AxisRef { index, sub: None }).collect();
    }
    let [replicated, unreduced, manual] = lists;
    let named = NamedSharding::new(mesh, dims, replicated, unreduced, manual, &|_: AxisList| root.clone())?;
    Ok(HloSharding::of(ShardingKind::Named(named), p.metadata))
}
