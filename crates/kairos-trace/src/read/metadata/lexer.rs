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
                // A character constant such as 'a': treated as its integer value.
                let v = *bytes
                    .get(i + 1)
                    .ok_or_else(|| MetadataError::new(line, "unterminated character constant"))?;
                if bytes.get(i + 2) != Some(&b'\'') {
                    return Err(MetadataError::new(line, "malformed character constant"));
                }
                toks.push((Tok::Int(u64::from(v)), line));
                i += 3;
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
    fn unterminated_comment_is_an_error() {
        let err = tokenize("trace {\n /* oops").unwrap_err();
        assert_eq!(err.line, Some(2));
    }
}
