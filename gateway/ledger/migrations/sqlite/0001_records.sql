-- One row per request record (gateway/request_log.py build): ids, tokens by kind, cost, decisions, timings.
CREATE TABLE records (
    id TEXT PRIMARY KEY,
    at REAL NOT NULL,
    day TEXT NOT NULL,
    tenant TEXT NOT NULL,
    key_id TEXT,
    session_id TEXT,
    model TEXT NOT NULL,
    route TEXT,
    provider TEXT,
    api TEXT,
    stream INTEGER NOT NULL,
    status INTEGER NOT NULL,
    error TEXT,
    error_code TEXT,
    source TEXT,
    input_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    side_cost_usd REAL NOT NULL,
    cost_basis TEXT,
    saved_usd REAL NOT NULL,
    cache TEXT,
    prefix_break TEXT,
    guard TEXT,
    compaction TEXT,
    upstream_ms REAL,
    ttft_ms REAL,
    total_ms REAL,
    stages_ms TEXT,
    content TEXT
);
CREATE INDEX records_at ON records (at);
CREATE INDEX records_tenant_key_at ON records (tenant, key_id, at);
CREATE INDEX records_tenant_session_at ON records (tenant, session_id, at);
