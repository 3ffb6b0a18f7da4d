package kvstore

import (
	"context"
	"errors"

	"github.com/snkv-go/snkv/internal/family"
)

// CountKeysFile returns CountKeys of every column family of the store at
// path, in ListColumnFamilies order, without its password or key: the
// catalog, the keys and the TTL tables of an encrypted store are kept in
// the clear (only values are sealed), so listing them needs no secret. It
// opens the store read-only with opts (its Encryption and ReadOnly are
// ignored), counts, and closes it; it never writes to the file, and works
// on a store in the clear as well.
//
// Errors: those of Open (ErrNotStore, ErrCorrupt, ErrVersion, ErrCantOpen,
// ...), of CountKeys, and of a nil ctx (ErrInvalidArgument). Cost: Open,
// then CountKeys of each column family (O(n) in the keys, values never
// read).
func CountKeysFile(ctx context.Context, path string, opts Options) ([]KeyCounts, error) {
	if err := family.CheckContext(ctx); err != nil {
		return nil, err
	}
	opts.Encryption, opts.keyless, opts.ReadOnly = nil, true, true
	s, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	names, err := s.ListColumnFamilies()
	var out []KeyCounts
	for _, name := range names {
		if err != nil {
			break
		}
		var kc KeyCounts
		if kc, err = s.CountKeys(ctx, name); err == nil {
			out = append(out, kc)
		}
	}
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return out, s.Close()
}
