//! The current schema. Rows are never deleted: terminal rows are the audit trail.

/// The schema this build writes. `PRAGMA user_version` holds it, written last.
/// v1: sessions, turns, approvals, settings, audit. v2: plan checkpoints, identities, publication.
/// v3: each turn pins the policy it started with (mode, permission mode, preset).
/// v4: sessions record whether the client keeps its own session (persisted or ephemeral), and a
/// captured entry is unique per session whatever its fingerprint. v5: who answered each
/// approval. v6: every time a person was shown a checkpoint. v7: the agent each session serves.
/// v8: how far the audit log has read the decision journal. v9: when a session ended (a cleared
/// conversation leaves the lists).
pub const CURRENT_VERSION: u32 = 9;

/// DDL of schema v1 (tests build v1 databases from it to prove the v1 → v2 migration).
pub const SCHEMA_V1: &str = r#"
CREATE TABLE settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
    id              TEXT PRIMARY KEY NOT NULL,
    external_id     TEXT UNIQUE,
    workspace_root  TEXT NOT NULL,
    interactivity   TEXT NOT NULL CHECK (interactivity IN ('interactive', 'unattended')),
    mode            TEXT NOT NULL CHECK (mode IN ('agent', 'plan')),
    plan_state      TEXT NOT NULL
                    CHECK (plan_state IN ('planning', 'awaiting_approval', 'inactive', 'stopped')),
    permission_mode TEXT NOT NULL CHECK (permission_mode IN ('inherit', 'ask', 'accept-edits', 'auto')),
    shell_id        TEXT,
    provider        TEXT,
    model           TEXT,
    policy_preset   TEXT CHECK (policy_preset IN ('host', 'strict', 'explore')),
    event_seq       INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE turns (
    id            TEXT PRIMARY KEY NOT NULL,
    session_id    TEXT NOT NULL REFERENCES sessions(id),
    origin        TEXT NOT NULL CHECK (origin IN ('user', 'scheduled', 'execution')),
    state         TEXT NOT NULL CHECK (state IN ('running', 'completed', 'aborted')),
    execution_id  TEXT,
    shell_id      TEXT,
    shell_dialect TEXT,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER
) STRICT;
-- One active turn per session (seed 000 §4), enforced by the database as well as the domain.
CREATE UNIQUE INDEX turns_one_running ON turns(session_id) WHERE state = 'running';
CREATE INDEX turns_by_session ON turns(session_id, started_at);

CREATE TABLE plan_approvals (
    request_id             TEXT PRIMARY KEY NOT NULL,
    session_id             TEXT NOT NULL REFERENCES sessions(id),
    turn_id                TEXT NOT NULL REFERENCES turns(id),
    tool_call_id           TEXT NOT NULL,
    plan_json              TEXT NOT NULL,
    title                  TEXT NOT NULL,
    question               TEXT NOT NULL,
    status                 TEXT NOT NULL
                           CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'interrupted')),
    action                 TEXT CHECK (action IN ('approve', 'reject')),
    target_permission_mode TEXT CHECK (target_permission_mode IN ('ask', 'accept-edits', 'auto')),
    feedback               TEXT,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL,
    expires_at             INTEGER NOT NULL,
    resolved_at            INTEGER,
    error_code             TEXT,
    version                INTEGER NOT NULL,
    artifact_relative_path TEXT NOT NULL,
    artifact_sha256        TEXT NOT NULL,
    artifact_size_bytes    INTEGER NOT NULL,
    execution_id           TEXT UNIQUE,
    execution_state        TEXT
                           CHECK (execution_state IN ('queued', 'running', 'completed', 'interrupted')),
    execution_turn_id      TEXT,
    CHECK ((execution_id IS NULL) = (execution_state IS NULL)),
    CHECK (execution_id IS NULL OR status = 'approved'),
    CHECK (status <> 'rejected' OR target_permission_mode IS NULL)
) STRICT;
-- At most one pending approval and one queued or running execution per session (seed 000 §4).
CREATE UNIQUE INDEX approvals_one_pending ON plan_approvals(session_id) WHERE status = 'pending';
CREATE UNIQUE INDEX approvals_one_live_execution ON plan_approvals(session_id)
    WHERE execution_state IN ('queued', 'running');
