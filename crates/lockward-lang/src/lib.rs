//! What lockward knows about the languages it reads and writes, in one place: the [`Language`]
//! enum and the file extensions that choose it, the lexical rules of each language ([`Syntax`]),
//! the light [`lexer`] that tells code from comments and strings, and integer-literal parsing as
//! each language writes it. The scan (`lockward-scan`) reads code through it.
#![deny(missing_docs)]

pub mod lang;
pub mod lexer;

pub use lang::{Language, Syntax};
