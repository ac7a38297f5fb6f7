//! The `.msg` and `.srv` grammar, as rosidl reads it.
//!
//! What this module promises: every line of a definition becomes a field, a constant, the
//! `---` between request and response, or an error naming the file, the line and what was
//! expected there. Nothing is guessed: an unknown type, a malformed bound, a value that does
//! not fit its type is an error, not a field with a surprising type.
//!
//! The grammar, one line at a time (anything after an unquoted `#` is a comment):
//! - `TYPE name` a field, `TYPE name VALUE` a field with a default value;
//! - `TYPE NAME=VALUE` (or `NAME = VALUE`) a constant, of a primitive or string type;
//! - `TYPE` is a primitive (`bool byte char float32 float64 int8 uint8 ... uint64`),
//!   `string`, `string<=N`, `wstring`, `wstring<=N`, or a message `Type` / `pkg/Type`,
//!   followed by nothing, `[N]` (array), `[]` (sequence) or `[<=N]` (bounded sequence);
//! - `---` separates a service's request from its response.

use std::fmt;
use std::path::{Path, PathBuf};

/// A definition that does not parse: where, and what the parser wanted there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    /// What the parser expected, e.g. "a field name (lower case, digits, `_`)".
    pub expected: String,
    /// The text it found instead.
    pub found: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: expected {}, found `{}`",
            self.file.display(),
            self.line,
            self.expected,
            self.found
        )
    }
}

impl std::error::Error for ParseError {}

/// The primitive types of the `.msg` language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    Bool,
    Byte,
    Char,
    Float32,
    Float64,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
}

impl Primitive {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "bool" => Self::Bool,
            "byte" => Self::Byte,
            "char" => Self::Char,
            "float32" => Self::Float32,
            "float64" => Self::Float64,
            "int8" => Self::Int8,
            "uint8" => Self::Uint8,
            "int16" => Self::Int16,
            "uint16" => Self::Uint16,
            "int32" => Self::Int32,
            "uint32" => Self::Uint32,
            "int64" => Self::Int64,
            "uint64" => Self::Uint64,
            _ => return None,
        })
    }

    /// The inclusive range of an integer type (`None` for bool and floats).
    fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Self::Byte | Self::Char | Self::Uint8 => (0, u8::MAX.into()),
            Self::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Self::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Self::Uint16 => (0, u16::MAX.into()),
            Self::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Self::Uint32 => (0, u32::MAX.into()),
            Self::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Self::Uint64 => (0, u64::MAX.into()),
            Self::Bool | Self::Float32 | Self::Float64 => return None,
        })
    }
}

/// The element type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseType {
    Primitive(Primitive),
    /// `string` or `string<=N`.
    String {
        bound: Option<u64>,
    },
    /// `wstring` or `wstring<=N`.
    WString {
        bound: Option<u64>,
    },
    /// Another message; `package` is `None` for a type of the same package.
    Named {
        package: Option<String>,
        name: String,
    },
}

/// How many elements a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Single,
    /// `T[N]`.
    Array(u64),
    /// `T[<=N]`.
    BoundedSequence(u64),
    /// `T[]`.
    Sequence,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldType {
    pub base: BaseType,
    pub container: Container,
}

/// A constant or default value, as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// A default value of an array or sequence field.
    List(Vec<Value>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: FieldType,
    pub default: Option<Value>,
    /// Where it was declared (1-based), for errors found later.
    pub line: usize,
    /// What the `.msg` file says of it (see [`Doc`]).
    pub doc: Doc,
}

/// What a `.msg` file says of a field or constant: the comment lines right above it and
/// the comment after it on its line, and the declaration itself (`int8 STATUS_FIX = 0`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Doc {
    pub comment: Vec<String>,
    pub declaration: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    pub name: String,
    pub ty: BaseType,
    pub value: Value,
    /// What the `.msg` file says of it.
    pub doc: Doc,
}

/// The fields and constants of one message (or of a service's request or response).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageSpec {
    pub fields: Vec<Field>,
    pub constants: Vec<Constant>,
}

