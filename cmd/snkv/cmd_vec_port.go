package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
)

// Vector indexes in 'snkv export' and 'snkv import'. After the column
// families, an export writes each vector index as a header line, then one
// line a vector:
//
//	{"vec":"docs","dim":3,"metric":"cosine","storage":"f32","m":16,"ef_construction":128}
//	{"vec":"docs","key":"a","vector":[0.1,0.2,0.3],"value":"v","meta":{"lang":"en"},"expire_ms":1893456000000}
//
// Keys and values are written as in column family lines (text or base64);
// metadata that is not all UTF-8 goes under "meta_base64", its keys and
// values base64. Vectors are written with float32's shortest exact
// decimals, so they read back bit for bit. Import creates a missing index
// with the header's options (an existing one must have the same) and puts
// the vectors in the import's transaction.

// vecFields are the fields of a vector index's lines.
type vecFields struct {
	Vec            *string           `json:"vec,omitempty"`
	Dim            int               `json:"dim,omitempty"`
	Metric         string            `json:"metric,omitempty"`
	Storage        string            `json:"storage,omitempty"`
	M              int               `json:"m,omitempty"`
	EfConstruction int               `json:"ef_construction,omitempty"`
	Vector         []float32         `json:"vector,omitempty"`
	Meta           map[string]string `json:"meta,omitempty"`
	MetaB64        map[string]string `json:"meta_base64,omitempty"`
}

// vecLine is one line of a vector index in an export (and, without Vec,
// a vector as vec get and vec search print it).
type vecLine struct {
	Vec string `json:"vec,omitempty"`
	keyValue
	vecFields
	ExpireMs *int64 `json:"expire_ms,omitempty"`
}

// importLine is any line import reads: a column family's or a vector
// index's.
type importLine struct {
	record
	vecFields
}

// openVecIndexes opens every vector index of db for an export; the caller
// closes them.
func openVecIndexes(ctx context.Context, db *kvstore.Store) ([]*vector.Index, error) {
	names, err := vector.List(ctx, db)
	if err != nil {
		return nil, err
	}
	var out []*vector.Index
	for _, name := range names {
		ix, err := vector.Open(ctx, db, name, vector.Options{})
		if err != nil {
			closeVecIndexes(out)
			return nil, vecError(name, err)
		}
		out = append(out, ix)
	}
	return out, nil
}

func closeVecIndexes(ixs []*vector.Index) {
	for _, ix := range ixs {
		_ = ix.Close()
	}
}

// exportVectors writes the header and the selected live vectors of each
// index in tx's snapshot and returns how many vectors it wrote.
func (a *app) exportVectors(ctx context.Context, tx *kvstore.Tx, ixs []*vector.Index, sink *app, sel keySel) (n int64, err error) {
	for _, ix := range ixs {
		st, err := ix.Stats(ctx)
		if err != nil {
			return n, err
		}
		name := ix.Name()
		if err := sink.emit(vecLine{Vec: name, vecFields: vecFields{Dim: st.Dim, Metric: st.Metric.String(),
			Storage: st.Storage.String(), M: st.M, EfConstruction: st.EfConstruction}}); err != nil {
			return n, err
		}
		for e, err := range ix.In(tx).Scan(sel.opts) {
			if err != nil {
				return n, vecError(name, err)
			}
			if !sel.keeps(e.Key) {
				continue
			}
			l := entryLine(e)
			l.Vec = name
			if err := sink.emit(l); err != nil {
				return n, err
			}
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return n, err
				}
			}
		}
	}
	return n, nil
}

// entryLine is e as a line: its key and value as text, or base64 when
// that is shorter or they are not UTF-8 (see textOrBase64), its metadata
// likewise (metaOut); an empty value and no expiry are left out.
func entryLine(e vector.Entry) vecLine {
	l := vecLine{vecFields: vecFields{Vector: e.Vector}}
	value := e.Value
	if len(value) == 0 {
		value = nil
	}
	l.set(e.Key, value)
	l.Meta, l.MetaB64 = metaOut(e.Meta)
	if !e.ExpireAt.IsZero() {
		ms := e.ExpireAt.UnixMilli()
		l.ExpireMs = &ms
	}
	return l
}

// metaOut returns m as JSON text, or base64 when a key or a value is not
// UTF-8 (JSON would replace its bytes).
func metaOut(m map[string]string) (text, b64 map[string]string) {
	if len(m) == 0 {
		return nil, nil
	}
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			b64 = make(map[string]string, len(m))
			for k, v := range m {
				b64[base64.StdEncoding.EncodeToString([]byte(k))] = base64.StdEncoding.EncodeToString([]byte(v))
			}
			return nil, b64
		}
	}
	return m, nil
}

