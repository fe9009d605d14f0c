//! What a command concluded, and the error that is bad usage: the two sources of the exit
//! status.

/// What a command concluded, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing at error level.
    Clean,
    /// At least one finding at error level.
    Findings,
    /// The input could not be read (a file that is not UTF-8, say); reported, then exit 2.
    Unreadable,
    /// `lockward run`'s command is not there (reported): exit 127, as shells say.
    CommandNotFound,
}

/// Bad usage or unreadable input: exit 2 after printing the message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub(crate) String);
