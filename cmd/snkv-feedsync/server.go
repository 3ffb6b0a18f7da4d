package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
)

// stateCF is the server's column family that keeps each source's state.
const stateCF = "feedsync"

// maxBody is the largest push the server reads.
const maxBody = 256 << 20

// errConflict is a push the server cannot apply: its position is of another
// history than the server's, or past what the server has applied; the
// device starts again from a snapshot (-resnapshot).
var errConflict = errors.New("conflict")

// ServerOptions configure the server role.
type ServerOptions struct {
	Store  string    // the server's store
	Listen string    // the address it listens on
	Out    io.Writer // progress lines
}

// server applies pushes to its store.
type server struct {
	db  *kvstore.Store
	out io.Writer

	mu  sync.Mutex // guards cfs and out
	cfs map[string]*kvstore.ColumnFamily
}

func runServer(ctx context.Context, opts ServerOptions) error {
	db, err := kvstore.Open(opts.Store, kvstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	states, err := db.ColumnFamilyOrCreate(stateCF)
	if err != nil {
		return err
	}
	s := &server{db: db, out: opts.Out, cfs: map[string]*kvstore.ColumnFamily{stateCF: states}}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /push", s.push)
	mux.HandleFunc("GET /state", s.state)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.logf("server: listening on %s", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// Let the pushes under way finish (each is one transaction: a push cut
	// short is rolled back and sent again), then close what is left, such
	// as a connection that was opened but sent nothing.
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	s.logf("server: stopped")
	return nil
}

func (s *server) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.out, format+"\n", args...)
}

// cf returns the handle of column family name, created if missing.
func (s *server) cf(name string) (*kvstore.ColumnFamily, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cf, ok := s.cfs[name]; ok {
		return cf, nil
	}
	cf, err := s.db.ColumnFamilyOrCreate(name)
	if err != nil {
		return nil, err
	}
	s.cfs[name] = cf
	return cf, nil
}

// push applies one batch and answers with the source's state.
func (s *server) push(w http.ResponseWriter, r *http.Request) {
	var b batch
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&b); err != nil {
		http.Error(w, "bad batch: "+err.Error(), http.StatusBadRequest)
		return
	}
	if b.Source == "" || b.CF == "" || len(b.Epoch) == 0 || b.CF == stateCF {
		http.Error(w, "bad batch: it needs a source, a column family (not "+stateCF+") and an epoch", http.StatusBadRequest)
		return
	}
	st, skipped, err := s.apply(r.Context(), &b)
	switch {
	case errors.Is(err, errConflict):
		http.Error(w, err.Error(), http.StatusConflict)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if b.Snapshot {
		s.logf("server: %s: snapshot of %d rows, at %d", b.Source, len(b.Rows), st.Seq)
	} else {
		s.logf("server: %s: applied %d changes (%d already applied), at %d", b.Source, len(b.Changes)-skipped, skipped, st.Seq)
	}
	writeJSON(w, st)
}

// state answers with the state of the source named by the query's source.
func (s *server) state(w http.ResponseWriter, r *http.Request) {
	var st state
	err := s.db.View(r.Context(), func(tx *kvstore.Tx) error {
		var err error
		st, _, err = s.load(tx, r.URL.Query().Get("source"))
		return err
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, st)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// load reads source's state in tx; ok is false when it has none.
func (s *server) load(tx *kvstore.Tx, source string) (st state, ok bool, err error) {
	states, err := s.cf(stateCF)
	if err != nil {
		return st, false, err
	}
	v, err := tx.CF(states).Get([]byte(source))
	if errors.Is(err, kvstore.ErrNotFound) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	return st, true, json.Unmarshal(v, &st)
}

// apply applies b and the position it reaches in one transaction, skipping
// what was applied already, and returns the source's state after it and how
// many of b's changes it skipped.
func (s *server) apply(ctx context.Context, b *batch) (st state, skipped int, err error) {
	cf, err := s.cf(b.CF)
	if err != nil {
		return st, 0, err
	}
	states, err := s.cf(stateCF)
	if err != nil {
		return st, 0, err
	}
	err = s.db.Update(ctx, func(tx *kvstore.Tx) error {
		var ok bool
		st, ok, err = s.load(tx, b.Source)
		if err != nil {
			return err
		}
		skipped = 0
		same := ok && bytes.Equal(st.Epoch, b.Epoch)
		c := tx.CF(cf)
		if b.Snapshot {
			if same && st.Seq >= b.To {
				return nil // a retried snapshot: the server is there or past it
			}
			if err := clearPrefix(ctx, c, b.Prefix); err != nil {
				return err
			}
			for _, r := range b.Rows {
				if err := c.Put(r.Key, r.Value); err != nil {
					return err
				}
			}
			st = state{Epoch: b.Epoch, Seq: b.To, Since: b.To, Snapshots: st.Snapshots + 1}
		} else {
			switch {
			case !ok:
				return fmt.Errorf("%w: the server has no position for %q: start the device again from a snapshot (-resnapshot)", errConflict, b.Source)
			case !same:
				return fmt.Errorf("%w: the batch is of another history of %q's store than the server applied: start the device again from a snapshot (-resnapshot)", errConflict, b.Source)
			case b.From > st.Seq:
				return fmt.Errorf("%w: the server applied %q up to %d, the batch starts at %d: start the device again from a snapshot (-resnapshot)", errConflict, b.Source, st.Seq, b.From)
			}
			for _, ch := range b.Changes {
				if ch.Seq < st.Seq {
					skipped++
					continue
				}
				if err := applyChange(ctx, c, ch); err != nil {
					return fmt.Errorf("change %d (%s): %w", ch.Seq, ch.Op, err)
				}
				st.Applied++
			}
			st.Seq = max(st.Seq, b.To)
		}
		v, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return tx.CF(states).Put([]byte(b.Source), v)
	})
	return st, skipped, err
}

// clearPrefix deletes every key of c under prefix.
func clearPrefix(ctx context.Context, c *kvstore.ColumnFamily, prefix []byte) error {
	if len(prefix) == 0 {
		return c.Clear()
	}
	_, err := c.DeleteRange(ctx, prefix, iterator.PrefixEnd(prefix))
	return err
}

// applyChange applies one change to c. Applying a change twice leaves what
// applying it once leaves, but the server never does: it skips what its
// position says it applied.
func applyChange(ctx context.Context, c *kvstore.ColumnFamily, ch change) error {
	exp := ch.expiry()
	past := !exp.IsZero() && !exp.After(time.Now())
	var err error
	switch ch.Op {
	case "put":
		switch {
		case past: // expired on the way: its expired event follows
			err = c.Delete(ch.Key)
		case exp.IsZero():
			err = c.Put(ch.Key, ch.Value)
		default:
			err = c.PutExpireAt(ch.Key, ch.Value, exp)
		}
	case "delete", "expired":
		err = c.Delete(ch.Key)
	case "delete_range":
		end := ch.Value
		if ch.HasEnd && end == nil {
			end = []byte{} // an empty range, not one to the end
		}
		_, err = c.DeleteRange(ctx, ch.Key, end)
	case "set_ttl":
		if past {
			err = c.Delete(ch.Key)
		} else {
			err = c.ExpireAt(ch.Key, exp)
		}
	case "clear_ttl":
		err = c.Persist(ch.Key)
	case "drop_cf":
		err = c.Clear()
	case "create_cf":
	default:
		return fmt.Errorf("unknown op %q", ch.Op)
	}
	if errors.Is(err, kvstore.ErrNotFound) {
		return nil // a key the change's source no longer had live
	}
	return err
}
