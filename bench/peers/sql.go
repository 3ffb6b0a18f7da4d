package main

import (
	"database/sql"
	"time"
)

// sqlStore is SQLite through database/sql: a data table and, for TTLs, an
// expiry index ordered by (expiry, key), as a program would lay them out by
// hand. WAL mode, synchronous NORMAL (FULL for syncfull), prepared
// statements.
type sqlStore struct {
	db                                   *sql.DB
	now                                  int64
	upsert, sel, putExp, first, del, dex *sql.Stmt
	all, from, rng                       *sql.Stmt // scans
}

func openSQL(path string, durable bool) store {
	sync := "NORMAL"
	if durable {
		sync = "FULL"
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous("+sync+")&_pragma=busy_timeout(5000)")
	check(err)
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE IF NOT EXISTS e (expire_ms INTEGER NOT NULL, key BLOB NOT NULL, PRIMARY KEY (expire_ms, key)) WITHOUT ROWID`,
	} {
		_, err := db.Exec(q)
		check(err)
	}
	s := &sqlStore{db: db, now: time.Now().UnixMilli()}
	prep := func(q string) *sql.Stmt {
		st, err := db.Prepare(q)
		check(err)
		return st
	}
	s.upsert = prep(`INSERT INTO t (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
	s.sel = prep(`SELECT value FROM t WHERE key = ?1`)
	s.putExp = prep(`INSERT OR REPLACE INTO e (expire_ms, key) VALUES (?1, ?2)`)
	s.first = prep(`SELECT expire_ms, key FROM e WHERE expire_ms < ?1 ORDER BY expire_ms, key LIMIT ?2`)
	s.del = prep(`DELETE FROM t WHERE key = ?1`)
	s.dex = prep(`DELETE FROM e WHERE expire_ms = ?1 AND key = ?2`)
	s.all = prep(`SELECT key, value FROM t ORDER BY key`)
	s.from = prep(`SELECT key, value FROM t WHERE key >= ?1 ORDER BY key`)
	s.rng = prep(`SELECT key, value FROM t WHERE key >= ?1 AND key < ?2 ORDER BY key`)
	return s
}

func (s *sqlStore) put(ks [][]byte, val []byte) error {
	if len(ks) == 1 {
		_, err := s.upsert.Exec(ks[0], val)
		return err
	}
	return s.tx(func(tx *sql.Tx) error {
		st := tx.Stmt(s.upsert)
		for _, k := range ks {
			if _, err := st.Exec(k, val); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *sqlStore) get(k []byte) error {
	var v []byte
	return s.sel.QueryRow(k).Scan(&v)
}

func (s *sqlStore) close() { check(s.db.Close()) }

func (s *sqlStore) tx(fn func(tx *sql.Tx) error) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *sqlStore) putHalfTTL(ks [][]byte, val []byte) error {
	exp := s.now + time.Minute.Milliseconds()
	return s.tx(func(tx *sql.Tx) error {
		up, pe := tx.Stmt(s.upsert), tx.Stmt(s.putExp)
		for i, k := range ks {
			if _, err := up.Exec(k, val); err != nil {
				return err
			}
			if i%2 == 0 {
				if _, err := pe.Exec(exp, k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *sqlStore) expire() { s.now += 2 * time.Minute.Milliseconds() }

// purge removes the expired keys in index order, purgeBatch a transaction
// (or all in one): each key's data row and its expiry index row.
func (s *sqlStore) purge(oneTx bool) int {
	total := 0
	batch := func(tx *sql.Tx) (int, error) {
		rows, err := tx.Stmt(s.first).Query(s.now, purgeBatch)
		if err != nil {
			return 0, err
		}
		type entry struct {
			exp int64
			key []byte
		}
		var es []entry
		for rows.Next() {
			var e entry
			if err := rows.Scan(&e.exp, &e.key); err != nil {
				rows.Close()
				return 0, err
			}
			es = append(es, e)
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		del, dex := tx.Stmt(s.del), tx.Stmt(s.dex)
		for _, e := range es {
			if _, err := del.Exec(e.key); err != nil {
				return 0, err
			}
			if _, err := dex.Exec(e.exp, e.key); err != nil {
				return 0, err
			}
		}
		return len(es), nil
	}
	if oneTx {
		check(s.tx(func(tx *sql.Tx) error {
			for {
				n, err := batch(tx)
				total += n
				if err != nil || n < purgeBatch {
					return err
				}
			}
		}))
		return total
	}
	for {
		var n int
		check(s.tx(func(tx *sql.Tx) (err error) {
			n, err = batch(tx)
			return err
		}))
		total += n
		if n < purgeBatch {
			return total
		}
	}
}
