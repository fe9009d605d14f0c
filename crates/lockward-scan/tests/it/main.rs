//! The scan's integration tests: the labelled corpus, planted faults on a fixture project, and
//! arbitrary bytes.

mod corpus;
mod defined;
mod faults;
mod fuzz;
mod patterns;
mod support;
mod wrappers;
