//! htslib's `--input-fmt-option filter=EXPR`: records the expression rejects are never read, so
//! `flagstat`, `head` and `idxstats` count and show only the others. The expression is
//! [`crate::ops::view::expr`], the one `view -e` uses.

use crate::ops::view::expr::Expr;
use crate::record::{Header, RecordRef};

const GENERIC: &str = "Couldn't process filter expression";

pub struct InputFilter {
    /// A syntax error is held: htslib reports it at the first record, so an input without
    /// records passes.
    expr: Result<Expr, String>,
}

impl InputFilter {
    /// The filter for `filter=TEXT` (an empty one fails at the first record, as in htslib).
    pub fn new(text: Option<&str>) -> Option<InputFilter> {
        text.map(|t| InputFilter { expr: Expr::parse(t) })
    }

    /// Whether `record` is read. The error is htslib's lines before the command's own.
    pub fn keeps(&self, record: &RecordRef<'_>, header: &Header) -> Result<bool, String> {
        let expr = self.expr.as_ref().map_err(|e| lines(e))?;
        expr.eval(record, header).map_err(|e| lines(&e))
    }
}

/// What htslib prints when a filter fails: any detail, then `sam_passes_filter`'s line.
fn lines(message: &str) -> String {
    let detail = if message == GENERIC { String::new() } else { format!("{message}\n") };
    format!("{detail}[E::sam_passes_filter] {GENERIC}")
}

/// Whether `record` passes an optional filter.
pub fn passes(
    filter: Option<&InputFilter>,
    record: &RecordRef<'_>,
    header: &Header,
) -> Result<bool, String> {
    filter.map_or(Ok(true), |f| f.keeps(record, header))
}
