//! Integration tests: one binary, one module per topic.
