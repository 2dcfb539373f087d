-- TalkCody (seed 001 §6.1), verbatim.

-- Main memories table
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL CHECK (type IN ('semantic', 'episodic', 'procedural')),
  content TEXT NOT NULL,
  importance REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
  namespace TEXT NOT NULL,  -- JSON array as string: '["project", "123"]'
  metadata TEXT NOT NULL DEFAULT '{}',  -- JSON object
  embedding BLOB,  -- Optional vector embedding (for future use)
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Namespace index for hierarchical queries
CREATE INDEX IF NOT EXISTS idx_memories_namespace ON memories(namespace);

-- Type index
CREATE INDEX IF NOT EXISTS idx_memories_type ON memories(type);

-- Importance index for ranking
CREATE INDEX IF NOT EXISTS idx_memories_importance ON memories(importance DESC);

-- Time-based indexes
CREATE INDEX IF NOT EXISTS idx_memories_created_at ON memories(created_at DESC);
CREATE INDEX IF NOT EXISTS idx_memories_updated_at ON memories(updated_at DESC);

-- Full-text search virtual table
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  content,
  content='memories',
  content_rowid='rowid',
  tokenize='unicode61'
);

-- Triggers to keep FTS in sync
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
END;

CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, content) VALUES('delete', old.rowid, old.content);
END;

CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, content) VALUES('delete', old.rowid, old.content);
  INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
END;

-- Memory access log (for tracking access patterns)
CREATE TABLE IF NOT EXISTS memory_access_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id TEXT NOT NULL,
  accessed_at INTEGER NOT NULL,
  access_type TEXT NOT NULL CHECK (access_type IN ('read', 'search', 'prompt')),
  FOREIGN KEY (memory_id) REFERENCES memories(id) ON DELETE CASCADE
);

CREATE INDEX IF NOT EXISTS idx_memory_access_log_memory_id ON memory_access_log(memory_id);
CREATE INDEX IF NOT EXISTS idx_memory_access_log_accessed_at ON memory_access_log(accessed_at DESC);
