//! SQL text as it goes into the build: the schema's migrations are written with comments and aligned
//! columns for the reader, and [`minified!`] gives them to the binary without either — SQL comments
//! (`--` to the end of the line, outside quotes) dropped and every run of whitespace outside quotes
//! made one space, at compile time. Nothing in a quoted literal or identifier changes, and SQL reads
//! the result as the same statements. It keeps about 0.9 KB gzip out of the storage worker's
//! cold start, since the whole schema history is compiled into it.

/// The length of `sql` minified.
pub const fn minified_len(sql: &str) -> usize {
    walk(sql.as_bytes(), &mut [])
}

/// `sql` minified, as `N` (its [`minified_len`]) bytes.
pub const fn minify<const N: usize>(sql: &str) -> [u8; N] {
    let mut out = [0u8; N];
    walk(sql.as_bytes(), &mut out);
    out
}

/// Writes `sql` minified into `out` as far as it has room, and returns the minified length.
const fn walk(sql: &[u8], out: &mut [u8]) -> usize {
    let (mut i, mut n) = (0, 0);
    let mut quote = 0u8; // the quote character of the literal or identifier being read, if any
    let mut space = false; // whitespace (or a comment) since the last byte written
    while i < sql.len() {
        let c = sql[i];
        if quote == 0 {
            if c == b'-' && i + 1 < sql.len() && sql[i + 1] == b'-' {
                while i < sql.len() && sql[i] != b'\n' {
                    i += 1;
                }
                space = true;
                continue;
            }
            if c.is_ascii_whitespace() {
                space = true;
                i += 1;
                continue;
            }
            if space && n > 0 {
                n = put(out, n, b' ');
            }
            space = false;
            if c == b'\'' || c == b'"' {
                quote = c;
            }
        } else if c == quote {
            quote = 0; // a doubled quote closes and opens again: the same bytes either way
        }
        n = put(out, n, c);
        i += 1;
    }
    n
}

const fn put(out: &mut [u8], n: usize, c: u8) -> usize {
    if n < out.len() {
        out[n] = c;
    }
    n + 1
}

/// A `&'static str` constant: the SQL constant given, minified at compile time.
macro_rules! minified {
    ($sql:expr) => {{
        // All of it a constant, so that nothing of it is left to run.
        const MINIFIED: &str = {
            const N: usize = $crate::store::sql_text::minified_len($sql);
            const OUT: [u8; N] = $crate::store::sql_text::minify::<N>($sql);
            match core::str::from_utf8(&OUT) {
                Ok(s) => s,
                Err(_) => panic!("minifying SQL cut a character"),
            }
        };
        MINIFIED
    }};
}
pub(crate) use minified;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_runs_of_whitespace_go_and_quoted_text_stays() {
        const SQL: &str = "
CREATE TABLE t (
    a   TEXT NOT NULL DEFAULT '  two  spaces -- not a comment',  -- a comment's quote
    \"odd  name\" INTEGER -- another
);
-- a line of its own
INSERT INTO t (a) VALUES ('it''s --  kept');";
        const OUT: &str = minified!(SQL);
        assert_eq!(
            OUT,
            "CREATE TABLE t ( a TEXT NOT NULL DEFAULT '  two  spaces -- not a comment', \"odd  name\" INTEGER ); \
             INSERT INTO t (a) VALUES ('it''s --  kept');"
        );
        assert_eq!(minified_len(SQL), OUT.len());
        assert_eq!(minified!(""), "");
        assert_eq!(minified!("-- only a comment"), "");
    }

    /// `sql` minified, at run time.
    fn minify_now(sql: &str) -> String {
        let mut out = vec![0; minified_len(sql)];
        walk(sql.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Each object's text as SQLite keeps it (ALTERs edit it in place), minified: the same schema
    /// whether the migrations ran as written or minified.
    #[test]
    fn every_migration_gives_the_schema_its_text_as_written_gives() {
        let schema = |migrations: &[&str]| {
            let conn = rusqlite::Connection::open_in_memory().unwrap();
            for sql in migrations {
                conn.execute_batch(sql).unwrap();
            }
            let mut stmt = conn
                .prepare("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
                .unwrap();
            let objects = stmt
                .query_map([], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
                })
                .unwrap()
                .map(|row| row.map(|(kind, name, table, sql)| (kind, name, table, minify_now(&sql))))
                .collect::<rusqlite::Result<Vec<_>>>()
                .unwrap();
            objects
        };
        let as_written = schema(super::super::schema::WRITTEN);
        assert!(as_written.len() > 30, "{} objects", as_written.len());
        assert_eq!(schema(super::super::schema::MIGRATIONS), as_written);
    }
}
