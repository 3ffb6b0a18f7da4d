-- V1DataTableSQL: format1, upgrading
CREATE TABLE "users" (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;

-- PlainViewSQL: format1
CREATE VIEW "__snkv_view__users" AS SELECT key, value, NULL AS expire_ms FROM "users";

-- PlainViewSQL: upgrading, format2
CREATE VIEW "__snkv_view__users" AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM "users";

-- EnableSQL[0]: format1, upgrading
CREATE TABLE IF NOT EXISTS "__snkv_ttl_k__users" (key BLOB PRIMARY KEY, expire_ms BLOB NOT NULL) WITHOUT ROWID;

-- EnableSQL[0]: format2
CREATE TABLE IF NOT EXISTS "__snkv_ttl_k__users" (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), expire_ms BLOB NOT NULL CHECK (length(expire_ms) = 8), crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID;

-- EnableSQL[1]: format1, upgrading
CREATE TABLE IF NOT EXISTS "__snkv_ttl_e__users" (key BLOB PRIMARY KEY) WITHOUT ROWID;

-- EnableSQL[1]: format2
CREATE TABLE IF NOT EXISTS "__snkv_ttl_e__users" (expire_ms BLOB NOT NULL CHECK (length(expire_ms) = 8), key BLOB NOT NULL, PRIMARY KEY (expire_ms, key)) STRICT, WITHOUT ROWID;

-- EnableSQL[2]: format1
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_tu__users" AFTER UPDATE ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM "__snkv_ttl_k__users" WHERE key = OLD.key);
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
END;

-- EnableSQL[2]: upgrading
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_tu__users" AFTER UPDATE OF key, value ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM "__snkv_ttl_k__users" WHERE key = OLD.key);
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
END;

-- EnableSQL[2]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_tu__users" AFTER UPDATE OF key, value ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE expire_ms = (SELECT expire_ms FROM "__snkv_ttl_k__users" WHERE key = OLD.key) AND key = OLD.key;
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
  DELETE FROM "__snkv_ttl_e__users" WHERE NEW.key IS NOT OLD.key AND expire_ms = (SELECT expire_ms FROM "__snkv_ttl_k__users" WHERE key = NEW.key) AND key = NEW.key;
  DELETE FROM "__snkv_ttl_k__users" WHERE NEW.key IS NOT OLD.key AND key = NEW.key;
END;

-- EnableSQL[3]: format1, upgrading
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_td__users" AFTER DELETE ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM "__snkv_ttl_k__users" WHERE key = OLD.key);
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
END;

-- EnableSQL[3]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_td__users" AFTER DELETE ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE expire_ms = (SELECT expire_ms FROM "__snkv_ttl_k__users" WHERE key = OLD.key) AND key = OLD.key;
  DELETE FROM "__snkv_ttl_k__users" WHERE key = OLD.key;
END;

-- EnableSQL[4]: format1, upgrading
DROP VIEW IF EXISTS "__snkv_view__users";

-- EnableSQL[4]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_ti__users" AFTER INSERT ON "users" BEGIN
  DELETE FROM "__snkv_ttl_e__users" WHERE expire_ms = (SELECT expire_ms FROM "__snkv_ttl_k__users" WHERE key = NEW.key) AND key = NEW.key;
  DELETE FROM "__snkv_ttl_k__users" WHERE key = NEW.key;
END;

-- EnableSQL[5]: format1
CREATE VIEW "__snkv_view__users" AS SELECT d.key AS key, d.value AS value, k.expire_ms AS expire_ms FROM "users" AS d LEFT JOIN "__snkv_ttl_k__users" AS k ON k.key = d.key;

-- EnableSQL[5]: upgrading
CREATE VIEW "__snkv_view__users" AS SELECT d.key AS key, d.value AS value, d.crc AS crc, k.expire_ms AS expire_ms, NULL AS ecrc FROM "users" AS d LEFT JOIN "__snkv_ttl_k__users" AS k ON k.key = d.key;

-- EnableSQL[5]: format2
DROP VIEW IF EXISTS "__snkv_view__users";

-- DropSQL[0]: format1, upgrading, format2
DROP VIEW IF EXISTS "__snkv_view__users";

-- DropSQL[1]: format1, upgrading, format2
DROP TABLE IF EXISTS "users";

-- DropSQL[2]: format1, upgrading, format2
DROP TABLE IF EXISTS "__snkv_ttl_k__users";

-- DropSQL[3]: format1, upgrading, format2
DROP TABLE IF EXISTS "__snkv_ttl_e__users";

-- Queries.Get: format1
SELECT value, expire_ms FROM "__snkv_view__users" WHERE key = ?1;

-- Queries.Get: upgrading, format2
SELECT value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key = ?1;

-- Queries.Exists: format1
SELECT expire_ms FROM "__snkv_view__users" WHERE key = ?1;

-- Queries.Exists: upgrading, format2
SELECT expire_ms, ecrc FROM "__snkv_view__users" WHERE key = ?1;

-- Queries.Count: format1, upgrading, format2
SELECT count(*) FROM "__snkv_view__users" WHERE expire_ms IS NULL OR expire_ms > ?1;

-- Queries.Put: format1
INSERT INTO "users" (key, value) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM "__snkv_catalog" WHERE name = ?3 AND created_ms = ?4) ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- Queries.Put: upgrading, format2
INSERT INTO "users" (key, value, crc) SELECT ?1, ?2, ?5 WHERE EXISTS (SELECT 1 FROM "__snkv_catalog" WHERE name = ?3 AND created_ms = ?4) AND (?6 IS NULL OR coalesce((SELECT value FROM "__snkv_meta" WHERE name = 'changefeed'), 0) = ?6) ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc;

