-- Seed 003 (cortexkit magic-context skill-memory, PR #181): the skill_memory table with the columns of
-- its three migrations (delta_embedding, recall_count, skill_memory_fts; origin_project, source_type;
-- skill_content_hash), as research/frameworks.md §4.4 records them.
CREATE TABLE IF NOT EXISTS skill_memory (
    id INTEGER PRIMARY KEY,
    skill_id TEXT NOT NULL,
    resolved_path TEXT,
    tier TEXT NOT NULL DEFAULT 'project' CHECK (tier IN ('project', 'global')),
    skill_source TEXT,
    project_identity TEXT NOT NULL,
    intent TEXT NOT NULL DEFAULT '',
    intent_embedding BLOB,
    embedding_model_version TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('gotcha', 'discovery', 'fix', 'workflow')),
    delta TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    hit_count INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    normalized_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    delta_embedding BLOB,
    recall_count INTEGER NOT NULL DEFAULT 0,
    origin_project TEXT,
    source_type TEXT,
    skill_content_hash TEXT,
    UNIQUE (skill_id, tier, project_identity, normalized_hash)
);

CREATE INDEX IF NOT EXISTS idx_skill_memory_skill ON skill_memory(skill_id, tier, project_identity);

CREATE VIRTUAL TABLE IF NOT EXISTS skill_memory_fts USING fts5(
    intent,
    delta,
    content='skill_memory',
    content_rowid='id',
    tokenize='porter unicode61'
);

CREATE TRIGGER IF NOT EXISTS skill_memory_ai AFTER INSERT ON skill_memory BEGIN
    INSERT INTO skill_memory_fts(rowid, intent, delta) VALUES (new.id, new.intent, new.delta);
END;

CREATE TRIGGER IF NOT EXISTS skill_memory_ad AFTER DELETE ON skill_memory BEGIN
    INSERT INTO skill_memory_fts(skill_memory_fts, rowid, intent, delta) VALUES ('delete', old.id, old.intent, old.delta);
END;

CREATE TRIGGER IF NOT EXISTS skill_memory_au AFTER UPDATE ON skill_memory BEGIN
    INSERT INTO skill_memory_fts(skill_memory_fts, rowid, intent, delta) VALUES ('delete', old.id, old.intent, old.delta);
    INSERT INTO skill_memory_fts(rowid, intent, delta) VALUES (new.id, new.intent, new.delta);
END;
