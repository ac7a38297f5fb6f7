//! A recursive-descent parser from TSDL tokens to [`Metadata`]. It understands what
//! LTTng 2.x, barectf and kairos emit: `typealias`/`typedef`, named and anonymous
//! `struct`, `enum` and `variant` declarations, integer/float/string types with their
//! attributes, static and dynamic arrays, and the `trace`, `env`, `clock`, `stream` and
//! `event` blocks. `callsite` and unknown attributes are skipped, as babeltrace2 does.
//!
//! One file for one grammar (about 1,100 lines and its tests): the productions
//! (declarations, type specifiers, attribute lists, expressions) call one another
//! recursively, and the file reads top-down beside the CTF 1.8 specification's grammar;
//! split by production, each call would send the reader to another file.

use std::collections::HashMap;
use std::sync::Arc;

use super::lexer::{Tok, tokenize};
use super::types::{
    ByteOrder, Encoding, EnumMapping, EnumType, Field, FieldPath, FieldType, FloatType, IntType,
    Scope, StructType, VariantType, strip_underscore,
};
use super::validate::{self, Lines};
use super::{Clock, EnvValue, EventClass, Metadata, MetadataError, StreamClass};

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 64;
/// A static array larger than this many elements is refused as absurd.
const MAX_STATIC_LEN: u64 = 1 << 28;
/// Type nodes that copies of named types (aliases, named structs, enums, variants) may
/// add up to: a few lines of TSDL that nest aliases can otherwise expand exponentially.
const MAX_COPIED_NODES: u64 = 1 << 20;

pub(super) fn parse(text: &str) -> Result<Metadata, MetadataError> {
    let toks = tokenize(text)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        copied: 0,
        aliases: HashMap::new(),
        structs: HashMap::new(),
        enums: HashMap::new(),
        variants: HashMap::new(),
        clock_names: Vec::new(),
        clocks: Vec::new(),
        md: Metadata {
            major: 1,
            minor: 8,
            uuid: None,
            byte_order: ByteOrder::Native,
            packet_header: None,
            env: Vec::new(),
            clocks: Vec::new(),
            streams: Vec::new(),
        },
        events: Vec::new(),
        lines: Lines::default(),
    };
    while !p.at_end() {
        p.top_level()?;
    }
    p.finish()
}

/// A literal on the right of `=` in a block.
#[derive(Debug, Clone)]
enum Lit {
    Int(i128),
    Str(String),
    /// An identifier or dotted identifier, such as `le` or `clock.monotonic.value`.
    Path(Vec<String>),
}

struct Parser {
    toks: Vec<(Tok, u32)>,
    pos: usize,
    depth: u32,
    /// Type nodes copied out of named types so far (see [`MAX_COPIED_NODES`]).
    copied: u64,
    aliases: HashMap<String, FieldType>,
    structs: HashMap<String, StructType>,
    enums: HashMap<String, EnumType>,
    variants: HashMap<String, Vec<Field>>,
    /// Clock names in order of first mention; an integer's `map` holds the index.
    clock_names: Vec<String>,
    clocks: Vec<Option<Clock>>,
    md: Metadata,
    /// Event classes with the line their block starts on, filed under their stream
    /// classes once every stream class is known.
    events: Vec<(EventClass, u32)>,
    lines: Lines,
}

