package kvstore

import (
	"context"

	"github.com/snkv-go/snkv/internal/layer/bridge"
)

// Hidden tables: where the layers built on the store (timelog, vector)
// keep their data. Their calls are not on kvstore's front door: package
// internal/layer gives them to the layers, and this file hands it
// kvstore's implementations through internal/layer/bridge. A hidden table
// is a key-value table of the same shape as a column family, created
// through the same code path, named "__snkv_" + kind + ":" + name and
// registered in the catalog with its own kind; its handle is an ordinary
// *ColumnFamily.

func init() {
	bridge.Store = bridge.Ops{
		Create: func(t any, kind, name string, sealed bool) (any, error) {
			tx, _ := t.(*Tx)
			if tx == nil {
				return nil, errNilTx
			}
			return anyHandle(handle2(tx.store.reg.CreateHidden(tx.tx, kind, name, sealed)))
		},
		Drop: func(t any, kind, name string) error {
			tx, _ := t.(*Tx)
			if tx == nil {
				return errNilTx
			}
			return tx.store.reg.DropHidden(tx.tx, kind, name)
		},
		Open: func(ctx context.Context, st any, kind, name string) (any, error) {
			s, _ := st.(*Store)
			if err := s.usable(ctx); err != nil {
				return nil, err
			}
			return anyHandle(handle2(s.reg.OpenHidden(ctx, kind, name)))
		},
		List: func(ctx context.Context, st any, kind string) ([]string, error) {
			s, _ := st.(*Store)
			if err := s.usable(ctx); err != nil {
				return nil, err
			}
			return s.reg.ListHidden(ctx, kind)
		},
		Seal: func(ctx context.Context, st any, kind, name string) error {
			s, _ := st.(*Store)
			if s == nil {
				return errNilStore
			}
			return s.sealHiddenTable(ctx, kind, name)
		},
		Engine: func(ctx context.Context, st any) (any, any, error) {
			s, _ := st.(*Store)
			if err := s.usable(ctx); err != nil {
				return nil, nil, err
			}
			return s.db, s.reg.Env().Feeds, nil
		},
		EngineTx: func(t any) (any, error) {
			tx, _ := t.(*Tx)
			if tx == nil {
				return nil, errNilTx
			}
			return tx.tx, nil
		},
		TxStore: func(t any) any {
			tx, _ := t.(*Tx)
			if tx == nil {
				return (*Store)(nil)
			}
			return tx.store
		},
	}
}

// anyHandle returns h as an any that is nil when h is.
func anyHandle(h *ColumnFamily, err error) (any, error) {
	if err != nil || h == nil {
		return nil, err
	}
	return h, nil
}

// ReadOnly reports whether the store was opened read-only (false for a nil
// Store).
func (s *Store) ReadOnly() bool { return s != nil && s.opts.ReadOnly }
