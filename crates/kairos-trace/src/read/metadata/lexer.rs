//! Tokens of TSDL, the CTF 1.8 metadata language: identifiers, integer and string
//! literals and punctuation, each with the line it starts on for error messages.

use super::MetadataError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    /// An integer literal; a leading minus sign is its own token.
    Int(u64),
    Str(String),
    /// One of `{ } ( ) [ ] ; , = : < > . + -`, or `:=` / `...` spelled as `A` / `E`.
    Punct(char),
}

impl Tok {
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct('A') => "`:=`".to_string(),
            Tok::Punct('E') => "`...`".to_string(),
            Tok::Punct(c) => format!("`{c}`"),
        }
    }
}

/// Splits TSDL text into tokens. Comments (`/* */`, `//`) are skipped.
pub(crate) fn tokenize(text: &str) -> Result<Vec<(Tok, u32)>, MetadataError> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_ascii_whitespace() || c == 0 => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = line;
                i += 2;
                loop {
                    match bytes.get(i) {
                        None => return Err(MetadataError::new(start, "unterminated /* comment")),
                        Some(b'*') if bytes.get(i + 1) == Some(&b'/') => {
                            i += 2;
                            break;
                        }
                        Some(b'\n') => {
                            line += 1;
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let start = line;
                i += 1;
                let mut s = Vec::new();
                loop {
                    match bytes.get(i) {
                        None => {
                            return Err(MetadataError::new(start, "unterminated string literal"));
                        }
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => {
                            let esc = bytes.get(i + 1).copied().ok_or_else(|| {
                                MetadataError::new(start, "unterminated string literal")
                            })?;
                            s.push(match esc {
                                b'n' => b'\n',
                                b't' => b'\t',
                                b'r' => b'\r',
                                b'0' => 0,
                                other => other,
                            });
                            i += 2;
                        }
                        Some(&b) => {
                            if b == b'\n' {
                                line += 1;
                            }
                            s.push(b);
                            i += 1;
                        }
                    }
                }
                toks.push((Tok::Str(String::from_utf8_lossy(&s).into_owned()), start));
            }
            b'\'' => {
                let (value, len) = char_constant(&bytes[i..], line)?;
                toks.push((Tok::Int(value), line));
                i += len;
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                let lit = &text[start..i];
                toks.push((Tok::Int(parse_int(lit, line)?), line));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                toks.push((Tok::Ident(text[start..i].to_string()), line));
            }
            b':' if bytes.get(i + 1) == Some(&b'=') => {
                toks.push((Tok::Punct('A'), line));
                i += 2;
            }
            b'.' if bytes.get(i + 1) == Some(&b'.') && bytes.get(i + 2) == Some(&b'.') => {
                toks.push((Tok::Punct('E'), line));
                i += 3;
            }
            b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b',' | b'=' | b':' | b'<' | b'>'
            | b'.' | b'+' | b'-' | b'*' => {
                toks.push((Tok::Punct(c as char), line));
                i += 1;
            }
            other => {
                return Err(MetadataError::new(
                    line,
                    format!("unexpected character {:?}", other as char),
                ));
            }
        }
    }
    Ok(toks)
}

