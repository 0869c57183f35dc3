-- One row per request record (gateway/request_log.py build): ids, tokens by kind, cost, decisions, timings.
CREATE TABLE records (
    id TEXT PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    day TEXT NOT NULL,
    tenant TEXT NOT NULL,
    key_id TEXT,
    session_id TEXT,
    model TEXT NOT NULL,
    route TEXT,
    provider TEXT,
    api TEXT,
    stream BOOLEAN NOT NULL,
    status INTEGER NOT NULL,
    error TEXT,
    error_code TEXT,
    source TEXT,
    input_tokens BIGINT NOT NULL,
    cache_read_tokens BIGINT NOT NULL,
    cache_write_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    side_cost_usd DOUBLE PRECISION NOT NULL,
    cost_basis TEXT,
    saved_usd DOUBLE PRECISION NOT NULL,
    cache TEXT,
    prefix_break TEXT,
    guard TEXT,
    compaction TEXT,
    upstream_ms DOUBLE PRECISION,
    ttft_ms DOUBLE PRECISION,
    total_ms DOUBLE PRECISION,
    stages_ms TEXT,
    content TEXT
);
CREATE INDEX records_at ON records (at);
CREATE INDEX records_tenant_key_at ON records (tenant, key_id, at);
CREATE INDEX records_tenant_session_at ON records (tenant, session_id, at);
