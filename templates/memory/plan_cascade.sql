-- Plan Cascade (seed 000 §4.2 and §5.7), verbatim.
-- Cross-session project memory
CREATE TABLE IF NOT EXISTS project_memories (
    id TEXT PRIMARY KEY,
    project_path TEXT NOT NULL,
    category TEXT NOT NULL CHECK(category IN (
        'preference',    -- User preferences ("always use pnpm")
        'convention',    -- Project conventions ("API routes in src/routes/")
        'pattern',       -- Discovered patterns ("error handling uses Result<T, AppError>")
        'correction',    -- Learned corrections ("don't use npm, use pnpm in this project")
        'fact'           -- General facts ("this is a Tauri 2 + React 18 app")
    )),
    content TEXT NOT NULL,
    keywords TEXT NOT NULL DEFAULT '[]',         -- JSON array for fast filtering
    embedding BLOB,                              -- TF-IDF vector (reuse EmbeddingService)
    importance REAL NOT NULL DEFAULT 0.5,        -- 0.0-1.0, decays over time
    access_count INTEGER NOT NULL DEFAULT 0,     -- bumped on retrieval
    source_session_id TEXT,                      -- which session created this
    source_context TEXT,                          -- brief excerpt of original context
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')),
    last_accessed_at TEXT NOT NULL DEFAULT (datetime('now')),
    UNIQUE(project_path, content)                -- prevent exact duplicates
);

CREATE INDEX IF NOT EXISTS idx_project_memories_project
    ON project_memories(project_path);
CREATE INDEX IF NOT EXISTS idx_project_memories_category
    ON project_memories(project_path, category);
CREATE INDEX IF NOT EXISTS idx_project_memories_importance
    ON project_memories(project_path, importance DESC);

-- Episodic records for learning from past interactions
CREATE TABLE IF NOT EXISTS episodic_records (
    id TEXT PRIMARY KEY,
    project_path TEXT NOT NULL,
    session_id TEXT NOT NULL,
    record_type TEXT NOT NULL CHECK(record_type IN (
        'success',      -- Successfully completed task pattern
        'failure',      -- Failed approach that should be avoided
        'discovery'     -- Important discovery during exploration
    )),
    task_summary TEXT NOT NULL,         -- What the user asked
    approach_summary TEXT NOT NULL,     -- What the agent did
    outcome_summary TEXT NOT NULL,      -- What happened
    tools_used TEXT NOT NULL DEFAULT '[]',  -- JSON array of tool names
    keywords TEXT NOT NULL DEFAULT '[]',
    embedding BLOB,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);

CREATE INDEX IF NOT EXISTS idx_episodic_records_project
    ON episodic_records(project_path);

-- Auto-generated skills from successful task executions
CREATE TABLE IF NOT EXISTS skill_library (
    id TEXT PRIMARY KEY,
    project_path TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',           -- JSON array
    body TEXT NOT NULL,                        -- Markdown instruction text (SKILL.md format)
    source_type TEXT NOT NULL CHECK(source_type IN (
        'generated',    -- Auto-generated from successful session
        'refined'       -- Auto-refined from multiple similar sessions
    )),
    source_session_ids TEXT NOT NULL DEFAULT '[]',  -- JSON array of session IDs
    usage_count INTEGER NOT NULL DEFAULT 0,
    success_rate REAL NOT NULL DEFAULT 1.0,    -- 0.0-1.0, updated on use
    keywords TEXT NOT NULL DEFAULT '[]',
    embedding BLOB,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);

CREATE INDEX IF NOT EXISTS idx_skill_library_project
    ON skill_library(project_path);
CREATE INDEX IF NOT EXISTS idx_skill_library_enabled
    ON skill_library(project_path, enabled);
