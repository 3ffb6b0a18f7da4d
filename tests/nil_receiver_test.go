package tests

import (
	"iter"
	"reflect"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// nilReceivers are the handle types of the API whose every exported method
// must be safe on a nil receiver, with the error a failing call returns: a
// nil *Cursor behaves as a closed one.
var nilReceivers = []struct {
	typ     reflect.Type
	wantErr error
}{
	{reflect.TypeFor[*kvstore.Store](), kvstore.ErrInvalidArgument},
	{reflect.TypeFor[*kvstore.Tx](), kvstore.ErrInvalidArgument},
	{reflect.TypeFor[*kvstore.ColumnFamily](), kvstore.ErrInvalidArgument},
	{reflect.TypeFor[*kvstore.Cursor](), kvstore.ErrClosedCursor},
}

// notZero are the methods whose result on a nil receiver is documented
// and not the zero value.
var notZero = map[string]string{
	"String": "columnfamily()", // *Store, *Tx, *ColumnFamily: "columnfamily(<name>)" of no name
}

var errorType = reflect.TypeFor[error]()

// Every exported method of *Store, *Tx, *ColumnFamily and *Cursor, called
// by reflection on a nil receiver with zero arguments, returns the type's
// error (an iteration yields it once) or zero values, and never panics:
// the methods found by reflection include those added after this test was
// written.
func TestNilReceivers(t *testing.T) {
	for _, r := range nilReceivers {
		require.Positive(t, r.typ.NumMethod())
		for i := range r.typ.NumMethod() {
			m := r.typ.Method(i)
			t.Run(r.typ.Elem().Name()+"."+m.Name, func(t *testing.T) {
				in := []reflect.Value{reflect.Zero(r.typ)}
				for j := 1; j < m.Type.NumIn(); j++ {
					if m.Type.IsVariadic() && j == m.Type.NumIn()-1 {
						break // no variadic arguments
					}
					in = append(in, reflect.Zero(m.Type.In(j)))
				}
				var out []reflect.Value
				require.NotPanics(t, func() { out = m.Func.Call(in) }, "a call on a nil receiver")
				for k, v := range out {
					typ := m.Type.Out(k)
					switch {
					case typ == errorType:
						err, _ := v.Interface().(error)
						require.ErrorIs(t, err, r.wantErr)
					case typ == reflect.TypeFor[iter.Seq2[kvstore.Entry, error]]():
						var errs []error
						require.NotPanics(t, func() {
							for e, err := range v.Interface().(iter.Seq2[kvstore.Entry, error]) {
								require.Nil(t, e.Key, "an entry from a nil receiver")
								errs = append(errs, err)
							}
						})
						require.Len(t, errs, 1, "the iteration yields the error once")
						require.ErrorIs(t, errs[0], r.wantErr)
					case typ == reflect.TypeFor[*kvstore.ColumnFamily]() && !v.IsNil():
						// Tx.CF: a handle whose every call fails.
						h := v.Interface().(*kvstore.ColumnFamily)
						require.ErrorIs(t, h.Put([]byte("k"), nil), kvstore.ErrInvalidArgument)
					case notZero[m.Name] != "":
						require.Equal(t, notZero[m.Name], v.Interface())
					default:
						require.True(t, v.IsZero(), "result %d (%v) is %v, not the zero value", k, typ, v)
					}
				}
			})
		}
	}
}