/// Parses the text of a `.msg` file.
pub fn parse_message(file: &Path, text: &str) -> Result<MessageSpec, ParseError> {
    let mut parts = parse_sections(file, text)?;
    if parts.len() > 1 {
        let line = parts[1].0;
        return Err(error(
            file,
            line,
            "a field or a constant (`---` only separates a service's request and response)",
            "---",
        ));
    }
    Ok(parts.remove(0).1)
}

/// Parses the text of a `.srv` file into request and response.
pub fn parse_service(file: &Path, text: &str) -> Result<(MessageSpec, MessageSpec), ParseError> {
    let mut parts = parse_sections(file, text)?;
    match parts.len() {
        1 => Err(error(
            file,
            text.lines().count().max(1),
            "a `---` line between the request and the response",
            "the end of the file",
        )),
        2 => {
            let response = parts.pop().expect("two parts").1;
            let request = parts.pop().expect("two parts").1;
            Ok((request, response))
        }
        _ => Err(error(
            file,
            parts[2].0,
            "one `---` in a service (a third section is an action, not a service)",
            "---",
        )),
    }
}

/// Parses the text of a `.action` file into goal, result and feedback.
pub fn parse_action(
    file: &Path,
    text: &str,
) -> Result<(MessageSpec, MessageSpec, MessageSpec), ParseError> {
    let mut parts = parse_sections(file, text)?;
    if parts.len() != 3 {
        let line = parts.get(3).map_or(text.lines().count().max(1), |p| p.0);
        return Err(error(
            file,
            line,
            "three sections (goal, result, feedback) separated by two `---` lines",
            &format!("{} section(s)", parts.len()),
        ));
    }
    let feedback = parts.pop().expect("three parts").1;
    let result = parts.pop().expect("three parts").1;
    let goal = parts.pop().expect("three parts").1;
    Ok((goal, result, feedback))
}

/// The sections between `---` lines, each with the line number of the `---` opening it.
fn parse_sections(file: &Path, text: &str) -> Result<Vec<(usize, MessageSpec)>, ParseError> {
    let mut sections = vec![(0, MessageSpec::default())];
    // Comment lines since the last blank line or declaration: they document the next one.
    let mut above: Vec<String> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = strip_comment(raw).trim();
        let comment = raw[strip_comment(raw).len()..]
            .trim_start_matches('#')
            .trim();
        if content.is_empty() {
            if raw.trim().is_empty() {
                above.clear();
            } else if !comment.is_empty() {
                above.push(comment.to_owned());
            }
            continue;
        }
        if content == "---" {
            above.clear();
            sections.push((line, MessageSpec::default()));
            continue;
        }
        let spec = &mut sections.last_mut().expect("never empty").1;
        let (fields, constants) = (spec.fields.len(), spec.constants.len());
        parse_line(file, line, content, spec)?;
        let mut doc = Doc {
            comment: std::mem::take(&mut above),
            declaration: content.split_whitespace().collect::<Vec<_>>().join(" "),
        };
        if !comment.is_empty() {
            doc.comment.push(comment.to_owned());
        }
        if spec.fields.len() > fields {
            spec.fields.last_mut().expect("just pushed").doc = doc;
        } else if spec.constants.len() > constants {
            spec.constants.last_mut().expect("just pushed").doc = doc;
        }
    }
    Ok(sections)
}

/// The line without its comment; a `#` inside quotes is text.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
}

fn error(file: &Path, line: usize, expected: &str, found: &str) -> ParseError {
    ParseError {
        file: file.to_owned(),
        line,
        expected: expected.to_owned(),
        found: found.to_owned(),
    }
}

