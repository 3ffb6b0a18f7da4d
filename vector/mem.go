package vector

import (
	"bytes"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/snkv-go/snkv/internal/hnsw"
)

// mem is the in-memory state of an index as of sequence number applied:
// the graph and, per node id, its key, put sequence, expiry and metadata.
// It is guarded by Index.mu.
type mem struct {
	g       *hnsw.Graph
	applied uint64
	keys    []string // node → key ("": no live key; keys are never empty), shared with byKey
	seqs    []uint64 // node → the put it holds (kept for tombstones)
	expire  []int64  // node → expiry ms (nil until a vector has one)
	byKey   map[string]uint32
	meta    [][]uint32 // node → metadata pair ids (nil until one has any)
	pairs   map[string]uint32
	posts   [][]uint32 // pair id → nodes that had it (stale entries are checked out)
	nexp    int        // nodes with an expiry
	// repairing is set while the background repairs tombstones, holding
	// applyMu: searches then do not wait to apply commits (see syncSearch).
	repairing atomic.Bool
}

func newMem(g *hnsw.Graph) *mem {
	return &mem{g: g, byKey: map[string]uint32{}, pairs: map[string]uint32{}}
}

func (m *mem) grow(node uint32) {
	for uint32(len(m.keys)) <= node {
		m.keys = append(m.keys, "")
		m.seqs = append(m.seqs, 0)
		if m.expire != nil {
			m.expire = append(m.expire, 0)
		}
		if m.meta != nil {
			m.meta = append(m.meta, nil)
		}
	}
}

func pairKey(k, v string) string { return k + "\x00" + v }

// set records node as key's live node (the graph insert is the caller's).
func (m *mem) set(node uint32, key []byte, seq uint64, expire int64, meta map[string]string) {
	m.grow(node)
	k := string(key)
	if prev := m.keys[node]; prev != "" && prev != k && m.byKey[prev] == node {
		delete(m.byKey, prev) // the slot was freed and taken by k
	}
	m.keys[node] = k
	m.seqs[node] = seq
	m.byKey[k] = node
	if expire != 0 && m.expire == nil {
		m.expire = make([]int64, len(m.keys))
	}
	if m.expire != nil {
		if m.expire[node] != 0 {
			m.nexp--
		}
		m.expire[node] = expire
		if expire != 0 {
			m.nexp++
		}
	}
	if len(meta) > 0 && m.meta == nil {
		m.meta = make([][]uint32, len(m.keys))
	}
	if m.meta != nil {
		var ids []uint32
		for mk, mv := range meta {
			pk := pairKey(mk, mv)
			id, ok := m.pairs[pk]
			if !ok {
				id = uint32(len(m.posts))
				m.pairs[pk] = id
				m.posts = append(m.posts, nil)
			}
			ids = append(ids, id)
			m.posts[id] = append(m.posts[id], node)
		}
		m.meta[node] = ids
	}
}

// drop forgets node's key (it becomes a tombstone in the graph).
func (m *mem) drop(node uint32) {
	if int(node) >= len(m.keys) || m.keys[node] == "" {
		return
	}
	k := m.keys[node]
	if m.byKey[k] == node {
		delete(m.byKey, k)
	}
	m.keys[node] = ""
	if m.expire != nil && m.expire[node] != 0 {
		m.expire[node] = 0
		m.nexp--
	}
	if m.meta != nil {
		m.meta[node] = nil
	}
}

// live reports whether node holds an unexpired key at nowMs.
func (m *mem) live(node uint32, nowMs int64) bool {
	if int(node) >= len(m.keys) || m.keys[node] == "" {
		return false
	}
	return m.expire == nil || m.expire[node] == 0 || m.expire[node] > nowMs
}

func (m *mem) hasPair(node uint32, id uint32) bool {
	if m.meta == nil {
		return false
	}
	for _, x := range m.meta[node] {
		if x == id {
			return true
		}
	}
	return false
}

// filter builds the graph filter of q at now, and the subset of nodes it
// can match when a Where pair narrows it (nil: any node). ok is false when
// the filter can match nothing.
func (m *mem) filter(q *Query, now time.Time) (allow func(uint32) bool, subset []uint32, ok bool) {
	nowMs := now.UnixMilli()
	var want []uint32
	for k, v := range q.Where {
		id, found := m.pairs[pairKey(k, v)]
		if !found {
			return nil, nil, false
		}
		want = append(want, id)
		if subset == nil || len(m.posts[id]) < len(subset) {
			subset = m.posts[id]
		}
	}
	prefix, start, end, fn := q.Prefix, q.Start, q.End, q.Filter
	needExp := m.nexp > 0
	if len(want) == 0 && len(prefix) == 0 && start == nil && end == nil && fn == nil && !needExp {
		return nil, nil, true
	}
	allow = func(node uint32) bool {
		if int(node) >= len(m.keys) {
			return false
		}
		if m.keys[node] == "" {
			return false
		}
		key := keyBytes(m.keys[node])
		if needExp && m.expire[node] != 0 && m.expire[node] <= nowMs {
			return false
		}
		for _, id := range want {
			if !m.hasPair(node, id) {
				return false
			}
		}
		if len(prefix) > 0 && !bytes.HasPrefix(key, prefix) {
			return false
		}
		if start != nil && bytes.Compare(key, start) < 0 {
			return false
		}
		if end != nil && bytes.Compare(key, end) >= 0 {
			return false
		}
		return fn == nil || fn(key)
	}
	return allow, subset, true
}

// keyBytes returns the bytes of a key held in memory, without a copy: they
// must not be written (filters only read them).
func keyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// bytes estimates the memory of the per-node state beside the graph: the
// slices, the keys and the key map (Go's map entry and bucket share,
// about 40 bytes a key).
func (m *mem) bytes() int64 {
	b := int64(cap(m.keys))*16 + int64(cap(m.seqs))*8 + int64(cap(m.expire))*8 + int64(cap(m.meta))*24
	for _, k := range m.keys {
		b += int64(len(k))
	}
	b += int64(len(m.byKey)) * 40
	for _, p := range m.posts {
		b += int64(cap(p)) * 4
	}
	return b
}