/// A C character constant at the start of `rest` (which begins with `'`), as TSDL
/// allows them wherever an integer goes: its value and how many bytes it takes. One
/// character (`'a'`, or a UTF-8 character as its code point) or one escape: `\n`, `\t`,
/// `\r`, `\0`, `\a`, `\b`, `\f`, `\v`, `\e`, `\\`, `\'`, `\"`, `\?`, up to three octal
/// digits (`\101`) or hexadecimal digits (`\x41`).
fn char_constant(rest: &[u8], line: u32) -> Result<(u64, usize), MetadataError> {
    let malformed = || {
        let shown: String = String::from_utf8_lossy(&rest[..rest.len().min(8)])
            .chars()
            .take_while(|&c| c != '\n')
            .collect();
        MetadataError::new(
            line,
            format!(
                "malformed character constant `{shown}`: expected one character or one escape between single quotes, such as 'a' or '\\n'"
            ),
        )
    };
    let body = rest.get(1..).ok_or_else(malformed)?;
    let (value, used) = match *body {
        [b'\\', b'x', ref hex @ ..] => {
            let digits = hex.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if digits == 0 {
                return Err(malformed());
            }
            let text = std::str::from_utf8(&hex[..digits]).map_err(|_| malformed())?;
            let v = u64::from_str_radix(text, 16).map_err(|_| malformed())?;
            (v, 2 + digits)
        }
        [b'\\', d, ..] if (b'0'..=b'7').contains(&d) => {
            let digits = body[1..]
                .iter()
                .take(3)
                .take_while(|b| (b'0'..=b'7').contains(b))
                .count();
            let v = body[1..1 + digits]
                .iter()
                .fold(0u64, |v, b| v * 8 + u64::from(b - b'0'));
            (v, 1 + digits)
        }
        [b'\\', esc, ..] => {
            let v = match esc {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'a' => 0x07,
                b'b' => 0x08,
                b'f' => 0x0c,
                b'v' => 0x0b,
                b'e' => 0x1b,
                b'\\' | b'\'' | b'"' | b'?' => esc,
                _ => return Err(malformed()),
            };
            (u64::from(v), 2)
        }
        [b'\'', ..] | [b'\n', ..] | [] => return Err(malformed()),
        _ => {
            // One character, possibly several UTF-8 bytes: its code point.
            let n = match body[0] {
                b if b < 0x80 => 1,
                b if b >= 0xF0 => 4,
                b if b >= 0xE0 => 3,
                _ => 2,
            };
            let c = body
                .get(..n)
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(|s| s.chars().next())
                .ok_or_else(malformed)?;
            (u64::from(u32::from(c)), n)
        }
    };
    if body.get(used) != Some(&b'\'') {
        return Err(malformed());
    }
    Ok((value, 1 + used + 1))
}

fn parse_int(lit: &str, line: u32) -> Result<u64, MetadataError> {
    let trimmed = lit.trim_end_matches(['u', 'U', 'l', 'L']);
    let parsed = if let Some(hex) = trimmed.strip_prefix("0x").or(trimmed.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16)
    } else if trimmed.len() > 1 && trimmed.starts_with('0') {
        u64::from_str_radix(&trimmed[1..], 8)
    } else {
        trimmed.parse()
    };
    parsed.map_err(|_| MetadataError::new(line, format!("invalid integer literal `{lit}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_a_declaration() {
        let toks: Vec<Tok> =
            tokenize("typealias integer { size = 0x1b; } := uint27_t; /* c */ e = 1 ... 3;")
                .unwrap()
                .into_iter()
                .map(|(t, _)| t)
                .collect();
        assert_eq!(toks[0], Tok::Ident("typealias".into()));
        assert_eq!(toks[5], Tok::Int(27));
        assert_eq!(toks[8], Tok::Punct('A'));
        assert!(toks.contains(&Tok::Punct('E')));
    }

    #[test]
    fn character_constants_are_integers() {
        let toks: Vec<Tok> =
            tokenize(r"a = '\n'; b = 'a'; c = '\''; d = '\x41'; e = '\101'; f = '\\'; g = 'é';")
                .unwrap()
                .into_iter()
                .filter_map(|(t, _)| match t {
                    Tok::Int(v) => Some(Tok::Int(v)),
                    _ => None,
                })
                .collect();
        let want: Vec<Tok> = [10, 97, 39, 65, 65, 92, 0xE9].map(Tok::Int).to_vec();
        assert_eq!(toks, want);
        for bad in ["x = '';", "x = 'ab';", "x = '\\q';", "x = 'a", "x = '\\x';"] {
            let err = tokenize(bad).unwrap_err();
            assert!(err.message.contains("character constant"), "{bad}: {err}");
        }
    }

    #[test]
    fn unterminated_comment_is_an_error() {
        let err = tokenize("trace {\n /* oops").unwrap_err();
        assert_eq!(err.line, Some(2));
    }
}
