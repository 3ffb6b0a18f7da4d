package vector

import (
	"errors"

	"github.com/snkv-go/snkv/kvstore"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// closedError is ErrClosed: the index's own message, matching
// kvstore.ErrClosed with errors.Is (docs/architecture.md, "Writing a
// layer": a layer's error for one of the store's conditions matches the
// store's sentinel).
type closedError struct{}

func (closedError) Error() string { return "vector: index closed" }

// Is reports whether target is kvstore.ErrClosed.
func (closedError) Is(target error) bool { return target == kvstore.ErrClosed }