fn parse_line(
    file: &Path,
    line: usize,
    content: &str,
    spec: &mut MessageSpec,
) -> Result<(), ParseError> {
    let err = |expected: &str, found: &str| error(file, line, expected, found);
    let (type_text, rest) = content
        .split_once(char::is_whitespace)
        .ok_or_else(|| err("a type followed by a name", content))?;
    let ty = parse_type(type_text).map_err(|expected| err(&expected, type_text))?;
    let rest = rest.trim_start();
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_end);
    let after = after.trim();
    if let Some(value_text) = after.strip_prefix('=') {
        if !is_constant_name(name) {
            return Err(err(
                "a constant name (upper case letters, digits, `_`, starting with a letter)",
                name,
            ));
        }
        if ty.container != Container::Single || matches!(ty.base, BaseType::Named { .. }) {
            return Err(err("a primitive or string type for a constant", type_text));
        }
        let value = parse_value(&ty.base, value_text.trim(), true)
            .map_err(|expected| err(&expected, value_text.trim()))?;
        if spec.constants.iter().any(|c| c.name == name) {
            return Err(err("a constant name not used before", name));
        }
        spec.constants.push(Constant {
            name: name.to_owned(),
            ty: ty.base,
            value,
            doc: Doc::default(),
        });
        return Ok(());
    }
    if !is_field_name(name) {
        return Err(err(
            "a field name (lower case letters, digits, single `_`, starting with a letter)",
            if name.is_empty() { rest } else { name },
        ));
    }
    if spec.fields.iter().any(|f| f.name == name) {
        return Err(err("a field name not used before", name));
    }
    let default = if after.is_empty() {
        None
    } else {
        if matches!(ty.base, BaseType::Named { .. }) {
            return Err(err(
                "nothing after the name (a field of a message type has no default value)",
                after,
            ));
        }
        Some(parse_default(&ty, after).map_err(|expected| err(&expected, after))?)
    };
    spec.fields.push(Field {
        name: name.to_owned(),
        ty,
        default,
        line,
        doc: Doc::default(),
    });
    Ok(())
}

fn is_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

fn is_constant_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

fn is_type_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

fn is_package_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn parse_bound(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("a positive integer bound, not `{text}`"))
}

/// `TYPE` with its optional array suffix; the error is what was expected.
fn parse_type(text: &str) -> Result<FieldType, String> {
    let (base_text, container) = match text.split_once('[') {
        None => (text, Container::Single),
        Some((base, suffix)) => {
            let inner = suffix
                .strip_suffix(']')
                .ok_or("a type ending in `]` after `[`")?;
            let container = if inner.is_empty() {
                Container::Sequence
            } else if let Some(bound) = inner.strip_prefix("<=") {
                Container::BoundedSequence(parse_bound(bound)?)
            } else {
                Container::Array(parse_bound(inner)?)
            };
            (base, container)
        }
    };
    let base = if let Some(p) = Primitive::from_name(base_text) {
        BaseType::Primitive(p)
    } else if base_text == "string" {
        BaseType::String { bound: None }
    } else if base_text == "wstring" {
        BaseType::WString { bound: None }
    } else if let Some(bound) = base_text.strip_prefix("string<=") {
        BaseType::String {
            bound: Some(parse_bound(bound)?),
        }
    } else if let Some(bound) = base_text.strip_prefix("wstring<=") {
        BaseType::WString {
            bound: Some(parse_bound(bound)?),
        }
    } else {
        let (package, name) = match base_text.split_once('/') {
            Some((package, name)) => (Some(package), name),
            None => (None, base_text),
        };
        if package.is_some_and(|p| !is_package_name(p)) || !is_type_name(name) {
            return Err(
                "a type: a primitive (bool, byte, char, float32, float64, int8..uint64), \
                 string, string<=N, wstring, or a message Type / package/Type"
                    .to_owned(),
            );
        }
        BaseType::Named {
            package: package.map(str::to_owned),
            name: name.to_owned(),
        }
    };
    Ok(FieldType { base, container })
}

