package hnsw

import (
	"fmt"
	"math"
	"sync"
)

// MaxNorm2 is the largest squared length of a vector under the L2 and dot
// metrics: distances are sums in float32, and two vectors of at most this
// squared length are at most math.MaxFloat32 apart (|a − b|² ≤ (|a| +
// |b|)² = 4 · MaxNorm2) and have a dot product of at most MaxNorm2, so no
// distance overflows to +Inf or NaN. Elements of up to about 6e18 (in two
// dimensions; less in more) pass.
const MaxNorm2 = math.MaxFloat32 / 4

// CheckError is a vector refused by Check: Err is ErrDim or ErrVector,
// Why says what is wrong with it.
type CheckError struct {
	Err error
	Why string
}

func (e *CheckError) Error() string { return e.Err.Error() + ": " + e.Why }

// Unwrap returns Err.
func (e *CheckError) Unwrap() error { return e.Err }

// Check is the one check of a vector, stored or queried, for dim
// dimensions under metric m: a *CheckError wrapping ErrDim for a wrong
// length, or ErrVector for NaN or ±Inf, a zero vector under the cosine
// metric, or a squared length over MaxNorm2 under L2 and dot.
func Check(v []float32, dim int, m Metric) error {
	_, err := check(v, dim, m)
	return err
}

// check is Check, also returning |v|² (in float64).
func check(v []float32, dim int, m Metric) (float64, error) {
	if len(v) != dim {
		return 0, &CheckError{ErrDim, fmt.Sprintf("%d, want %d", len(v), dim)}
	}
	var n2 float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return 0, &CheckError{ErrVector, "NaN or infinite element"}
		}
		n2 += float64(x) * float64(x)
	}
	switch {
	case m == Cosine && n2 == 0:
		return 0, &CheckError{ErrVector, "zero vector under the cosine metric"}
	case m != Cosine && n2 > MaxNorm2:
		return 0, &CheckError{ErrVector, fmt.Sprintf("squared length %.3g over %.3g: its distances would overflow float32", n2, float64(MaxNorm2))}
	}
	return n2, nil
}

// normalize writes v scaled to unit length (|v|² is n2, not 0) into out and
// returns it. In float64: the scale of a vector of subnormal elements
// overflows float32, and that of huge ones loses its digits.
func normalize(out, v []float32, n2 float64) []float32 {
	out = append(out[:0], v...)
	inv := 1 / math.Sqrt(n2)
	for i := range out {
		out[i] = float32(float64(out[i]) * inv)
	}
	return out
}

// Query is a query vector, checked once and in the form distances take
// (a copy, normalised under the cosine metric). The graph search and the
// exact distances of the layer above (Dist) both use it, so a vector has
// the same distance whichever path finds it. A Query is not safe for
// concurrent use (Dist keeps a buffer).
type Query struct {
	v      []float32
	n2     float32 // |v|²
	metric Metric
	buf    []float32
}

// NewQuery checks q with Check and prepares it for vectors of dim
// dimensions under metric m.
func NewQuery(q []float32, dim int, m Metric) (*Query, error) {
	n2, err := check(q, dim, m)
	if err != nil {
		return nil, err
	}
	pq, _ := queryPool.Get().(*Query)
	if pq == nil {
		pq = &Query{}
	}
	pq.metric = m
	if m == Cosine {
		pq.v = normalize(pq.v, q, n2)
	} else {
		pq.v = append(pq.v[:0], q...)
	}
	pq.n2 = dot(pq.v, pq.v)
	return pq, nil
}

// queryPool keeps released Queries: a search's query is a few KiB, and a
// search of a small filter takes microseconds.
var queryPool sync.Pool

// Release gives q back for a later NewQuery; q must not be used after.
func (q *Query) Release() { queryPool.Put(q) }

// Dist returns the distance from the query to v, a float32 vector as
// stored (not normalised, of the query's length), by the graph's kernels:
// |q − v|² under L2, 1 − q·v/|v| under cosine (1 for a zero v), 1 − q·v
// under dot.
func (q *Query) Dist(v []float32) float32 {
	switch q.metric {
	case L2:
		return l2(q.v, v)
	case Cosine:
		var n2 float64
		for _, x := range v[:len(q.v)] {
			n2 += float64(x) * float64(x)
		}
		if n2 == 0 {
			return 1
		}
		q.buf = normalize(q.buf, v[:len(q.v)], n2)
		return 1 - dot(q.v, q.buf)
	}
	return 1 - dot(q.v, v)
}