// metaIn reads a line's metadata back.
func metaIn(text, b64 map[string]string) (map[string]string, error) {
	if text != nil && b64 != nil {
		return nil, errors.New(`both "meta" and "meta_base64"`)
	}
	if b64 == nil {
		return text, nil
	}
	m := make(map[string]string, len(b64))
	for k, v := range b64 {
		kb, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			return nil, fmt.Errorf("meta_base64: %w", err)
		}
		vb, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("meta_base64: %w", err)
		}
		m[string(kb)] = string(vb)
	}
	return m, nil
}

// any reports whether a line has any field of a vector index.
func (f *vecFields) any() bool {
	return f.Vec != nil || f.Dim != 0 || f.Metric != "" || f.Storage != "" || f.M != 0 || f.EfConstruction != 0 ||
		f.Vector != nil || f.Meta != nil || f.MetaB64 != nil
}

// vecLine applies one line of a vector index: a header opens (or
// creates) the index, any other line puts a vector.
func (im *importer) vecLine(l *importLine) error {
	name := *l.Vec
	if l.CF != "" {
		return errors.New(`a line with both "cf" and "vec"`)
	}
	key, hasKey, value, _, err := l.bytes()
	if err != nil {
		return err
	}
	if !hasKey {
		if l.Vector != nil || value != nil || l.Meta != nil || l.MetaB64 != nil || l.ExpireMs != nil {
			return errors.New(`a vector, value, metadata or expiry without "key"`)
		}
		return im.switchToVec(name, &l.vecFields)
	}
	if l.Dim != 0 || l.Metric != "" || l.Storage != "" || l.M != 0 || l.EfConstruction != 0 {
		return errors.New(`index options on a vector's line: they belong to the index's first line, without "key"`)
	}
	if im.vec == nil || im.vec.Name() != name {
		return fmt.Errorf("vector index %q: a vector before the index's first line (dim, metric, ...), which export writes first", name)
	}
	if l.Vector == nil {
		return errors.New(`missing "vector"`)
	}
	meta, err := metaIn(l.Meta, l.MetaB64)
	if err != nil {
		return err
	}
	if l.ExpireMs != nil && *l.ExpireMs <= im.a.nowMs() {
		im.tally.skipped++
		return nil
	}
	if err := im.begin(); err != nil {
		return err
	}
	p := vector.Put{Value: value, Meta: meta}
	if l.ExpireMs != nil {
		p.ExpireAt = time.UnixMilli(*l.ExpireMs)
	}
	if err := im.vec.In(im.tx).Put(key, l.Vector, p); err != nil {
		return err
	}
	return im.written()
}

// switchToVec makes name the vector index that vectors go to, committing
// the previous transaction, and opening the index with the header's
// options or creating it.
func (im *importer) switchToVec(name string, f *vecFields) error {
	if err := im.commit(); err != nil {
		return err
	}
	fold := "\x00vec:" + name // index names are exact, and never clash with a column family's
	if im.seen[fold] && im.batch == 0 {
		return fmt.Errorf("the lines of vector index %q are not together (its earlier lines are imported): an all-or-nothing import needs each index's lines in one run, as export writes them; use --batch N to import mixed lines", name)
	}
	if f.Dim <= 0 {
		return fmt.Errorf(`vector index %q: missing "dim"`, name)
	}
	metric, storage, err := parseVecKinds(f.Metric, f.Storage)
	if err != nil {
		return fmt.Errorf("vector index %q: metric %q, storage %q: want l2, cosine or dot, and f32, f16 or int8", name, f.Metric, f.Storage)
	}
	names, err := vector.List(im.ctx, im.db)
	if err != nil {
		return err
	}
	existed := false
	for _, n := range names {
		existed = existed || n == name
	}
	ix, err := vector.Open(im.ctx, im.db, name, vector.Options{Dim: f.Dim, Metric: metric, Storage: storage, M: f.M, EfConstruction: f.EfConstruction})
	if err != nil {
		return vecError(name, err)
	}
	im.closeVec()
	im.vec, im.vecCreated = ix, !existed
	im.cur, im.created = nil, false
	if !im.seen[fold] {
		im.tallies = append(im.tallies, &cfTally{name: name, vec: true})
	}
	im.seen[fold] = true
	for _, t := range im.tallies {
		if t.vec && t.name == name {
			im.tally = t
		}
	}
	return nil
}

// closeVec closes the current vector index, saving its graph.
func (im *importer) closeVec() {
	if im.vec != nil {
		_ = im.vec.Close()
		im.vec, im.vecCreated = nil, false
	}
}
