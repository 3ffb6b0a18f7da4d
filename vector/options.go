package vector

import (
	"errors"
	"fmt"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// Metric is the distance an index ranks by. It is fixed when the index is
// created.
type Metric uint8

// Metrics. Smaller is nearer for all three.
const (
	L2     Metric = iota // squared Euclidean distance, |a − b|²
	Cosine               // 1 − cos(a, b); a zero vector is refused
	Dot                  // 1 − a·b (inner product, for vectors the caller scaled)
)

// String returns the metric's name (l2, cosine, dot).
func (m Metric) String() string {
	if int(m) < len(metricNames) {
		return metricNames[m]
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

var metricNames = [...]string{L2: "l2", Cosine: "cosine", Dot: "dot"}

// Storage is how an index holds vectors in memory; the store always keeps
// them as float32. It is fixed when the index is created.
type Storage uint8

// Storages.
const (
	F32  Storage = iota // 4 bytes a dimension: exact
	F16                 // 2 bytes a dimension; results reranked by the stored float32
	Int8                // 1 byte a dimension; results reranked by the stored float32
)

// String returns the storage's name (f32, f16, int8).
func (s Storage) String() string {
	if int(s) < len(storageNames) {
		return storageNames[s]
	}
	return fmt.Sprintf("Storage(%d)", uint8(s))
}

var storageNames = [...]string{F32: "f32", F16: "f16", Int8: "int8"}

// DefaultEfSearch is Options.EfSearch's default: the smallest candidate
// list that keeps recall@10 at 0.95 or more, with a margin, on the hard
// set of internal/vectest at 100,000 vectors of 384 dimensions (M 16:
// about 0.91 at 64, 0.96 at 96, 0.97 at 128; docs/benchmarks.md). A search
// costs about twice what it costs at 64; on clustered data 64 is enough
// (recall 1.0), and Options.EfSearch or Query.Ef set it lower.
const DefaultEfSearch = 128

// Options configures Open. Dim, Metric, Storage, M and EfConstruction are
// recorded when the index is created; opening it again with other non-zero
// values fails with ErrMismatch (zero takes what is recorded).
type Options struct {
	// Dim is the vector dimension, 1 to 65,536; required to create.
	Dim int
	// Metric is the distance; default L2.
	Metric Metric
	// Storage is the in-memory form of vectors; default F32.
	Storage Storage
	// M is the graph's links per node (2M on the bottom level); default
	// 16. More links: better recall, more memory (8·M bytes a vector) and
	// slower inserts.
	M int
	// EfConstruction is the candidate list of an insert; default 128.
	EfConstruction int
	// EfSearch is the candidate list of a search when Query.Ef is 0;
	// default DefaultEfSearch. Not recorded.
	EfSearch int
	// PurgeInterval, when positive, runs PurgeExpired in the background at
	// that interval until Close.
	PurgeInterval time.Duration
	// PersistInterval is how often the background writer saves the graph
	// links that changed; default 250 ms. A crash loses only links, never
	// a vector: the next Open links again the vectors whose links were not
	// saved.
	PersistInterval time.Duration
	// PersistStep is how many graph rows one background transaction
	// writes at most; default 4096 (about 0.6 MB).
	PersistStep int
	// OnError receives the errors of the background work (persisting the
	// graph, purging); nil drops them.
	OnError func(error)
}

// Put is the options of one put.
type Put struct {
	// Value is stored with the vector and returned by Get and by searches
	// with Query.Values.
	Value []byte
	// Meta is metadata that Query.Where filters on; it replaces the
	// vector's previous metadata.
	Meta map[string]string
	// TTL, when positive, makes the vector expire after it, on the store's
	// clock. Expiries follow the rules of the store's TTL writes: rounded
	// up to the millisecond, never past the latest one a store holds
	// (kvstore.ErrInvalidTTL), never at or before 1970 (with a clock set
	// before it: kvstore.ErrClockRange).
	TTL time.Duration
	// ExpireAt, when not zero, is the expiry time; it must be in the future
	// (kvstore.ErrInvalidTTL). TTL wins if both are set.
	ExpireAt time.Time
}

// Item is one vector of a batch put.
type Item struct {
	Key    []byte
	Vector []float32
	Put
}

// Query is the options of a search.
type Query struct {
	// K is the number of results wanted; default 10 (when 0 or
	// negative). A K past the index's size asks for every match: it costs
	// no more than that (K, Ef and K · Oversample are cut to the index's
	// slots).
	K int
	// Ef is the candidate list of the graph search; 0 takes
	// Options.EfSearch. Larger: better recall, slower.
	Ef int
	// Prefix keeps only keys starting with it.
	Prefix []byte
	// Start and End keep only keys in [Start, End) (nil: unbounded).
	Start, End []byte
	// Where keeps only vectors whose metadata has every pair of it.
	Where map[string]string
	// Filter, when not nil, keeps only the keys it accepts. It is called
	// during the search, on the searching goroutine, under the index's
	// read lock: it must not call the index.
	Filter func(key []byte) bool
	// MaxDistance, when positive, drops results farther than it.
	MaxDistance float32
	// Oversample is how many candidates per result the rerank of an F16
	// or Int8 index considers (it orders them by the exact distance to the
	// float32 vectors in the store; an F32 index's distances are exact
	// already); default 2.
	Oversample int
	// Values fills Hit.Value and Hit.Meta (one read of each hit's row).
	Values bool
}

// Hit is one search result.
type Hit struct {
	Key      []byte
	Distance float32
	Value    []byte            // with Query.Values
	Meta     map[string]string // with Query.Values
}

// Entry is what Get returns about a key.
type Entry struct {
	Key      []byte
	Vector   []float32
	Value    []byte
	Meta     map[string]string
	ExpireAt time.Time // zero: no expiry
}

// Stats describes an index.
type Stats struct {
	Dim            int
	Metric         Metric
	Storage        Storage
	M              int
	EfConstruction int
	EfSearch       int
	Count          int   // live vectors (expired ones not yet purged included)
	Tombstones     int   // deleted vectors still linked in the graph
	Slots          int   // node slots, live, deleted and free
	MemoryBytes    int64 // bytes of the in-memory graph and vectors
	Unpersisted    int   // graph rows changed in memory and not yet saved
	Seq            uint64
}

// Errors of the package, to compare with errors.Is. Errors of the store
// (kvstore.ErrBusy, kvstore.ErrClosed, …) come through wrapped.
var (
	// ErrMismatch: an index opened with a Dim, Metric, Storage, M or
	// EfConstruction other than it was created with.
	ErrMismatch = errors.New("vector: options differ from the index's")
	// ErrDim: a vector or query of the wrong length.
	ErrDim = errors.New("vector: wrong dimension")
	// ErrVector: a vector or query holding NaN or ±Inf, a zero vector
	// under the cosine metric, or, under L2 or dot, one whose squared
	// length is over math.MaxFloat32/4 (elements of about 1e19 and up):
	// its distances, summed in float32, would overflow.
	ErrVector = errors.New("vector: invalid vector")
	// ErrNotFound is kvstore.ErrNotFound: a missing or expired key, or a
	// missing index.
	ErrNotFound = kvstore.ErrNotFound
	// ErrCorrupt wraps kvstore.ErrCorrupt: a row of the index that does not
	// decode.
	ErrCorrupt = kvstore.ErrCorrupt
	// ErrNoIndex: the index does not exist, or was dropped under an open
	// Index (it also matches ErrNotFound: a missing key's error does not
	// match ErrNoIndex).
	ErrNoIndex = errors.New("vector: no such index")
	// ErrClosed: the index was closed. It matches kvstore.ErrClosed.
	ErrClosed error = closedError{}
)
