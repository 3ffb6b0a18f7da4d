package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// DeviceOptions configure the device role.
type DeviceOptions struct {
	Store      string    // the device's store
	Push       string    // the server's push URL
	CF         string    // the column family pushed
	Prefix     []byte    // only its keys with this prefix
	Name       string    // the consumer's name, and the source's on the server
	Resnapshot bool      // start again from a snapshot
	Batch      int       // the most changes in one push
	Out        io.Writer // progress lines
}

// errStartAgain is an error after which the device starts again only from
// a snapshot: its position is trimmed from the feed, of another history, or
// refused by the server.
var errStartAgain = errors.New("run the device again with -resnapshot to send a snapshot and continue from it")

// errRefused is a push the server refused as malformed (a client error
// other than a conflict): the device stops rather than retry it.
var errRefused = errors.New("refused")

// device pushes a store's feed.
type device struct {
	opts   DeviceOptions
	db     *kvstore.Store
	client *http.Client
}

func runDevice(ctx context.Context, opts DeviceOptions) error {
	db, err := kvstore.Open(opts.Store, kvstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	d := &device{opts: opts, db: db, client: &http.Client{Timeout: time.Minute}}
	err = d.run(ctx)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintln(opts.Out, "device: stopped")
		return nil
	}
	return err
}

func (d *device) run(ctx context.Context) error {
	cf, err := d.db.ColumnFamilyOrCreate(d.opts.CF)
	if err != nil {
		return err
	}
	d.opts.CF = cf.Name()
	// The feed must be on before the snapshot, so that no change falls
	// between the two; it keeps values so the server needs no read back.
	feeds, err := changefeed.Feeds(ctx, d.db)
	if err != nil {
		return err
	}
	if _, on := feeds[d.opts.CF]; !on {
		if err := changefeed.Enable(ctx, d.db, d.opts.CF, changefeed.Options{KeepValues: !d.db.Encrypted()}); err != nil {
			return err
		}
	}
	from, err := changefeed.Load(ctx, d.db, d.opts.Name)
	switch {
	case errors.Is(err, changefeed.ErrNotFound) || d.opts.Resnapshot:
		if from, err = d.snapshot(ctx); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	fmt.Fprintf(d.opts.Out, "device: pushing %s from %d\n", d.opts.CF, from.Seq)
	r, err := changefeed.NewReader(ctx, d.db, from, changefeed.ReaderOptions{
		Filter: changefeed.Filter{CF: d.opts.CF, Prefix: d.opts.Prefix},
		Batch:  d.opts.Batch,
	})
	if err != nil {
		return d.explain(err, from)
	}
	defer r.Close()
	for {
		first, err := r.Next(ctx) // waits for a commit
		if err != nil {
			return d.explain(err, from)
		}
		rest, err := r.Read(ctx) // and takes what else is there
		if err != nil {
			return d.explain(err, from)
		}
		to := r.Position()
		b := d.batch(from, to)
		b.Changes = append(b.Changes, newChange(first))
		for _, c := range rest {
			b.Changes = append(b.Changes, newChange(c))
		}
		if err := d.fillValues(ctx, b); err != nil {
			return err
		}
		if from, err = d.send(ctx, b); err != nil {
			return err
		}
	}
}

// batch returns an empty push from position from to position to.
func (d *device) batch(from, to changefeed.Position) *batch {
	return &batch{Source: d.opts.Name, CF: d.opts.CF, Prefix: d.opts.Prefix, Epoch: to.Epoch, From: from.Seq, To: to.Seq}
}

// snapshot pushes the column family's rows under the prefix and returns
// the position the changes after them start from.
func (d *device) snapshot(ctx context.Context) (changefeed.Position, error) {
	var rows []row
	pos, err := changefeed.Snapshot(ctx, d.db, d.opts.CF, d.opts.Prefix, func(k, v []byte) error {
		rows = append(rows, row{Key: bytes.Clone(k), Value: bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return pos, err
	}
	b := d.batch(pos, pos)
	b.Snapshot, b.Rows = true, rows
	fmt.Fprintf(d.opts.Out, "device: snapshot of %d rows at %d\n", len(rows), pos.Seq)
	return d.send(ctx, b)
}

// fillValues reads the current value of each put of a feed that keeps no
// values (an encrypted store's): the server then converges on the current
// value, and a later delete of the key is in the feed after it.
func (d *device) fillValues(ctx context.Context, b *batch) error {
	cf, err := d.db.OpenColumnFamily(d.opts.CF)
	if err != nil {
		return err
	}
	for i, c := range b.Changes {
		if c.Op != "put" || c.Value != nil {
			continue
		}
		v, err := cf.Get(c.Key)
		if errors.Is(err, kvstore.ErrNotFound) {
			b.Changes[i].Op = "delete"
			continue
		}
		if err != nil {
			return err
		}
		b.Changes[i].Value = v
	}
	return ctx.Err()
}

// send pushes b until the server answers, waiting longer after each failed
// attempt (up to 5 s), then saves the position the server reached as the
// consumer's and returns it.
func (d *device) send(ctx context.Context, b *batch) (changefeed.Position, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return changefeed.Position{}, err
	}
	wait := 50 * time.Millisecond
	for {
		st, err := d.post(ctx, body)
		if err == nil {
			pos := changefeed.Position{Epoch: st.Epoch, Seq: st.Seq}
			// The server has applied the push: its position is saved even
			// when the device is being stopped.
			if err := d.db.Update(context.WithoutCancel(ctx), func(tx *kvstore.Tx) error {
				return changefeed.Commit(tx, d.opts.Name, pos)
			}); err != nil {
				return pos, err
			}
			fmt.Fprintf(d.opts.Out, "device: pushed %d changes, server at %d\n", len(b.Changes), st.Seq)
			return pos, nil
		}
		if errors.Is(err, errStartAgain) || errors.Is(err, errRefused) || ctx.Err() != nil {
			return changefeed.Position{}, err
		}
		fmt.Fprintf(d.opts.Out, "device: push failed, again in %v: %v\n", wait, err)
		select {
		case <-ctx.Done():
			return changefeed.Position{}, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// post sends one push and decodes the server's answer.
func (d *device) post(ctx context.Context, body []byte) (state, error) {
	var st state
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.opts.Push, bytes.NewReader(body))
	if err != nil {
		return st, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusConflict:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return st, fmt.Errorf("the server refused the push: %s: %w", bytes.TrimSpace(msg), errStartAgain)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		// a push the server cannot read: sending it again changes nothing
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return st, fmt.Errorf("the server refused the push: %s: %s: %w", resp.Status, bytes.TrimSpace(msg), errRefused)
	case resp.StatusCode != http.StatusOK:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return st, fmt.Errorf("the server answered %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// explain wraps the feed's errors after which the device starts again from
// a snapshot with a message that says so.
func (d *device) explain(err error, from changefeed.Position) error {
	var ce *changefeed.CompactedError
	switch {
	case errors.As(err, &ce):
		return fmt.Errorf("the feed no longer holds position %d (the oldest change held is %d): %w: %w", from.Seq, ce.Oldest, err, errStartAgain)
	case errors.Is(err, changefeed.ErrEpoch):
		return fmt.Errorf("the saved position is of another history of the store (restored or reset): %w: %w", err, errStartAgain)
	}
	return err
}