/// The default value of a field of type `ty`.
fn parse_default(ty: &FieldType, text: &str) -> Result<Value, String> {
    if ty.container == Container::Single {
        return parse_value(&ty.base, text, false);
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or("a list of values in `[` `]` for an array or sequence")?;
    let items = split_list(inner)?;
    let values = items
        .iter()
        .map(|item| parse_value(&ty.base, item, false))
        .collect::<Result<Vec<_>, _>>()?;
    let count = values.len() as u64;
    match ty.container {
        Container::Array(n) if count != n => {
            return Err(format!("exactly {n} values for an array of {n}"));
        }
        Container::BoundedSequence(n) if count > n => {
            return Err(format!("at most {n} values for a sequence bounded to {n}"));
        }
        _ => {}
    }
    Ok(Value::List(values))
}

/// The items of a list, split at commas outside quotes.
fn split_list(text: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in text.chars() {
        match (quote, c) {
            (None, ',') => items.push(std::mem::take(&mut current)),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            _ => current.push(c),
        }
    }
    if quote.is_some() {
        return Err("a closing quote in the list".to_owned());
    }
    if !current.trim().is_empty() || !items.is_empty() {
        items.push(current);
    }
    Ok(items.into_iter().map(|i| i.trim().to_owned()).collect())
}

/// One value of type `base`. A string constant is the rest of the line, quoted or not; a
/// string default must be quoted.
fn parse_value(base: &BaseType, text: &str, constant: bool) -> Result<Value, String> {
    match base {
        BaseType::Primitive(Primitive::Bool) => match text {
            "true" | "True" | "1" => Ok(Value::Bool(true)),
            "false" | "False" | "0" => Ok(Value::Bool(false)),
            _ => Err("a bool value (true or false)".to_owned()),
        },
        BaseType::Primitive(Primitive::Float32 | Primitive::Float64) => text
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| "a floating point number".to_owned()),
        BaseType::Primitive(p) => {
            let (min, max) = p.int_range().expect("integer types have a range");
            let parsed = if let Some(hex) = text.strip_prefix("0x") {
                i128::from_str_radix(hex, 16).ok()
            } else {
                text.parse::<i128>().ok()
            };
            match parsed {
                Some(n) if (min..=max).contains(&n) => Ok(Value::Int(n)),
                Some(_) => Err(format!("an integer from {min} to {max}")),
                None => Err("an integer".to_owned()),
            }
        }
        BaseType::String { bound } | BaseType::WString { bound } => {
            let unquoted = unquote(text);
            let value = match unquoted {
                Some(s) => s,
                None if constant => text.to_owned(),
                None => return Err("a quoted string ('...' or \"...\")".to_owned()),
            };
            if let Some(bound) = bound
                && value.chars().count() as u64 > *bound
            {
                return Err(format!("a string of at most {bound} characters"));
            }
            Ok(Value::Str(value))
        }
        BaseType::Named { .. } => Err("a primitive type for a value".to_owned()),
    }
}