impl Parser {
    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |(_, l)| *l)
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, MetadataError> {
        Err(MetadataError::new(self.line(), message))
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|(t, _)| t)
    }

    fn next(&mut self) -> Result<Tok, MetadataError> {
        match self.toks.get(self.pos) {
            Some((t, _)) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => self.err("unexpected end of metadata"),
        }
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == word)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), MetadataError> {
        if self.eat_punct(c) {
            return Ok(());
        }
        let want = Tok::Punct(c).describe();
        let found = self
            .peek()
            .map_or("end of metadata".to_string(), Tok::describe);
        self.err(format!("expected {want}, found {found}"))
    }

    fn ident(&mut self) -> Result<String, MetadataError> {
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            other => {
                self.pos -= 1;
                self.err(format!(
                    "expected an identifier, found {}",
                    other.describe()
                ))
            }
        }
    }

    fn enter(&mut self) -> Result<(), MetadataError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("types nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn top_level(&mut self) -> Result<(), MetadataError> {
        let Some(Tok::Ident(word)) = self.peek().cloned() else {
            if self.eat_punct(';') {
                return Ok(());
            }
            let found = self.peek().map_or(String::new(), Tok::describe);
            return self.err(format!("expected a declaration, found {found}"));
        };
        match word.as_str() {
            "typealias" => self.typealias(),
            "typedef" => self.typedef(),
            "trace" | "env" | "clock" | "stream" | "event" | "callsite"
                if self.peek_at(1) == Some(&Tok::Punct('{')) =>
            {
                let line = self.line();
                self.pos += 2;
                let entries = self.block_body()?;
                self.expect_punct(';')?;
                self.apply_block(&word, entries, line)
            }
            "struct" | "enum" | "variant" => {
                // A named type declared at top level: `struct name { ... } align(8);`
                self.type_spec()?;
                self.expect_punct(';')
            }
            _ => self.err(format!("unknown top-level declaration `{word}`")),
        }
    }

    fn typealias(&mut self) -> Result<(), MetadataError> {
        self.pos += 1;
        let ty = self.type_spec()?;
        self.expect_punct('A')?;
        let mut words = Vec::new();
        while let Some(Tok::Ident(w)) = self.peek() {
            words.push(w.clone());
            self.pos += 1;
        }
        // A pointer alias (`:= void *`) only names an integer in practice.
        while self.eat_punct('*') {}
        if words.is_empty() {
            return self.err("expected a name after `:=` in typealias");
        }
        self.expect_punct(';')?;
        self.aliases.insert(words.join(" "), ty);
        Ok(())
    }

    fn typedef(&mut self) -> Result<(), MetadataError> {
        self.pos += 1;
        let (ty, decls) = self.declaration()?;
        for (name, dims) in decls {
            self.charge(ty.nodes())?;
            let ty = self.apply_dims(ty.clone(), dims)?;
            self.aliases.insert(name, ty);
        }
        Ok(())
    }

    /// `type declarator, declarator ... ;` where the type may be a multi-word alias whose
    /// last word is the first declarator's name.
    #[allow(clippy::type_complexity)]
    fn declaration(&mut self) -> Result<(FieldType, Vec<(String, Vec<Dim>)>), MetadataError> {
        let ty = if matches!(self.peek(), Some(Tok::Ident(w)) if !is_type_keyword(w)) {
            let mut words = Vec::new();
            while let Some(Tok::Ident(w)) = self.peek() {
                words.push(w.clone());
                self.pos += 1;
            }
            words.retain(|w| w != "const");
            if words.len() < 2 {
                return self.err(format!(
                    "expected a type then a field name, found only `{}`",
                    words.join(" ")
                ));
            }
            // Hand the last word back: it is the declarator.
            self.pos -= 1;
            let alias = words[..words.len() - 1].join(" ");
            self.lookup_alias(&alias)?
        } else {
            self.type_spec()?
        };
        let mut decls = Vec::new();
        if self.eat_punct(';') {
            return Ok((ty, decls));
        }
        loop {
            let name = self.ident()?;
            let mut dims = Vec::new();
            while self.eat_punct('[') {
                dims.push(self.dim()?);
                self.expect_punct(']')?;
            }
            decls.push((name, dims));
            if self.eat_punct(',') {
                continue;
            }
            self.expect_punct(';')?;
            return Ok((ty, decls));
        }
    }

    fn dim(&mut self) -> Result<Dim, MetadataError> {
        match self.peek().cloned() {
            Some(Tok::Int(n)) => {
                self.pos += 1;
                if n > MAX_STATIC_LEN {
                    return self.err(format!(
                        "array length {n} is absurd (limit {MAX_STATIC_LEN})"
                    ));
                }
                Ok(Dim::Static(n))
            }
            Some(Tok::Ident(_)) => Ok(Dim::Dynamic(self.path()?)),
            _ => self.err("expected an array length or a length field name"),
        }
    }

    fn path(&mut self) -> Result<Vec<String>, MetadataError> {
        let mut names = vec![self.ident()?];
        while self.eat_punct('.') {
            names.push(self.ident()?);
        }
        Ok(names)
    }

    fn apply_dims(&self, mut ty: FieldType, dims: Vec<Dim>) -> Result<FieldType, MetadataError> {
        for dim in dims.into_iter().rev() {
            ty = match dim {
                Dim::Static(len) => FieldType::Array {
                    elem: Box::new(ty),
                    len,
                },
                Dim::Dynamic(path) => FieldType::Sequence {
                    elem: Box::new(ty),
                    len: field_path(&path),
                },
            };
        }
        Ok(ty)
    }

    fn lookup_alias(&mut self, name: &str) -> Result<FieldType, MetadataError> {
        match self.aliases.get(name) {
            Some(t) => {
                let t = t.clone();
                self.charge(t.nodes())?;
                Ok(t)
            }
            None => self.err(format!(
                "unknown type `{name}` (no typealias or typedef declares it)"
            )),
        }
    }

    /// Accounts for a copy of `nodes` type nodes, refusing metadata whose copies grow
    /// too large.
    fn charge(&mut self, nodes: u64) -> Result<(), MetadataError> {
        self.copied = self.copied.saturating_add(nodes);
        if self.copied > MAX_COPIED_NODES {
            return self.err(format!(
                "the types expand to more than {MAX_COPIED_NODES} fields; such metadata would exhaust memory"
            ));
        }
        Ok(())
    }

    /// A type with no declarator after it.
    fn type_spec(&mut self) -> Result<FieldType, MetadataError> {
        self.enter()?;
        let result = self.type_spec_inner();
        self.depth -= 1;
        result
    }

    fn type_spec_inner(&mut self) -> Result<FieldType, MetadataError> {
        let word = self.ident()?;
        match word.as_str() {
            "integer" => Ok(FieldType::Int(self.integer()?)),
            "floating_point" => {
                let attrs = self.attr_block()?;
                let mut f = FloatType {
                    exp_dig: 0,
                    mant_dig: 0,
                    align: 8,
                    byte_order: ByteOrder::Native,
                };
                for (key, val) in attrs {
                    match key.as_str() {
                        "exp_dig" => f.exp_dig = self.small_uint(&key, &val)?,
                        "mant_dig" => f.mant_dig = self.small_uint(&key, &val)?,
                        "align" => f.align = self.alignment(&val)?,
                        "byte_order" => f.byte_order = self.byte_order(&val)?,
                        _ => {}
                    }
                }
                if !matches!((f.exp_dig, f.mant_dig), (8, 24) | (11, 53)) {
                    return self.err(format!(
                        "floating point with exp_dig = {}, mant_dig = {}: only 32-bit (8, 24) and 64-bit (11, 53) floats are supported",
                        f.exp_dig, f.mant_dig
                    ));
                }
                Ok(FieldType::Float(f))
            }
            "string" => {
                let mut enc = Encoding::Utf8;
                if self.is_punct('{') {
                    for (key, val) in self.attr_block()? {
                        if key == "encoding" {
                            enc = self.encoding(&val)?;
                        }
                    }
                }
                Ok(FieldType::Str(enc))
            }
            "struct" => self.struct_spec(),
            "enum" => self.enum_spec(),
            "variant" => self.variant_spec(),
            _ => {
                let mut words = vec![word];
                while let Some(Tok::Ident(w)) = self.peek() {
                    words.push(w.clone());
                    self.pos += 1;
                }
                words.retain(|w| w != "const");
                self.lookup_alias(&words.join(" "))
            }
        }
    }

    fn integer(&mut self) -> Result<IntType, MetadataError> {
        let attrs = self.attr_block()?;
        let mut int = IntType {
            size: 0,
            align: 0,
            signed: false,
            byte_order: ByteOrder::Native,
            base: 10,
            encoding: Encoding::None,
            clock: None,
        };
        for (key, val) in attrs {
            match key.as_str() {
                "size" => int.size = self.small_uint(&key, &val)?,
                "align" => int.align = self.alignment(&val)?,
                "signed" => int.signed = self.boolean(&val)?,
                "byte_order" => int.byte_order = self.byte_order(&val)?,
                "base" => int.base = self.base(&val)?,
                "encoding" => int.encoding = self.encoding(&val)?,
                "map" => int.clock = Some(self.clock_map(&val)?),
                _ => {}
            }
        }
        if !(1..=64).contains(&int.size) {
            return self.err(format!("integer size {} bits: must be 1 to 64", int.size));
        }
        if int.align == 0 {
            int.align = if int.size % 8 == 0 { 8 } else { 1 };
        }
        Ok(int)
    }

    fn struct_spec(&mut self) -> Result<FieldType, MetadataError> {
        let name = match self.peek() {
            Some(Tok::Ident(w)) if w != "align" => Some(self.ident()?),
            _ => None,
        };
        if !self.is_punct('{') {
            let Some(name) = name else {
                return self.err("expected a struct name or `{`");
            };
            let st = match self.structs.get(&name) {
                Some(s) => s.clone(),
                None => return self.err(format!("unknown struct `{name}`")),
            };
            self.charge(st.nodes)?;
            return Ok(FieldType::Struct(st.with_min_align(self.struct_align()?)));
        }
        self.pos += 1;
        let fields = self.fields_until_brace()?;
        let min_align = self.struct_align()?;
        let st = StructType::new(fields, min_align);
        if let Some(name) = name {
            self.structs.insert(name, st.clone());
        }
        Ok(FieldType::Struct(st))
    }

    fn struct_align(&mut self) -> Result<u32, MetadataError> {
        if !self.is_ident("align") {
            return Ok(1);
        }
        self.pos += 1;
        self.expect_punct('(')?;
        let Tok::Int(n) = self.next()? else {
            return self.err("expected an alignment in `align(...)`");
        };
        self.expect_punct(')')?;
        self.alignment(&Lit::Int(i128::from(n)))
    }

    /// Field declarations up to and including the closing `}`.
    fn fields_until_brace(&mut self) -> Result<Vec<Field>, MetadataError> {
        let mut fields = Vec::new();
        loop {
            if self.eat_punct('}') {
                return Ok(fields);
            }
            if self.at_end() {
                return self.err("expected `}` before the end of metadata");
            }
            if self.is_ident("typealias") {
                self.typealias()?;
                continue;
            }
            if self.is_ident("typedef") {
                self.typedef()?;
                continue;
            }
            let (ty, decls) = self.declaration()?;
            for (name, dims) in decls {
                self.charge(ty.nodes())?;
                let ty = self.apply_dims(ty.clone(), dims)?;
                fields.push(Field {
                    name: Arc::from(strip_underscore(&name)),
                    ty,
                });
            }
        }
    }

    fn enum_spec(&mut self) -> Result<FieldType, MetadataError> {
        let name = match self.peek() {
            Some(Tok::Ident(_)) => Some(self.ident()?),
            _ => None,
        };
        let container = if self.eat_punct(':') {
            match self.type_spec()? {
                FieldType::Int(i) => Some(i),
                _ => return self.err("an enum's container must be an integer type"),
            }
        } else {
            None
        };
        if !self.is_punct('{') {
            let Some(name) = name else {
                return self.err("expected an enum name or `{`");
            };
            let e = match self.enums.get(&name) {
                Some(e) => FieldType::Enum(e.clone()),
                None => return self.err(format!("unknown enum `{name}`")),
            };
            self.charge(e.nodes())?;
            return Ok(e);
        }
        self.pos += 1;
        let container = match container {
            Some(c) => c,
            None => match self.aliases.get("int") {
                Some(FieldType::Int(i)) => i.clone(),
                _ => return self.err("enum without a container type, and no `int` typealias"),
            },
        };
        let mut mappings = Vec::new();
        let mut next: i128 = 0;
        loop {
            if self.eat_punct('}') {
                break;
            }
            let label = match self.next()? {
                Tok::Ident(s) | Tok::Str(s) => s,
                other => {
                    self.pos -= 1;
                    return self.err(format!(
                        "expected an enum label, found {}",
                        other.describe()
                    ));
                }
            };
            let (lo, hi) = if self.eat_punct('=') {
                let lo = self.signed_int()?;
                let hi = if self.eat_punct('E') {
                    self.signed_int()?
                } else {
                    lo
                };
                (lo, hi)
            } else {
                (next, next)
            };
            if hi < lo {
                return self.err(format!(
                    "enum label `{label}` has an empty range {lo} ... {hi}"
                ));
            }
            next = hi + 1;
            mappings.push(EnumMapping {
                label: Arc::from(label.as_str()),
                lo,
                hi,
            });
            if !self.eat_punct(',') {
                self.expect_punct('}')?;
                break;
            }
        }
        let e = EnumType {
            container,
            mappings,
        };
        if let Some(name) = name {
            self.enums.insert(name, e.clone());
        }
        Ok(FieldType::Enum(e))
    }

    fn variant_spec(&mut self) -> Result<FieldType, MetadataError> {
        let name = match self.peek() {
            Some(Tok::Ident(_)) => Some(self.ident()?),
            _ => None,
        };
        let tag = if self.eat_punct('<') {
            let path = self.path()?;
            self.expect_punct('>')?;
            Some(field_path(&path))
        } else {
            None
        };
        let options = if self.eat_punct('{') {
            let options = self.fields_until_brace()?;
            if let Some(name) = &name {
                self.variants.insert(name.clone(), options.clone());
            }
            options
        } else {
            let Some(name) = &name else {
                return self.err("expected a variant name or `{`");
            };
            match self.variants.get(name) {
                Some(o) => {
                    let o = o.clone();
                    self.charge(o.iter().map(|f| f.ty.nodes()).sum())?;
                    o
                }
                None => return self.err(format!("unknown variant `{name}`")),
            }
        };
        // An untagged variant only makes sense as a named declaration used later with a
        // tag; the tag is checked when a field of this type is decoded.
        let tag = tag.unwrap_or(FieldPath {
            scope: Scope::Relative,
            names: Vec::new(),
        });
        Ok(FieldType::Variant(VariantType::new(tag, options)))
    }

    fn signed_int(&mut self) -> Result<i128, MetadataError> {
        let neg = self.eat_punct('-');
        match self.next()? {
            Tok::Int(v) => Ok(if neg { -i128::from(v) } else { i128::from(v) }),
            other => {
                self.pos -= 1;
                self.err(format!("expected an integer, found {}", other.describe()))
            }
        }
    }

    fn attr_block(&mut self) -> Result<Vec<(String, Lit)>, MetadataError> {
        self.expect_punct('{')?;
        let mut attrs = Vec::new();
        while !self.eat_punct('}') {
            let key = self.path()?.join(".");
            self.expect_punct('=')?;
            let val = self.literal()?;
            self.expect_punct(';')?;
            attrs.push((key, val));
        }
        Ok(attrs)
    }

    fn literal(&mut self) -> Result<Lit, MetadataError> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(Lit::Str(s))
            }
            Some(Tok::Int(_) | Tok::Punct('-') | Tok::Punct('+')) => {
                self.eat_punct('+');
                Ok(Lit::Int(self.signed_int()?))
            }
            Some(Tok::Ident(_)) => Ok(Lit::Path(self.path()?)),
            Some(other) => self.err(format!("expected a value, found {}", other.describe())),
            None => self.err("expected a value, found the end of metadata"),
        }
    }

    /// The entries of a `trace`, `env`, `clock`, `stream` or `event` block up to `}`.
    fn block_body(&mut self) -> Result<Vec<(String, Entry)>, MetadataError> {
        let mut entries = Vec::new();
        while !self.eat_punct('}') {
            if self.is_ident("typealias") {
                self.typealias()?;
                continue;
            }
            if self.is_ident("typedef") {
                self.typedef()?;
                continue;
            }
            let key = self.path()?.join(".");
            if self.eat_punct('A') {
                let ty = self.type_spec()?;
                self.expect_punct(';')?;
                entries.push((key, Entry::Type(ty)));
            } else {
                self.expect_punct('=')?;
                let val = self.literal()?;
                self.expect_punct(';')?;
                entries.push((key, Entry::Value(val)));
            }
        }
        Ok(entries)
    }

    /// Applies the entries of a `kind` block that starts on `line`.
    fn apply_block(
        &mut self,
        kind: &str,
        entries: Vec<(String, Entry)>,
        line: u32,
    ) -> Result<(), MetadataError> {
        match kind {
            "trace" => {
                for (key, e) in entries {
                    match (key.as_str(), e) {
                        ("major", Entry::Value(v)) => self.md.major = self.uint(&key, &v)?,
                        ("minor", Entry::Value(v)) => self.md.minor = self.uint(&key, &v)?,
                        ("uuid", Entry::Value(Lit::Str(s))) => self.md.uuid = Some(s),
                        ("byte_order", Entry::Value(v)) => {
                            let order = self.byte_order(&v)?;
                            if order == ByteOrder::Native {
                                return self.err("the trace's byte_order cannot be `native`");
                            }
                            self.md.byte_order = order;
                        }
                        ("packet.header", Entry::Type(t)) => {
                            self.md.packet_header = Some(t);
                            self.lines.trace = Some(line);
                        }
                        _ => {}
                    }
                }
                if self.md.major != 1 {
                    return self.err(format!(
                        "CTF {}.{} is not supported: this reader reads CTF 1.8",
                        self.md.major, self.md.minor
                    ));
                }
            }
            "env" => {
                for (key, e) in entries {
                    match e {
                        Entry::Value(Lit::Int(v)) => {
                            self.md.env.push((key, EnvValue::Int(v as i64)))
                        }
                        Entry::Value(Lit::Str(s)) => self.md.env.push((key, EnvValue::Str(s))),
                        Entry::Value(Lit::Path(p)) => {
                            self.md.env.push((key, EnvValue::Str(p.join("."))))
                        }
                        Entry::Type(_) => {}
                    }
                }
            }
            "clock" => {
                let mut clock = Clock {
                    freq: 1_000_000_000,
                    absolute: false,
                    ..Clock::default()
                };
                for (key, e) in entries {
                    let Entry::Value(v) = e else { continue };
                    match key.as_str() {
                        "name" => clock.name = lit_text(&v),
                        "description" => clock.description = Some(lit_text(&v)),
                        "uuid" => clock.uuid = Some(lit_text(&v)),
                        "freq" => clock.freq = self.uint(&key, &v)?,
                        "offset_s" => clock.offset_s = self.int(&key, &v)?,
                        "offset" => clock.offset = self.int(&key, &v)?,
                        "absolute" => clock.absolute = self.boolean(&v)?,
                        _ => {}
                    }
                }
                if clock.name.is_empty() {
                    return self.err("a clock block needs a name");
                }
                if clock.freq == 0 {
                    return self.err(format!("clock `{}` has frequency 0", clock.name));
                }
                let idx = self.clock_index(&clock.name);
                self.clocks[idx] = Some(clock);
            }
            "stream" => {
                let mut sc = StreamClass {
                    id: 0,
                    packet_context: None,
                    event_header: None,
                    event_context: None,
                    events: HashMap::new(),
                };
                for (key, e) in entries {
                    match (key.as_str(), e) {
                        ("id", Entry::Value(v)) => sc.id = self.uint(&key, &v)?,
                        ("packet.context", Entry::Type(t)) => sc.packet_context = Some(t),
                        ("event.header", Entry::Type(t)) => sc.event_header = Some(t),
                        ("event.context", Entry::Type(t)) => sc.event_context = Some(t),
                        _ => {}
                    }
                }
                if self.md.stream(sc.id).is_some() {
                    return self.err(format!("stream class {} is declared twice", sc.id));
                }
                if let Some(t) = &mut sc.event_header {
                    self.map_unmapped(t, "timestamp");
                }
                if let Some(t) = &mut sc.packet_context {
                    self.map_unmapped(t, "timestamp_begin");
                    self.map_unmapped(t, "timestamp_end");
                }
                self.lines.streams.insert(sc.id, line);
                self.md.streams.push(sc);
            }
            "event" => {
                let mut ev = EventClass {
                    id: 0,
                    name: Arc::from(""),
                    stream_id: 0,
                    loglevel: None,
                    context: None,
                    payload: None,
                };
                for (key, e) in entries {
                    match (key.as_str(), e) {
                        ("name", Entry::Value(v)) => ev.name = Arc::from(lit_text(&v).as_str()),
                        ("id", Entry::Value(v)) => ev.id = self.uint(&key, &v)?,
                        ("stream_id", Entry::Value(v)) => ev.stream_id = self.uint(&key, &v)?,
                        ("loglevel", Entry::Value(v)) => ev.loglevel = Some(self.int(&key, &v)?),
                        ("context", Entry::Type(t)) => ev.context = Some(t),
                        ("fields", Entry::Type(t)) => ev.payload = Some(t),
                        _ => {}
                    }
                }
                self.events.push((ev, line));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Metadata, MetadataError> {
        let order = match self.md.byte_order {
            ByteOrder::Native => ByteOrder::Little,
            o => o,
        };
        self.md.byte_order = order;
        for (i, c) in self.clocks.into_iter().enumerate() {
            match c {
                Some(c) => self.md.clocks.push(c),
                None => {
                    return Err(MetadataError::new(
                        0,
                        format!(
                            "an integer is mapped to clock `{}`, which is never declared",
                            self.clock_names[i]
                        ),
                    ));
                }
            }
        }
        if self.md.streams.is_empty() && !self.events.is_empty() {
            self.md.streams.push(StreamClass {
                id: 0,
                packet_context: None,
                event_header: None,
                event_context: None,
                events: HashMap::new(),
            });
        }
        if let Some(t) = &mut self.md.packet_header {
            t.resolve_native(order);
        }
        for sc in &mut self.md.streams {
            for t in [
                &mut sc.packet_context,
                &mut sc.event_header,
                &mut sc.event_context,
            ]
            .into_iter()
            .flatten()
            {
                t.resolve_native(order);
            }
        }
        for (mut ev, line) in self.events {
            for t in [&mut ev.context, &mut ev.payload].into_iter().flatten() {
                t.resolve_native(order);
            }
            let Some(sc) = self.md.streams.iter_mut().find(|s| s.id == ev.stream_id) else {
                return Err(MetadataError::new(
                    0,
                    format!(
                        "event `{}` belongs to stream class {}, which is never declared",
                        ev.name, ev.stream_id
                    ),
                ));
            };
            if sc.events.contains_key(&ev.id) {
                return Err(MetadataError::new(
                    0,
                    format!(
                        "stream class {} declares event id {} twice",
                        ev.stream_id, ev.id
                    ),
                ));
            }
            self.lines.events.insert((ev.stream_id, ev.id), line);
            sc.events.insert(ev.id, Arc::new(ev));
        }
        validate::check(&self.md, &self.lines)?;
        Ok(self.md)
    }

    /// Maps every integer or enumeration member named `name` (in structures and
    /// variants, at any depth) that no clock is mapped to, to the trace's clock, as
    /// babeltrace2 does for an event header's `timestamp` and a packet context's
    /// `timestamp_begin` and `timestamp_end`: to the only clock declared so far, or to a
    /// 1 GHz clock `default` with no offset when none is. With several clocks declared
    /// the member stays unmapped (babeltrace2 refuses such metadata).
    fn map_unmapped(&mut self, ty: &mut FieldType, name: &str) {
        let members = match ty {
            FieldType::Struct(st) => &mut st.fields,
            FieldType::Variant(v) => &mut v.options,
            _ => return,
        };
        for f in members {
            if &*f.name == name {
                let int = match &mut f.ty {
                    FieldType::Int(i) => Some(i),
                    FieldType::Enum(e) => Some(&mut e.container),
                    _ => None,
                };
                if let Some(int) = int
                    && int.clock.is_none()
                {
                    int.clock = self.trace_clock();
                }
            }
            self.map_unmapped(&mut f.ty, name);
        }
    }

    /// The clock an unmapped timestamp member is mapped to (see
    /// [`Parser::map_unmapped`]), declaring the implicit `default` clock if needed.
    fn trace_clock(&mut self) -> Option<usize> {
        let declared: Vec<usize> = (0..self.clocks.len())
            .filter(|&i| self.clocks[i].is_some())
            .collect();
        match declared.as_slice() {
            [] => {
                let i = self.clock_index("default");
                self.clocks[i] = Some(Clock {
                    name: "default".to_string(),
                    freq: 1_000_000_000,
                    ..Clock::default()
                });
                Some(i)
            }
            [one] => Some(*one),
            _ => None,
        }
    }

    fn clock_index(&mut self, name: &str) -> usize {
        if let Some(i) = self.clock_names.iter().position(|n| n == name) {
            return i;
        }
        self.clock_names.push(name.to_string());
        self.clocks.push(None);
        self.clock_names.len() - 1
    }

    fn clock_map(&mut self, v: &Lit) -> Result<usize, MetadataError> {
        match v {
            Lit::Path(p) if p.len() == 3 && p[0] == "clock" && p[2] == "value" => {
                Ok(self.clock_index(&p[1].clone()))
            }
            _ => self.err("expected `map = clock.<name>.value`"),
        }
    }

    fn uint(&self, key: &str, v: &Lit) -> Result<u64, MetadataError> {
        match v {
            Lit::Int(i) if *i >= 0 && *i <= i128::from(u64::MAX) => Ok(*i as u64),
            _ => self.err(format!("`{key}` must be a non-negative integer")),
        }
    }

    fn int(&self, key: &str, v: &Lit) -> Result<i64, MetadataError> {
        match v {
            Lit::Int(i) if *i >= i128::from(i64::MIN) && *i <= i128::from(i64::MAX) => {
                Ok(*i as i64)
            }
            _ => self.err(format!("`{key}` must be a 64-bit integer")),
        }
    }

    fn small_uint(&self, key: &str, v: &Lit) -> Result<u32, MetadataError> {
        match v {
            Lit::Int(i) if (0..=1024).contains(i) => Ok(*i as u32),
            _ => self.err(format!("`{key}` must be an integer from 0 to 1024")),
        }
    }

    fn alignment(&self, v: &Lit) -> Result<u32, MetadataError> {
        match v {
            Lit::Int(i) if *i > 0 && *i <= 1 << 16 && (*i as u64).is_power_of_two() => {
                Ok(*i as u32)
            }
            _ => self.err("an alignment must be a power of two from 1 to 65536 bits"),
        }
    }

    fn boolean(&self, v: &Lit) -> Result<bool, MetadataError> {
        match v {
            Lit::Int(i) => Ok(*i != 0),
            Lit::Path(p) if p.len() == 1 => match p[0].to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => self.err(format!("expected true or false, found `{}`", p[0])),
            },
            _ => self.err("expected true or false"),
        }
    }

    fn byte_order(&self, v: &Lit) -> Result<ByteOrder, MetadataError> {
        match lit_text(v).as_str() {
            "le" | "little" => Ok(ByteOrder::Little),
            "be" | "big" | "network" => Ok(ByteOrder::Big),
            "native" => Ok(ByteOrder::Native),
            other => self.err(format!(
                "unknown byte order `{other}` (le, be, network or native)"
            )),
        }
    }

    fn base(&self, v: &Lit) -> Result<u32, MetadataError> {
        let b = match v {
            Lit::Int(i) => *i as u32,
            other => match lit_text(other).as_str() {
                "decimal" | "dec" | "d" | "i" | "u" => 10,
                "hexadecimal" | "hex" | "x" | "X" | "p" => 16,
                "octal" | "oct" | "o" => 8,
                "binary" | "b" => 2,
                t => return self.err(format!("unknown integer base `{t}`")),
            },
        };
        match b {
            2 | 8 | 10 | 16 => Ok(b),
            _ => self.err(format!("integer base {b}: must be 2, 8, 10 or 16")),
        }
    }

    fn encoding(&self, v: &Lit) -> Result<Encoding, MetadataError> {
        match lit_text(v).to_ascii_lowercase().as_str() {
            "none" => Ok(Encoding::None),
            "utf8" | "utf-8" => Ok(Encoding::Utf8),
            "ascii" => Ok(Encoding::Ascii),
            other => self.err(format!("unknown encoding `{other}`")),
        }
    }
}

enum Dim {
    Static(u64),
    Dynamic(Vec<String>),
}

enum Entry {
    Value(Lit),
    Type(FieldType),
}

fn is_type_keyword(w: &str) -> bool {
    matches!(
        w,
        "integer" | "floating_point" | "string" | "struct" | "enum" | "variant"
    )
}

fn lit_text(v: &Lit) -> String {
    match v {
        Lit::Int(i) => i.to_string(),
        Lit::Str(s) => s.clone(),
        Lit::Path(p) => p.join("."),
    }
}

fn field_path(path: &[String]) -> FieldPath {
    let strs: Vec<&str> = path.iter().map(String::as_str).collect();
    let (scope, rest) = match strs.as_slice() {
        ["trace", "packet", "header", rest @ ..] => (Scope::PacketHeader, rest),
        ["stream", "packet", "context", rest @ ..] => (Scope::PacketContext, rest),
        ["stream", "event", "header", rest @ ..] => (Scope::EventHeader, rest),
        ["stream", "event", "context", rest @ ..] => (Scope::StreamEventContext, rest),
        ["event", "context", rest @ ..] => (Scope::EventContext, rest),
        ["event", "fields", rest @ ..] => (Scope::EventPayload, rest),
        rest => (Scope::Relative, rest),
    };
    FieldPath {
        scope,
        names: rest
            .iter()
            .map(|n| Arc::from(strip_underscore(n)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
trace { major = 1; minor = 8; byte_order = be;
  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
env { hostname = "box"; tracer_major = 2; };
clock { name = "monotonic"; freq = 1000; offset_s = 10; offset = 500; };
typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := ts27;
struct hdr { enum : uint8_t { compact = 0 ... 30, "extended" = 31 } id; variant <id> {
  struct { ts27 timestamp; } compact; struct { uint32_t id; } extended; } v; } align(8);
stream { id = 3; event.header := struct hdr; packet.context := struct { unsigned long packet_size; }; };
event { name = "a:b"; id = 7; stream_id = 3; fields := struct {
  uint8_t _len; integer { size = 8; encoding = UTF8; } _text[ _len ]; string _s; uint8_t _m[2][3];
  floating_point { exp_dig = 11; mant_dig = 53; align = 8; } _d; }; };
"#;

    #[test]
    fn parses_a_complete_small_trace() {
        let md = Metadata::parse(SMALL).unwrap();
        assert_eq!(md.byte_order, ByteOrder::Big);
        assert_eq!(md.env_str("hostname"), Some("box"));
        assert_eq!(md.clocks[0].to_ns(250), 10_000_000_000 + 750_000_000);
        let sc = md.stream(3).unwrap();
        let ev = &sc.events[&7];
        assert_eq!(&*ev.name, "a:b");
        let Some(FieldType::Struct(p)) = &ev.payload else {
            panic!("payload")
        };
        let names: Vec<&str> = p.fields.iter().map(|f| &*f.name).collect();
        assert_eq!(names, ["len", "text", "s", "m", "d"]);
        assert!(
            matches!(&p.fields[1].ty, FieldType::Sequence { len, .. } if &*len.names[0] == "len")
        );
        assert!(
            matches!(&p.fields[3].ty, FieldType::Array { len: 2, elem } if matches!(**elem, FieldType::Array { len: 3, .. }))
        );
        let Some(FieldType::Struct(h)) = &sc.event_header else {
            panic!("header")
        };
        assert_eq!(h.min_align, 8);
        let FieldType::Int(i) = &p.fields[0].ty else {
            panic!("int")
        };
        assert_eq!(
            i.byte_order,
            ByteOrder::Big,
            "native resolved to the trace's order"
        );
    }

    #[test]
    fn unmapped_timestamps_take_the_trace_clock_as_babeltrace2_maps_them() {
        // No clock: an implicit 1 GHz `default` clock, as babeltrace2 creates.
        let md = Metadata::parse(
            "/* CTF 1.8 */ typealias integer { size = 32; align = 8; signed = false; } := u32;
            trace { major = 1; minor = 8; byte_order = le; };
            stream { event.header := struct { u32 id; u32 timestamp; }; };
            event { name = e; id = 0; fields := struct { u32 x; }; };",
        )
        .unwrap();
        assert_eq!(md.clocks.len(), 1);
        assert_eq!(
            (md.clocks[0].name.as_str(), md.clocks[0].freq),
            ("default", 1_000_000_000)
        );
        let Some(FieldType::Struct(h)) = &md.streams[0].event_header else {
            panic!("header")
        };
        assert!(matches!(&h.fields[1].ty, FieldType::Int(i) if i.clock == Some(0)));
        // One clock declared: that one, for the packet context's timestamps too.
        let md = Metadata::parse(
            "/* CTF 1.8 */ typealias integer { size = 64; align = 8; signed = false; } := u64;
            trace { major = 1; minor = 8; byte_order = le; };
            clock { name = c; freq = 1000; };
            stream { packet.context := struct { u64 timestamp_begin; u64 timestamp_end; u64 other; }; };",
        )
        .unwrap();
        let Some(FieldType::Struct(c)) = &md.streams[0].packet_context else {
            panic!("context")
        };
        let clocks: Vec<Option<usize>> = c
            .fields
            .iter()
            .map(|f| match &f.ty {
                FieldType::Int(i) => i.clock,
                _ => None,
            })
            .collect();
        assert_eq!(clocks, [Some(0), Some(0), None]);
        assert_eq!(md.clocks.len(), 1);
    }

    #[test]
    fn a_sequence_length_or_variant_tag_of_the_wrong_type_is_a_typed_error() {
        let head = "/* CTF 1.8 */ typealias integer { size = 8; align = 8; signed = false; } := u8;
            typealias integer { size = 8; align = 8; signed = true; } := s8;
            trace { major = 1; minor = 8; byte_order = le; };\n";
        let err = Metadata::parse(&format!(
            "{head}event {{ name = e; fields := struct {{ s8 n; u8 xs[n]; }}; }};"
        ))
        .unwrap_err();
        assert_eq!(
            err.fault,
            crate::read::MetadataFault::SequenceLengthNotUnsigned
        );
        assert_eq!(err.line, Some(4));
        assert!(
            err.message.contains("`n`, which is a signed integer"),
            "{err}"
        );
        let err = Metadata::parse(&format!(
            "{head}event {{ name = e; fields := struct {{ u8 t; variant <t> {{ u8 a; }} v; }}; }};"
        ))
        .unwrap_err();
        assert_eq!(err.fault, crate::read::MetadataFault::VariantTagNotEnum);
        assert!(err.message.contains("variant `v`"), "{err}");
        // A tag in the stream's event header, an enumeration: accepted.
        Metadata::parse(&format!(
            "{head}stream {{ event.header := struct {{ enum : u8 {{ a, b }} k; }}; }};
            event {{ name = e; fields := struct {{ variant <stream.event.header.k> {{ u8 a; u8 b; }} v; }}; }};"
        ))
        .unwrap();
    }

    #[test]
    fn errors_name_the_line() {
        let err = Metadata::parse(
            "/* CTF 1.8 */\ntrace { major = 1; };\nevent { fields := struct { nosuch_t x; }; };",
        )
        .unwrap_err();
        assert_eq!(err.line, Some(3));
        assert!(err.message.contains("nosuch_t"), "{err}");
    }

    #[test]
    fn absurd_sizes_are_refused() {
        let err = Metadata::parse("/* CTF 1.8 */ typealias integer { size = 100000; } := x;")
            .unwrap_err();
        assert!(err.message.contains("size"), "{err}");
        let err = Metadata::parse(
            "/* CTF 1.8 */ typealias integer { size = 8; } := u8; event { fields := struct { u8 a[99999999999]; }; };",
        )
        .unwrap_err();
        assert!(err.message.contains("absurd"), "{err}");
    }

    #[test]
    fn aliases_that_double_at_each_level_are_refused() {
        let mut text = String::from("/* CTF 1.8 */\ntypealias integer { size = 8; } := t0;\n");
        for i in 1..64 {
            text.push_str(&format!(
                "typealias struct {{ t{p} a; t{p} b; }} := t{i};\n",
                p = i - 1
            ));
        }
        let err = Metadata::parse(&text).unwrap_err();
        assert!(err.message.contains("expand"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = format!(
            "/* CTF 1.8 */ typealias {} := x;",
            "struct { ".repeat(10_000)
        );
        let err = Metadata::parse(&text).unwrap_err();
        assert!(err.message.contains("nested"), "{err}");
    }
}