CREATE INDEX approvals_by_session ON plan_approvals(session_id, created_at);
CREATE INDEX approvals_pending_deadline ON plan_approvals(expires_at) WHERE status = 'pending';

CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    session_id   TEXT,
    turn_id      TEXT,
    tool_call_id TEXT,
    proposal_id  TEXT,
    action       TEXT NOT NULL,
    detail       TEXT NOT NULL
) STRICT;
CREATE INDEX audit_by_session ON audit_log(session_id, id);
"#;

/// v1 → v2: plan checkpoints (content-addressed blobs, branch anchors, capture identity), the
/// per-session plan identity (publication, handoff phase, tool baseline) and publication
/// approvals. Additive only: no v1 row changes.
pub(crate) const SCHEMA_V2: &str = r#"
CREATE TABLE plan_blobs (
    sha256      TEXT PRIMARY KEY NOT NULL,
    size_bytes  INTEGER NOT NULL,
    encoding    TEXT NOT NULL CHECK (encoding IN ('raw', 'deflate', 'delta')),
    base_sha256 TEXT REFERENCES plan_blobs(sha256),
    depth       INTEGER NOT NULL,
    data        BLOB NOT NULL,
    CHECK ((encoding = 'delta') = (base_sha256 IS NOT NULL))
) STRICT;

CREATE TABLE plan_identities (
    session_id          TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id),
    plan_id             TEXT NOT NULL UNIQUE,
    phase               TEXT NOT NULL CHECK (phase IN ('off', 'planning', 'ready', 'handoff_pending')),
    published_path      TEXT,
    published_sha256    TEXT,
    published_revision  INTEGER,
    session_name        TEXT,
    tool_baseline       TEXT,
    tool_applied        TEXT,
    tool_conflict       INTEGER NOT NULL DEFAULT 0,
    handoff_checkpoint  INTEGER,
    handoff_token       TEXT,
    handoff_restarted   INTEGER NOT NULL DEFAULT 0,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
) STRICT;

CREATE TABLE plan_checkpoints (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id          TEXT NOT NULL REFERENCES sessions(id),
    revision            INTEGER NOT NULL CHECK (revision >= 1),
    anchor              TEXT NOT NULL,
    sha256              TEXT NOT NULL REFERENCES plan_blobs(sha256),
    size_bytes          INTEGER NOT NULL,
    source              TEXT NOT NULL CHECK (source IN ('draft', 'capture', 'submit')),
    capture_entry_id    TEXT,
    capture_fingerprint TEXT,
    capture_block       INTEGER,
    capture_start       INTEGER,
    capture_end         INTEGER,
    created_at          INTEGER NOT NULL
) STRICT;
-- The same captured block offered again never creates another revision (seed 004).
CREATE UNIQUE INDEX checkpoints_capture_identity
    ON plan_checkpoints(session_id, capture_entry_id, capture_fingerprint, capture_block)
    WHERE capture_entry_id IS NOT NULL;
CREATE INDEX checkpoints_by_anchor ON plan_checkpoints(session_id, anchor);