/// The text between matching quotes, with `\\`, `\'` and `\"` unescaped.
fn unquote(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(chars.next()?);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> Result<MessageSpec, ParseError> {
        parse_message(Path::new("pkg/msg/T.msg"), text)
    }

    #[test]
    fn an_action_has_goal_result_and_feedback() {
        let file = Path::new("pkg/action/Fibonacci.action");
        let (goal, result, feedback) = parse_action(
            file,
            "int32 order\n---\nint32[] sequence\n---\nint32[] partial\n",
        )
        .unwrap();
        assert_eq!(goal.fields[0].name, "order");
        assert_eq!(result.fields[0].name, "sequence");
        assert_eq!(feedback.fields[0].name, "partial");
        let two = parse_action(file, "int32 order\n---\nint32[] sequence\n").unwrap_err();
        assert!(
            two.to_string()
                .contains("three sections (goal, result, feedback)"),
            "{two}"
        );
        let four =
            parse_action(file, "int32 a\n---\nint32 b\n---\nint32 c\n---\nint32 d\n").unwrap_err();
        assert!(
            four.to_string().contains(":6"),
            "names the third `---` line: {four}"
        );
    }

    #[test]
    fn comments_above_and_after_a_declaration_document_it() {
        let spec = msg(
            "# A message about the file: no declaration follows at once.\n\
             \n\
             # Row major about x, y, z axes\n\
             #   (indented in the file)\n\
             float64[9] orientation_covariance # [x, y, z] in rad^2\n\
             int8 STATUS_FIX =   0\n\
             string   label   \"a#b\" # a default with a hash\n",
        )
        .unwrap();
        let doc = &spec.fields[0].doc;
        assert_eq!(
            doc.comment,
            [
                "Row major about x, y, z axes",
                "(indented in the file)",
                "[x, y, z] in rad^2"
            ]
        );
        assert_eq!(doc.declaration, "float64[9] orientation_covariance");
        assert!(spec.constants[0].doc.comment.is_empty());
        assert_eq!(spec.constants[0].doc.declaration, "int8 STATUS_FIX = 0");
        assert_eq!(spec.fields[1].doc.comment, ["a default with a hash"]);
        assert_eq!(spec.fields[1].doc.declaration, "string label \"a#b\"");
    }

    #[test]
    fn fields_constants_defaults_arrays_and_bounds() {
        let spec = msg("# comment\n\
             int8 STATUS_NO_FIX =  -1 # trailing\n\
             string NAME=hello # world\n\
             std_msgs/Header header\n\
             float64[9] covariance\n\
             uint8[] data\n\
             Point[<=3] points\n\
             string<=10 label \"a#b\"\n\
             float64 w 1\n\
             int32[] list [1, -2, 3]\n")
        .unwrap();
        assert_eq!(spec.constants.len(), 2);
        assert_eq!(spec.constants[0].value, Value::Int(-1));
        assert_eq!(spec.constants[1].value, Value::Str("hello".into()));
        let types: Vec<_> = spec.fields.iter().map(|f| f.ty.clone()).collect();
        assert_eq!(
            types[0].base,
            BaseType::Named {
                package: Some("std_msgs".into()),
                name: "Header".into()
            }
        );
        assert_eq!(types[1].container, Container::Array(9));
        assert_eq!(types[2].container, Container::Sequence);
        assert_eq!(types[3].container, Container::BoundedSequence(3));
        assert_eq!(types[4].base, BaseType::String { bound: Some(10) });
        assert_eq!(spec.fields[4].default, Some(Value::Str("a#b".into())));
        assert_eq!(spec.fields[5].default, Some(Value::Float(1.0)));
        assert_eq!(
            spec.fields[6].default,
            Some(Value::List(vec![
                Value::Int(1),
                Value::Int(-2),
                Value::Int(3)
            ]))
        );
        assert_eq!(spec.fields[6].line, 10);
    }

    #[test]
    fn services_split_at_the_separator() {
        let (request, response) =
            parse_service(Path::new("s.srv"), "int64 a\nint64 b\n---\nint64 sum\n").unwrap();
        assert_eq!(request.fields.len(), 2);
        assert_eq!(response.fields[0].name, "sum");
        let missing = parse_service(Path::new("s.srv"), "int64 a\n").unwrap_err();
        assert!(missing.expected.contains("---"), "{missing}");
    }

    #[test]
    fn errors_name_file_line_and_what_was_expected() {
        let cases = [
            ("int32 a\nint33 b\n", 2, "a type", "int33"),
            ("int32 Bad\n", 1, "a field name", "Bad"),
            ("uint8 X = 300\n", 1, "an integer from 0 to 255", "300"),
            ("float64[3] v [1, 2]\n", 1, "exactly 3 values", "[1, 2]"),
            (
                "string<=2 s \"abc\"\n",
                1,
                "at most 2 characters",
                "\"abc\"",
            ),
            ("string s abc\n", 1, "a quoted string", "abc"),
            (
                "int32[<=0] v\n",
                1,
                "a positive integer bound",
                "int32[<=0]",
            ),
            ("int32\n", 1, "a type followed by a name", "int32"),
            ("int32 a\n---\nint32 b\n", 2, "a field or a constant", "---"),
            ("int32 a\nint32 a\n", 2, "not used before", "a"),
            ("Point p 3\n", 1, "nothing after the name", "3"),
            ("int32 lower = 3\n", 1, "a constant name", "lower"),
        ];
        for (text, line, expected, found) in cases {
            let e = msg(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.expected.contains(expected), "{text:?}: {e}");
            assert_eq!(e.found, found, "{text:?}: {e}");
            assert_eq!(e.file, Path::new("pkg/msg/T.msg"));
            assert!(
                e.to_string()
                    .starts_with(&format!("pkg/msg/T.msg:{line}: expected ")),
                "{e}"
            );
        }
    }
}
