package timelog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// The store's integrity check runs checkStore on every store with logs,
// as it runs vector's on every store with indexes (docs/architecture.md,
// "Writing a layer").
func init() {
	layer.Register(kind, layer.Layer{Check: checkStore})
}

// checkStore returns one line per problem in the logs of store: a log
// that lacks one of its tables (ForceDrop removes what is left), or whose
// stored state fails Log.IntegrityCheck. It opens each log read-only, so
// it runs beside a writer.
func checkStore(ctx context.Context, store *kvstore.Store) ([]string, error) {
	names, err := layer.ListHiddenTables(ctx, store, kind)
	if err != nil {
		return nil, err
	}
	logs := map[string]map[string]bool{}
	for _, n := range names {
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			continue
		}
		if logs[n[:i]] == nil {
			logs[n[:i]] = map[string]bool{}
		}
		logs[n[:i]][n[i:]] = true
	}
	bases := make([]string, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	var out []string
	for _, b := range bases {
		var missing []string
		for _, suf := range []string{suffixMeta, suffixPages, suffixTombs} {
			if !logs[b][suf] {
				missing = append(missing, layer.HiddenTableName(kind, b+suf))
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("timelog %q: missing table %s (timelog.ForceDrop removes the rest)", b, strings.Join(missing, ", ")))
			continue
		}
		p, err := checkLog(ctx, store, b)
		if err != nil {
			return out, err
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// checkLog opens the log name read-only and returns its problem, "" for
// none. A values table in a layout that a writable Open converts is not a
// problem.
func checkLog(ctx context.Context, store *kvstore.Store, name string) (string, error) {
	l, err := Open(ctx, store, name, Options{ReadOnly: true, Maintenance: Manual})
	if errors.Is(err, ErrValuesLayout) {
		return "", nil
	}
	if err == nil {
		err = l.IntegrityCheck(ctx)
		if cerr := l.Close(); err == nil && cerr != nil {
			return "", cerr
		}
	}
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, ErrCorrupt):
		return err.Error(), nil
	}
	return "", err
}
