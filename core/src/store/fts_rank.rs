//! `bm25_one(turns_fts, w…)`: FTS5's `bm25()` for an expression of one phrase, without the pass over
//! the whole index that `bm25()` makes for the phrase's document frequency.
//!
//! `bm25()` scores a row as Σ over the expression's phrases of IDF(phrase) × a factor of the row (the
//! phrase's weighted hits in it and its length). It computes each phrase's IDF once per query, by
//! counting every row the phrase matches in the whole table: for a phrase of two common words in a
//! 100k-turn archive that is most of a search's time (8–11 ms natively for "refresh token", against
//! 0.3 ms for reading the newest 400 matches it then ranks). With one phrase the IDF is one positive
//! number that multiplies every row's score alike, so the order of the rows is the row factor's order:
//! this function returns `-factor` (the same sign as `bm25()`: lower is better) and skips the count.
//! With more than one phrase the IDFs weigh them differently, so it returns NULL and the caller falls
//! back to `bm25()` (`coalesce(bm25_one(…), bm25(…))`, which SQLite evaluates lazily).
//!
//! The row factor is `bm25()`'s own (SQLite's `fts5_aux.c`): k1 = 1.2, b = 0.75, the phrase's hits
//! weighted per column by the arguments after the table (1.0 for a column without one), the row's
//! length in tokens over the table's average.

use crate::error::{Error, Result};
#[cfg(not(target_arch = "wasm32"))]
use rusqlite::ffi;
use rusqlite::Connection;
#[cfg(target_arch = "wasm32")]
use sqlite_wasm_rs as ffi;
use std::ffi::c_int;
use std::ptr::null_mut;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Registers `bm25_one` with the connection's FTS5.
pub(super) fn register(conn: &Connection) -> Result<()> {
    let failed = |what: &str| Error::Storage(format!("registering the search ranking ({what})"));
    // SAFETY: `handle` is the connection's own open database handle, used on this thread only while
    // `conn` is borrowed. FTS5 hands its API out through a pointer bound to `SELECT fts5(?1)`, which
    // writes the API's address into `api` during the step; the statement is finalised before
    // returning. The API lives as long as the database handle, which outlives every use of the
    // function (FTS5 calls it only inside statements of this connection).
    unsafe {
        let db = conn.handle();
        let mut api: *mut ffi::fts5_api = null_mut();
        let mut stmt: *mut ffi::sqlite3_stmt = null_mut();
        if ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, null_mut()) != ffi::SQLITE_OK {
            return Err(failed("no FTS5"));
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        let create = api.as_ref().and_then(|a| a.xCreateFunction).ok_or_else(|| failed("no FTS5 API"))?;
        if create(api, c"bm25_one".as_ptr(), null_mut(), Some(bm25_one), None) != ffi::SQLITE_OK {
            return Err(failed("refused"));
        }
    }
    Ok(())
}

/// The function itself (see the module's doc).
unsafe extern "C" fn bm25_one(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API, the current row's context, the SQL function context and
    // `n_val` argument values, all valid for the duration of the call.
    unsafe {
        let Some(api) = api.as_ref() else { return ffi::sqlite3_result_null(ctx) };
        match row_factor(api, fts, n_val, args) {
            Ok(Some(factor)) => ffi::sqlite3_result_double(ctx, -factor),
            Ok(None) => ffi::sqlite3_result_null(ctx),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// The row factor of the expression's one phrase; `None` when it has another number of phrases.
unsafe fn row_factor(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    args: *mut *mut ffi::sqlite3_value,
) -> std::result::Result<Option<f64>, c_int> {
    let check = |rc: c_int| if rc == ffi::SQLITE_OK { Ok(()) } else { Err(rc) };
    let (Some(phrases), Some(inst_count), Some(inst), Some(column_size), Some(rows), Some(total)) =
        (api.xPhraseCount, api.xInstCount, api.xInst, api.xColumnSize, api.xRowCount, api.xColumnTotalSize)
    else {
        return Err(ffi::SQLITE_MISUSE);
    };
    // SAFETY: as for `bm25_one`; `args` holds `n_val` values.
    unsafe {
        if phrases(fts) != 1 {
            return Ok(None);
        }
        let mut n_inst: c_int = 0;
        check(inst_count(fts, &mut n_inst))?;
        let mut freq = 0.0;
        for i in 0..n_inst {
            let (mut phrase, mut col, mut off) = (0, 0, 0);
            check(inst(fts, i, &mut phrase, &mut col, &mut off))?;
            freq += if col < n_val { ffi::sqlite3_value_double(*args.add(col as usize)) } else { 1.0 };
        }
        let (mut n_tok, mut n_row, mut n_all): (c_int, ffi::sqlite3_int64, ffi::sqlite3_int64) = (0, 0, 0);
        check(column_size(fts, -1, &mut n_tok))?;
        check(rows(fts, &mut n_row))?;
        check(total(fts, -1, &mut n_all))?;
        let avgdl = if n_row > 0 && n_all > 0 { n_all as f64 / n_row as f64 } else { 1.0 };
        Ok(Some(freq * (K1 + 1.0) / (freq + K1 * (1.0 - B + B * f64::from(n_tok) / avgdl))))
    }
}
