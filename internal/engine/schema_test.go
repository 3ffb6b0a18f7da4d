package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A statement naming a missing table, compiled while another connection
// keeps changing the schema, fails as "no such table" (which NoSuchTable
// recognises) or not at all: SQLite's SQLITE_SCHEMA ("database schema has
// changed") never reaches the caller, and a statement on a table that
// exists always runs.
func TestSchemaChangesAreRetried(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := testDB(t, path)
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "PRAGMA journal_mode = WAL; CREATE TABLE kept (k)"))
	})
	other := testDB(t, path)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			_ = other.WithWriter(ctx, func(o *Conn) error {
				return o.ExecScript(ctx, fmt.Sprintf("CREATE TABLE churn%d (k); DROP TABLE churn%d", i%4, i%4))
			})
		}
	}()
	deadline := time.Now().Add(time.Second)
	runs := 0
	for ; time.Now().Before(deadline); runs++ {
		err := db.WithReader(ctx, func(c *Conn) error {
			if _, err := c.Exec(ctx, "SELECT 1 FROM kept LIMIT 0"); err != nil {
				return fmt.Errorf("existing table: %w", err)
			}
			_, err := c.Exec(ctx, "SELECT 1 FROM missing LIMIT 0")
			if !NoSuchTable(err) || Code(err) == codeSchema {
				return fmt.Errorf("missing table: want SQLITE_ERROR no such table, got %v", err)
			}
			return nil
		})
		if err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("after %d runs: %v", runs, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	require.Positive(t, runs)
}
