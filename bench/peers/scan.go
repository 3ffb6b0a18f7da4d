package main

import (
	"bytes"
	"database/sql"

	"github.com/dgraph-io/badger/v4"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/tidwall/buntdb"
	bolt "go.etcd.io/bbolt"
)

// scanner is an engine that iterates in key order. scan(false) visits
// every key, each key and value copied into memory the caller owns, and
// returns how many it visited; prefix does the same for the keys that
// start with p (copied, or with borrow lent, for a borrowScanner).
type scanner interface {
	scan(borrow bool) (int, error)
	prefix(p []byte, borrow bool) (int, error)
}

// borrowScanner is a scanner that can also lend its rows: scan(true)
// visits every key without copying it.
type borrowScanner interface {
	scanner
	borrowScans()
}

func scannerOf(st store) scanner {
	sc, ok := st.(scanner)
	if !ok {
		fail("%s has no scan", *engine)
	}
	return sc
}

// sink keeps what a scan reads alive, so that no copy is optimized away.
var sink int

// keep notes a row that the caller would use.
func keep(k, v []byte) { sink += len(k) + len(v) }

func (s *snkv) borrowScans() {}

func (s *snkv) scan(borrow bool) (int, error) {
	n := 0
	for e, err := range s.db.Scan(kvstore.IterOptions{Borrow: borrow}) {
		if err != nil {
			return n, err
		}
		keep(e.Key, e.Value)
		n++
	}
	return n, nil
}

func (s *snkv) prefix(p []byte, borrow bool) (int, error) {
	n := 0
	for e, err := range s.db.Scan(kvstore.IterOptions{Prefix: p, Borrow: borrow}) {
		if err != nil {
			return n, err
		}
		keep(e.Key, e.Value)
		n++
	}
	return n, nil
}

func (s *boltStore) borrowScans() {}

// scan reads with a cursor; copying, each key and value is appended to a
// slice of its own, as a program that keeps them past the transaction must.
func (s *boltStore) scan(borrow bool) (n int, err error) { return s.prefix(nil, borrow) }

func (s *boltStore) prefix(p []byte, borrow bool) (n int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			if !borrow {
				k, v = bytes.Clone(k), bytes.Clone(v)
			}
			keep(k, v)
			n++
		}
		return nil
	})
	return n, err
}

// scan walks buntdb's key order; its keys and values are strings, which
// the caller may keep as they are: no copy in either mode.
func (s *buntStore) scan(bool) (n int, err error) {
	err = s.db.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(k, v string) bool {
			sink += len(k) + len(v)
			n++
			return true
		})
	})
	return n, err
}

func (s *buntStore) prefix(p []byte, _ bool) (n int, err error) {
	ps := string(p)
	err = s.db.View(func(tx *buntdb.Tx) error {
		return tx.AscendGreaterOrEqual("", ps, func(k, v string) bool {
			if len(k) < len(ps) || k[:len(ps)] != ps {
				return false
			}
			sink += len(k) + len(v)
			n++
			return true
		})
	})
	return n, err
}

func (s *badgerStore) borrowScans() {}

// scan reads with an iterator that prefetches values; copying, with
// KeyCopy and ValueCopy.
func (s *badgerStore) scan(borrow bool) (n int, err error) { return s.prefix(nil, borrow) }

func (s *badgerStore) prefix(p []byte, borrow bool) (n int, err error) {
	err = s.db.View(func(tx *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = p
		it := tx.NewIterator(opts)
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			m, err := badgerRow(it.Item(), borrow)
			if err != nil {
				return err
			}
			sink += m
			n++
		}
		return nil
	})
	return n, err
}

// badgerRow reads one item, copied or lent, and returns its size.
func badgerRow(it *badger.Item, borrow bool) (int, error) {
	if borrow {
		m := len(it.Key())
		err := it.Value(func(v []byte) error { m += len(v); return nil })
		return m, err
	}
	k := it.KeyCopy(nil)
	v, err := it.ValueCopy(nil)
	return len(k) + len(v), err
}

func (s *sqlStore) borrowScans() {}

// scan reads SELECT key, value ORDER BY key into []byte (copies) or
// sql.RawBytes (lent).
func (s *sqlStore) scan(borrow bool) (int, error) {
	if borrow {
		return sqlRows[sql.RawBytes](s.all)
	}
	return sqlRows[[]byte](s.all)
}

func (s *sqlStore) prefix(p []byte, borrow bool) (int, error) {
	end := bytes.Clone(p)
	for len(end) > 0 && end[len(end)-1] == 0xff {
		end = end[:len(end)-1]
	}
	st, args := s.from, []any{p}
	if len(end) > 0 {
		end[len(end)-1]++
		st, args = s.rng, []any{p, end}
	}
	if borrow {
		return sqlRows[sql.RawBytes](st, args...)
	}
	return sqlRows[[]byte](st, args...)
}

// sqlRows reads every row of st into two T and returns how many it read.
func sqlRows[T ~[]byte](st *sql.Stmt, args ...any) (n int, err error) {
	rows, err := st.Query(args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var k, v T
	for rows.Next() {
		if err := rows.Scan(&k, &v); err != nil {
			return n, err
		}
		keep(k, v)
		n++
	}
	return n, rows.Err()
}