CREATE TABLE publication_approvals (
    id            TEXT PRIMARY KEY NOT NULL,
    session_id    TEXT NOT NULL REFERENCES sessions(id),
    checkpoint_id INTEGER NOT NULL REFERENCES plan_checkpoints(id),
    revision      INTEGER NOT NULL,
    sha256        TEXT NOT NULL,
    relative_path TEXT NOT NULL,
    base_sha256   TEXT,
    status        TEXT NOT NULL CHECK (status IN
                  ('pending', 'approved', 'completed', 'rejected', 'revoked', 'conflict', 'failed', 'interrupted')),
    error_code    TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;
-- At most one publication awaiting approval or being written per session.
CREATE UNIQUE INDEX publication_one_open ON publication_approvals(session_id)
    WHERE status IN ('pending', 'approved');
"#;

/// v2 → v3: the policy a turn starts with is pinned on its row, like its shell (seed 000 §4:
/// permission configuration changes only while idle, so a host-default change must not reach a
/// running turn). Older, terminal turns keep NULLs.
pub(crate) const SCHEMA_V3: &str = r#"
ALTER TABLE turns ADD COLUMN policy_mode TEXT CHECK (policy_mode IN ('agent', 'plan'));
ALTER TABLE turns ADD COLUMN policy_permission TEXT
    CHECK (policy_permission IN ('ask', 'accept-edits', 'auto'));
ALTER TABLE turns ADD COLUMN policy_preset TEXT CHECK (policy_preset IN ('host', 'strict', 'explore'));
"#;

/// v4 → v5: who answered each approval (the client and its connection's roles), on the row as
/// well as in the audit log (protocol v2 roles).
pub(crate) const SCHEMA_V5: &str = r#"
ALTER TABLE plan_approvals ADD COLUMN resolved_by TEXT;
ALTER TABLE publication_approvals ADD COLUMN resolved_by TEXT;
"#;

/// v5 → v6: every time a person was shown a checkpoint, and by which client
/// (`checkpoints.seen`), so a later plan can be diffed against what the person saw last before
/// it arrived. Append-only: showing one again later never changes what an older plan measures.
pub(crate) const SCHEMA_V6: &str = r#"
CREATE TABLE plan_checkpoint_views (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    checkpoint_id INTEGER NOT NULL REFERENCES plan_checkpoints(id),
    session_id    TEXT NOT NULL REFERENCES sessions(id),
    seen_at       INTEGER NOT NULL,
    seen_by       TEXT NOT NULL
) STRICT;
CREATE INDEX checkpoint_views_by_session ON plan_checkpoint_views(session_id, seen_at);
CREATE INDEX checkpoint_views_by_checkpoint ON plan_checkpoint_views(checkpoint_id);
"#;

/// v3 → v4: whether the client's own session is persisted (seed 003's `/plan status` reports it).
pub(crate) const SCHEMA_V4: &str = r#"
ALTER TABLE sessions ADD COLUMN client_persistence TEXT NOT NULL DEFAULT 'persisted'
    CHECK (client_persistence IN ('persisted', 'ephemeral'));
-- One persisted entry is one capture, whatever its fingerprint (seed 004).
DROP INDEX checkpoints_capture_identity;
CREATE UNIQUE INDEX checkpoints_capture_entry ON plan_checkpoints(session_id, capture_entry_id)
    WHERE capture_entry_id IS NOT NULL;
"#;

/// v6 → v7: the agent a session serves (`pi`, `claude-code`, `codex`, `gemini-cli`, `other`),
/// whose tool catalog classifies its tool calls. Every session from before served pi, the only
/// client there was, so existing rows take `pi`, as does a client that does not say.
pub(crate) const SCHEMA_V7: &str = r#"
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'pi'
    CHECK (agent IN ('pi', 'claude-code', 'codex', 'gemini-cli', 'other'));
"#;

/// v7 → v8: the last line of the decision journal (`<db>-decisions`) the audit log holds, one
/// row, written in the same transaction as the rows it covers.
pub(crate) const SCHEMA_V8: &str = r#"
CREATE TABLE audit_journal (
    id  INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    seq INTEGER NOT NULL CHECK (seq >= 0)
) STRICT;
INSERT INTO audit_journal (id, seq) VALUES (1, 0);
"#;

/// v8 → v9: when the agent ended a session for good (`/clear`): the session leaves the lists
/// and any later event of it reopens it. Existing sessions have not ended.
pub(crate) const SCHEMA_V9: &str = r#"
ALTER TABLE sessions ADD COLUMN ended_at INTEGER;
"#;
