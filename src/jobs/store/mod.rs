//! The durable job store: every run, its state, its whole answer and its events, in one SQLite
//! database (WAL) that several servers and shells share. Every method is synchronous and may
//! block on SQLite: async callers wrap it in `spawn_blocking`.

mod chunks;
pub mod dir;
mod error;
mod feed;
mod id;
mod owners;
mod pages;
mod parked;
mod queries;
mod record;
mod recorder;
mod remote_cancel;
mod schema;
mod trees;
mod writer;

#[cfg(test)]
mod figures;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

pub use dir::StoreSettings;
pub use error::StoreError;
pub use id::{BadJobId, JobId};
pub use queries::now_ms;
pub use record::{
    CancelRequest, JobRecord, JobStatus, ListFilter, NewJob, Origin, Owner, TextPage, TreeSummary,
};
pub use recorder::Recorder;
pub use remote_cancel::{CANCEL_WAIT, RemoteCancel};
pub use trees::{TreeRecord, TreeState};

use schema::MigrateError;
use writer::Writer;

/// Several servers and shells write the same file: wait this long for a lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);
/// The writer's page cache, in KiB: it only appends chunks, whose pages go to the WAL once
/// written; a larger cache would hold a burst's dirty pages in the server's memory instead.
const WRITER_CACHE_KIB: i64 = 256;

/// A handle on the store; clones share one connection and one writer thread.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// This process, as the owner of the jobs it starts.
    owner: Owner,
    /// For everything but the recorders' events.
    conn: Mutex<Connection>,
    writer: Writer,
}

impl Store {
    /// The store where `settings` say, its transcripts capped as they say.
    pub fn open_configured(settings: &StoreSettings) -> Result<Self, StoreError> {
        Self::open_with(&settings.dir()?, settings.transcript_max_bytes()?)
    }

    /// The store in `dir`, with the default transcript cap.
    #[cfg(test)]
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(dir, dir::DEFAULT_TRANSCRIPT_MAX_BYTES)
    }

    /// Opens (or creates) the store in `dir`. A corrupt file is moved aside, never deleted,
    /// and a fresh store takes its place.
    pub fn open_with(dir: &Path, transcript_max_bytes: u64) -> Result<Self, StoreError> {
        dir::create_private(dir)?;
        let path = dir.join(dir::DB_FILE);
        let conn = match connect(&path) {
            Err(Failure::Corrupt(why)) => {
                let aside = move_aside(&path)?;
                tracing::warn!(
                    path = %path.display(), moved_to = %aside.display(), why,
                    "the job store was corrupt: moved it aside and started a fresh one"
                );
                connect(&path)
            }
            other => other,
        }
        .map_err(|failure| failure.into_error(&path))?;
        let writer_conn = configured(&path)
            .and_then(|conn| {
                conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
                Ok(conn)
            })
            .map_err(|error| StoreError::sqlite(&path, error))?;
        let writer = Writer::start(writer_conn, path.clone(), transcript_max_bytes)
            .map_err(|source| StoreError::WriterThread { source })?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                owner: Owner::this_process(),
                conn: Mutex::new(conn),
                writer,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Where isolated runs get their worktrees: beside the database, outside every repository.
    pub fn worktrees_dir(&self) -> PathBuf {
        let state = self.inner.path.parent().unwrap_or(Path::new("."));
        state.join("worktrees")
    }

    /// This process, as recorded for the jobs it inserts.
    pub fn owner(&self) -> Owner {
        self.inner.owner
    }

    /// The recorder for job `id`'s events; recorders of one job share one buffer.
    pub fn recorder(&self, id: &JobId) -> Recorder {
        Recorder::new(self.clone(), self.inner.writer.buffer(id))
    }

    fn writer(&self) -> &Writer {
        &self.inner.writer
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.inner
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The error for job `id`'s JSON that would not write or read.
    fn bad_record<'a>(&'a self, id: &'a JobId) -> impl Fn(serde_json::Error) -> StoreError + 'a {
        move |source| StoreError::BadRecord {
            id: id.to_string(),
            path: self.path().to_owned(),
            source,
        }
    }

    fn fail(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |error| StoreError::sqlite(self.path(), error)
    }
}

/// Why a database could not be opened.
enum Failure {
    /// Damaged or not a database: to be moved aside.
    Corrupt(String),
    Newer(i64),
    Sqlite(rusqlite::Error),
}

impl Failure {
    fn into_error(self, path: &Path) -> StoreError {
        match self {
            Self::Corrupt(why) => StoreError::Corrupt {
                path: path.to_owned(),
                why,
            },
            Self::Newer(found) => StoreError::NewerSchema {
                path: path.to_owned(),
                found,
                known: schema::VERSION,
            },
            Self::Sqlite(error) => StoreError::sqlite(path, error),
        }
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Self {
        if StoreError::is_corruption(&error) {
            Self::Corrupt(error.to_string())
        } else {
            Self::Sqlite(error)
        }
    }
}

/// The main connection: configured, checked and migrated.
fn connect(path: &Path) -> Result<Connection, Failure> {
    let mut conn = configured(path)?;
    check(&conn)?;
    schema::migrate(&mut conn).map_err(|error| match error {
        MigrateError::Newer(found) => Failure::Newer(found),
        MigrateError::Sqlite(error) => error.into(),
    })?;
    Ok(conn)
}

/// Before anything is written: the schema, and the jobs table if there is one. Not the event
/// chunks, which are most of the file (up to the transcript cap per job): every server start
/// would read them all. A damaged chunk fails its own reads.
fn check(conn: &Connection) -> Result<(), Failure> {
    let has_jobs: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'",
        [],
        |row| row.get(0),
    )?;
    let query = if has_jobs {
        "PRAGMA quick_check(jobs)"
    } else {
        "PRAGMA quick_check(1)"
    };
    let check: String = conn.query_row(query, [], |row| row.get(0))?;
    if check != "ok" {
        return Err(Failure::Corrupt(check));
    }
    Ok(())
}

fn configured(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Events go in as chunks of up to 256 KiB: fewer, larger pages hold them with less
    // overhead. Takes effect only on a new file.
    conn.pragma_update(None, "page_size", 16384)?;
    let mode = journal_mode_wal(&conn)?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(path = %path.display(), mode, "the job store could not use WAL");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Events pass through once and jobs are read a page at a time: a small cache keeps a
    // server's memory flat however much a run says.
    conn.pragma_update(None, "cache_size", -1024)?;
    Ok(conn)
}

/// Switches the file to WAL. The switch takes an exclusive lock without the busy handler, so
/// a server and a dashboard opening a fresh store at once would see "database is locked":
/// it is retried here for as long as any other statement would wait.
fn journal_mode_wal(conn: &Connection) -> rusqlite::Result<String> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0)) {
            Err(error)
                if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// Renames the database and its WAL files to `<name>.corrupt-<unix secs>`.
fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let suffix = format!(".corrupt-{}", queries::now_ms() / 1000);
    let renamed = |from: &Path| {
        let mut to = from.as_os_str().to_owned();
        to.push(&suffix);
        PathBuf::from(to)
    };
    for companion in ["-wal", "-shm"] {
        let mut from = path.as_os_str().to_owned();
        from.push(companion);
        let from = PathBuf::from(from);
        if from.exists() {
            std::fs::rename(&from, renamed(&from)).map_err(|source| StoreError::MoveAside {
                path: path.to_owned(),
                source,
            })?;
        }
    }
    let to = renamed(path);
    std::fs::rename(path, &to).map_err(|source| StoreError::MoveAside {
        path: path.to_owned(),
        source,
    })?;
    Ok(to)
}
