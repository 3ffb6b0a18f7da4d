package changelog

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/seal"
)

// The conversion of the kept values (Encrypt, Rekey, Decrypt): the log is
// walked in sequence order, a bounded batch per write transaction, and
// every kept value not in the form the store writes now is rewritten in
// place. Each row says its form (its op, and a sealed value's key
// generation), so a walk stopped anywhere is resumed by walking again.
const (
	resealReadSQL  = `SELECT seq, cf, op, key, value FROM "__snkv_changelog" WHERE seq > ?1 ORDER BY seq LIMIT ?2`
	resealWriteSQL = `UPDATE "__snkv_changelog" SET op = ?1, value = ?2 WHERE seq = ?3`
)

// keptRow is a kept value read for conversion.
type keptRow struct {
	seq   int64
	cf    string
	op    Op
	key   []byte
	value []byte
}

// InForm reports whether a put's row, of op op with kept value value,
// is in the form st writes: sealed under st.Write (OpSealedPut, the key's
// generation first), or in the clear (OpPut) when st or st.Write is nil.
func InForm(st *seal.State, op Op, value []byte) bool {
	if st == nil || st.Write == nil {
		return op == OpPut
	}
	return op == OpSealedPut && len(value) > 0 && value[0] == st.Write.Gen()
}

// ResealBatch rewrites on c, inside the caller's write transaction, the
// kept values of the changes after sequence after, at most batch changes
// read, that are not in the form st writes (InForm): a value in the clear
// is sealed, one sealed under another data key is opened and sealed under
// st.Write, and one sealed is opened back to the clear when st writes in
// the clear. A put without a kept value is left alone. It returns the
// changes read, the values rewritten, the last sequence read, and the
// errors (engine.ErrAuth) of the values no key of st opens, which it left
// as they were. A store without a change log has nothing to convert.
func ResealBatch(ctx context.Context, c *engine.Conn, st *seal.State, after int64, batch int) (n, done int, last int64, skipped []error, err error) {
	last = after
	rows, err := c.Query(ctx, resealReadSQL, after, int64(batch))
	if err != nil {
		if engine.NoSuchTable(err) {
			return 0, 0, after, nil, nil
		}
		return 0, 0, after, nil, fmt.Errorf("changelog: read kept values: %w", err)
	}
	var todo []keptRow
	for rows.Next() {
		n++
		last = rows.Int(0)
		op := Op(rows.Int(2))
		if op != OpPut && op != OpSealedPut {
			continue
		}
		value, kind := rows.RawBlob(4)
		if kind == engine.KindNull && op == OpPut {
			continue // a feed that keeps no values
		}
		if InForm(st, op, value) {
			continue
		}
		todo = append(todo, keptRow{seq: last, cf: string(rows.RawBytes(1)), op: op, key: rows.Bytes(3), value: rows.Bytes(4)})
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, after, nil, fmt.Errorf("changelog: read kept values: %w", err)
	}
	for _, kr := range todo {
		v := kr.value
		if kr.op == OpSealedPut {
			if v, err = openKept(st, kr.seq, kr.cf, kr.key, kr.value); err != nil {
				skipped = append(skipped, err)
				continue
			}
		}
		op, stored := OpPut, v
		if st != nil && st.Write != nil {
			k := st.Write
			stored = k.Seal(append(make([]byte, 0, 1+len(v)+seal.Overhead), k.Gen()), SealTable(kr.cf), kr.key, v)
			op = OpSealedPut
		}
		if stored == nil {
			stored = []byte{} // kept, and empty: not NULL
		}
		if _, err := c.Exec(ctx, resealWriteSQL, int64(op), stored, kr.seq); err != nil {
			return 0, 0, after, nil, fmt.Errorf("changelog: rewrite kept value of change %d: %w", kr.seq, err)
		}
		done++
	}
	return n, done, last, skipped, nil
}

// openKept opens the kept value sealed of change seq, of column family cf
// and key key, with the keys of st; it fails with engine.ErrAuth when none
// opens it.
func openKept(st *seal.State, seq int64, cf string, key, sealed []byte) ([]byte, error) {
	if st == nil || len(sealed) < 1 {
		return nil, fmt.Errorf("changelog: change %d: a sealed value in a store in the clear: %w", seq, engine.ErrAuth)
	}
	k := st.KeyOf(sealed[0])
	if k == nil {
		return nil, fmt.Errorf("changelog: change %d: no key of the generation its value was sealed under: %w", seq, engine.ErrAuth)
	}
	v, err := k.Open(nil, SealTable(cf), key, sealed[1:])
	if err != nil {
		return nil, fmt.Errorf("changelog: change %d: %w", seq, engine.ErrAuth)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}
