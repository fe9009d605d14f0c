//! The lockward registry: the file that says which advisory lock id belongs to which worker.
//!
//! This crate holds everything about the registry that needs no database, no git and no tree
//! walk: ids as their authors wrote them ([`Id`]), parsing `lockward.toml` with a source position
//! for every value and checking every rule ([`parse`]), the validated [`Registry`] the rest of
//! lockward works with, plugin admission ([`plugin`]), the next free id, the rendered page
//! ([`page`]), the edits `lockward take` and `retire` make ([`edit`]) and the drafts of `lockward init`
//! ([`draft`]).
//!
//! Every problem is reported as a [`Finding`], the one diagnostic shape all of lockward's checks
//! share.
#![deny(missing_docs)]

mod diags;
pub mod draft;
pub mod edit;
pub mod file;
pub mod finding;
pub mod id;
mod json;
mod near_miss;
pub mod page;
mod parse;
pub mod plugin;
mod registry;
mod said;
pub mod share;
pub mod source;
mod toml_text;
pub mod tool_keys;
pub mod well_known;

pub use finding::{Code, Excerpt, Finding, Label, Severity, Span};
pub use id::{AdvisoryKey, Id, KeyShape, Keys, parse_id};
pub use parse::{
    LoadError, Loaded, decode_utf8, is_constant_name, is_identifier, is_member_name, parse,
    recorded_ids,
};
pub use plugin::{AdmissionReport, AdmittedPlugin, Manifest, Verdict};
pub use registry::{
    Block, Core, FindError, Kind, Lock, LockView, PluginSettings, Project, Registry, Reservation,
    ScanSettings, Share, Source, Wrapper,
};
pub use said::Said;
pub use source::{Position, SourceFile};
