-- V1DataTableSQL
CREATE TABLE "users" (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;

-- PlainViewSQL
CREATE VIEW "__snkv_view__users" AS SELECT key, value, NULL AS expire_ms FROM "users";

-- EnableSQL[0]
CREATE TABLE IF NOT EXISTS "__snkv_ttl_k__users" (key BLOB PRIMARY KEY, expire_ms BLOB NOT NULL) WITHOUT ROWID;

-- EnableSQL[1]
CREATE TABLE IF NOT EXISTS "__snkv_ttl_e__users" (key BLOB PRIMARY KEY) WITHOUT ROWID;

-- EnableSQL[2]
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_tu__users" AFTER UPDATE ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM "__snkv_ttl_k__users" WHERE key = OLD.key);
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
END;

-- EnableSQL[3]
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_td__users" AFTER DELETE ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM "__snkv_ttl_k__users" WHERE key = OLD.key);
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
END;

-- EnableSQL[4]
DROP VIEW IF EXISTS "__snkv_view__users";

-- EnableSQL[5]
CREATE VIEW "__snkv_view__users" AS SELECT d.key AS key, d.value AS value, k.expire_ms AS expire_ms FROM "users" AS d LEFT JOIN "__snkv_ttl_k__users" AS k ON k.key = d.key;

-- DropSQL[0]
DROP VIEW IF EXISTS "__snkv_view__users";

-- DropSQL[1]
DROP TABLE IF EXISTS "users";

-- DropSQL[2]
DROP TABLE IF EXISTS "__snkv_ttl_k__users";

-- DropSQL[3]
DROP TABLE IF EXISTS "__snkv_ttl_e__users";

-- Queries.Get
SELECT value, expire_ms FROM "__snkv_view__users" WHERE key = ?1;

-- Queries.Exists
SELECT expire_ms FROM "__snkv_view__users" WHERE key = ?1;

-- Queries.Count
SELECT count(*) FROM "__snkv_view__users" WHERE expire_ms IS NULL OR expire_ms > ?1;

-- Queries.Put
INSERT INTO "users" (key, value) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM "__snkv_catalog" WHERE name = ?3 AND created_ms = ?4) ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- Queries.Upsert
INSERT INTO "users" (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- Queries.Insert
INSERT INTO "users" (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING;

-- Queries.Current
SELECT count(*) FROM "__snkv_catalog" WHERE name = ?1 AND created_ms = ?2;

-- Queries.Del
DELETE FROM "users" WHERE key = ?1;

-- Queries.DelLive
DELETE FROM "users" WHERE key = ?1 AND NOT EXISTS (SELECT 1 FROM "__snkv_view__users" WHERE key = ?1 AND expire_ms <= ?2) AND EXISTS (SELECT 1 FROM "__snkv_catalog" WHERE name = ?3 AND created_ms = ?4);

-- Queries.LazyDel
DELETE FROM "users" WHERE key = ?1 AND EXISTS (SELECT 1 FROM "__snkv_view__users" WHERE key = ?1 AND expire_ms <= ?2);

-- Queries.SetKey
INSERT OR REPLACE INTO "__snkv_ttl_k__users" (key, expire_ms) VALUES (?1, ?2);

-- Queries.SetIndex
INSERT OR REPLACE INTO "__snkv_ttl_e__users" (key) VALUES (?1);

-- Queries.DelKey
DELETE FROM "__snkv_ttl_k__users" WHERE key = ?1;

-- Queries.DelIndex
DELETE FROM "__snkv_ttl_e__users" WHERE key = ?1;

-- Queries.SetCrc
UPDATE "users" SET crc = ?2 WHERE key = ?1 AND crc IS NULL;

-- Queries.FlipTTL
SELECT 1;

-- Queries.Holder
SELECT 1 FROM "__snkv_view__users";

-- Queries.Scan(Open, Open, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" ORDER BY key;

-- Queries.Scan(Open, Open, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" ORDER BY key DESC;

-- Queries.Scan(Open, Inclusive, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key <= ?2 ORDER BY key;

-- Queries.Scan(Open, Inclusive, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Open, Exclusive, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key < ?2 ORDER BY key;

-- Queries.Scan(Open, Exclusive, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key < ?2 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Open, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 ORDER BY key;

-- Queries.Scan(Inclusive, Open, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Inclusive, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key <= ?2 ORDER BY key;

-- Queries.Scan(Inclusive, Inclusive, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Exclusive, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key < ?2 ORDER BY key;

-- Queries.Scan(Inclusive, Exclusive, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key < ?2 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Open, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 ORDER BY key;

-- Queries.Scan(Exclusive, Open, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Inclusive, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key <= ?2 ORDER BY key;

-- Queries.Scan(Exclusive, Inclusive, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Exclusive, desc=false)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key < ?2 ORDER BY key;

-- Queries.Scan(Exclusive, Exclusive, desc=true)
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key < ?2 ORDER BY key DESC;