-- Queries.Upsert: format1
INSERT INTO "users" (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- Queries.Upsert: upgrading, format2
INSERT INTO "users" (key, value, crc) VALUES (?1, ?2, ?5) ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc;

-- Queries.Insert: format1
INSERT INTO "users" (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING;

-- Queries.Insert: upgrading, format2
INSERT INTO "users" (key, value, crc) VALUES (?1, ?2, ?5) ON CONFLICT (key) DO NOTHING;

-- Queries.Current: format1, upgrading, format2
SELECT count(*) FROM "__snkv_catalog" WHERE name = ?1 AND created_ms = ?2;

-- Queries.Del: format1, upgrading, format2
DELETE FROM "users" WHERE key = ?1;

-- Queries.DelLive: format1
DELETE FROM "users" WHERE key = ?1 AND NOT EXISTS (SELECT 1 FROM "__snkv_view__users" WHERE key = ?1 AND expire_ms <= ?2) AND EXISTS (SELECT 1 FROM "__snkv_catalog" WHERE name = ?3 AND created_ms = ?4);

-- Queries.DelLive: upgrading, format2
DELETE FROM "users" WHERE key = ?1 AND NOT EXISTS (SELECT 1 FROM "__snkv_view__users" WHERE key = ?1 AND expire_ms <= ?2) AND EXISTS (SELECT 1 FROM "__snkv_catalog" WHERE name = ?3 AND created_ms = ?4) AND (?5 IS NULL OR coalesce((SELECT value FROM "__snkv_meta" WHERE name = 'changefeed'), 0) = ?5);

-- Queries.LazyDel: format1, upgrading, format2
DELETE FROM "users" WHERE key = ?1 AND EXISTS (SELECT 1 FROM "__snkv_view__users" WHERE key = ?1 AND expire_ms <= ?2);

-- Queries.SetKey: format1, upgrading
INSERT OR REPLACE INTO "__snkv_ttl_k__users" (key, expire_ms) VALUES (?1, ?2);

-- Queries.SetKey: format2
INSERT OR REPLACE INTO "__snkv_ttl_k__users" (key, expire_ms, crc) VALUES (?1, ?2, ?3);

-- Queries.SetIndex: format1, upgrading
INSERT OR REPLACE INTO "__snkv_ttl_e__users" (key) VALUES (?1);

-- Queries.SetIndex: format2
INSERT OR REPLACE INTO "__snkv_ttl_e__users" (expire_ms, key) VALUES (?1, ?2);

-- Queries.DelKey: format1, upgrading, format2
DELETE FROM "__snkv_ttl_k__users" WHERE key = ?1;

-- Queries.DelIndex: format1, upgrading
DELETE FROM "__snkv_ttl_e__users" WHERE key = ?1;

-- Queries.DelIndex: format2
DELETE FROM "__snkv_ttl_e__users" WHERE expire_ms = ?1 AND key = ?2;

-- Queries.SetCrc: format1, upgrading, format2
UPDATE "users" SET crc = ?2 WHERE key = ?1 AND crc IS NULL;

-- Queries.FlipTTL: format1
SELECT 1;

-- Queries.FlipTTL: upgrading, format2
UPDATE "users" SET crc = (crc | ?2) - (crc & ?2) WHERE key = ?1 AND crc IS NOT NULL;

-- Queries.Holder: format1, upgrading, format2
SELECT EXISTS (SELECT 1 FROM "__snkv_view__users" WHERE 0);

-- Queries.Scan(Open, Open, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" ORDER BY key;

-- Queries.Scan(Open, Open, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" ORDER BY key;

-- Queries.Scan(Open, Open, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" ORDER BY key DESC;

-- Queries.Scan(Open, Open, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" ORDER BY key DESC;

-- Queries.Scan(Open, Inclusive, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key <= ?2 ORDER BY key;

-- Queries.Scan(Open, Inclusive, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key <= ?2 ORDER BY key;

-- Queries.Scan(Open, Inclusive, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Open, Inclusive, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Open, Exclusive, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key < ?2 ORDER BY key;

-- Queries.Scan(Open, Exclusive, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key < ?2 ORDER BY key;

-- Queries.Scan(Open, Exclusive, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key < ?2 ORDER BY key DESC;

-- Queries.Scan(Open, Exclusive, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key < ?2 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Open, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 ORDER BY key;

-- Queries.Scan(Inclusive, Open, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key >= ?1 ORDER BY key;

-- Queries.Scan(Inclusive, Open, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Open, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key >= ?1 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Inclusive, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key <= ?2 ORDER BY key;

-- Queries.Scan(Inclusive, Inclusive, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key >= ?1 AND key <= ?2 ORDER BY key;

-- Queries.Scan(Inclusive, Inclusive, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Inclusive, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key >= ?1 AND key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Exclusive, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key < ?2 ORDER BY key;

-- Queries.Scan(Inclusive, Exclusive, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key >= ?1 AND key < ?2 ORDER BY key;

-- Queries.Scan(Inclusive, Exclusive, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key >= ?1 AND key < ?2 ORDER BY key DESC;

-- Queries.Scan(Inclusive, Exclusive, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key >= ?1 AND key < ?2 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Open, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 ORDER BY key;

-- Queries.Scan(Exclusive, Open, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key > ?1 ORDER BY key;

-- Queries.Scan(Exclusive, Open, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Open, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key > ?1 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Inclusive, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key <= ?2 ORDER BY key;

-- Queries.Scan(Exclusive, Inclusive, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key > ?1 AND key <= ?2 ORDER BY key;

-- Queries.Scan(Exclusive, Inclusive, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Inclusive, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key > ?1 AND key <= ?2 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Exclusive, desc=false): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key < ?2 ORDER BY key;

-- Queries.Scan(Exclusive, Exclusive, desc=false): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key > ?1 AND key < ?2 ORDER BY key;

-- Queries.Scan(Exclusive, Exclusive, desc=true): format1
SELECT key, value, expire_ms FROM "__snkv_view__users" WHERE key > ?1 AND key < ?2 ORDER BY key DESC;

-- Queries.Scan(Exclusive, Exclusive, desc=true): upgrading, format2
SELECT key, value, expire_ms, crc, ecrc FROM "__snkv_view__users" WHERE key > ?1 AND key < ?2 ORDER BY key DESC;

-- ChecksumTriggerSQL: upgrading, format2
CREATE TRIGGER IF NOT EXISTS "__snkv_crc__users" AFTER UPDATE OF key, value ON "users" WHEN NEW.crc IS OLD.crc AND NEW.crc IS NOT 4294967296 AND (NEW.key IS NOT OLD.key OR NEW.value IS NOT OLD.value) BEGIN UPDATE "users" SET crc = 4294967296 WHERE key = NEW.key; END;

-- CatalogSQL: format2
CREATE TABLE "__snkv_catalog" (name TEXT PRIMARY KEY NOT NULL COLLATE NOCASE, kind TEXT NOT NULL DEFAULT 'kv', created_ms INTEGER NOT NULL) STRICT, WITHOUT ROWID;

-- MetaSQL: format2
CREATE TABLE IF NOT EXISTS "__snkv_meta" (name TEXT PRIMARY KEY NOT NULL, value ANY) STRICT, WITHOUT ROWID;

-- DataTableSQL: format2
CREATE TABLE "users" (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID;

-- EnableSQL[6]: format2
CREATE VIEW "__snkv_view__users" AS SELECT d.key AS key, d.value AS value, d.crc AS crc, k.expire_ms AS expire_ms, k.crc AS ecrc FROM "users" AS d LEFT JOIN "__snkv_ttl_k__users" AS k ON k.key = d.key;

-- DataTableCopySQL: format2
CREATE TABLE "users" (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296, ttl BLOB) STRICT, WITHOUT ROWID;

-- EnableCopySQL[0]: format2
ALTER TABLE "users" ADD COLUMN ttl BLOB;

-- EnableCopySQL[1]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_ci__users" AFTER INSERT ON "__snkv_ttl_k__users" BEGIN UPDATE "users" SET ttl = NULL WHERE key = NEW.key AND ttl IS NOT NULL; END;

-- EnableCopySQL[2]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_cu__users" AFTER UPDATE ON "__snkv_ttl_k__users" BEGIN UPDATE "users" SET ttl = NULL WHERE key = OLD.key AND ttl IS NOT NULL; UPDATE "users" SET ttl = NULL WHERE key = NEW.key AND ttl IS NOT NULL; END;

-- EnableCopySQL[3]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_cd__users" AFTER DELETE ON "__snkv_ttl_k__users" BEGIN UPDATE "users" SET ttl = NULL WHERE key = OLD.key AND ttl IS NOT NULL; END;

-- EnableCopySQL[4]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_cw__users" AFTER INSERT ON "users" WHEN NEW.ttl IS NOT NULL BEGIN UPDATE "users" SET ttl = NULL WHERE key = NEW.key AND ttl IS NOT NULL; END;

-- EnableCopySQL[5]: format2
CREATE TRIGGER IF NOT EXISTS "__snkv_ttl_cx__users" AFTER UPDATE OF key, value, ttl ON "users" WHEN NEW.ttl IS NOT NULL BEGIN UPDATE "users" SET ttl = NULL WHERE key = NEW.key AND ttl IS NOT NULL; END;

-- CopyFormatSQL: format2
UPDATE "__snkv_meta" SET value = 3 WHERE name = 'format' AND value = 2;

