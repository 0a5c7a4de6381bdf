//! Tests of the provider wire formats, by topic: decoding recorded streams, building requests, and
//! classifying failures.

mod attachments;
mod decode;
mod families;
mod http;
mod models;
mod request;
