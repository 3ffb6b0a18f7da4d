package main

import (
	"time"

	"github.com/snkv-go/snkv/changefeed"
)

// batch is the JSON body of one push: the changes of the device's feed from
// position From (Epoch, From) up to position To, or a snapshot of the
// column family under Prefix that the changes from To follow.
type batch struct {
	Source   string   `json:"source"` // the device's consumer name
	CF       string   `json:"cf"`
	Prefix   []byte   `json:"prefix,omitempty"`
	Epoch    []byte   `json:"epoch"`
	From     int64    `json:"from"` // the position the device read from
	To       int64    `json:"to"`   // the position after the batch
	Snapshot bool     `json:"snapshot,omitempty"`
	Rows     []row    `json:"rows,omitempty"` // a snapshot's rows
	Changes  []change `json:"changes,omitempty"`
}

// row is one row of a snapshot.
type row struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// change is one change of the feed, as pushed.
type change struct {
	Seq      int64  `json:"seq"`
	Tx       int64  `json:"tx"`
	Op       string `json:"op"`
	Key      []byte `json:"key,omitempty"`
	Value    []byte `json:"value,omitempty"`
	ExpireMs int64  `json:"expire_ms,omitempty"`
	// HasEnd tells a delete_range with an empty end (an empty range) from
	// one with no end (to the end of the column family): JSON drops both.
	HasEnd bool `json:"has_end,omitempty"`
}

func newChange(c changefeed.Change) change {
	ch := change{Seq: c.Seq, Tx: c.Tx, Op: c.Op.String(), Key: c.Key, Value: c.Value}
	if c.Op == changefeed.OpDeleteRange && c.Value != nil {
		ch.HasEnd = true
	}
	if !c.Expiry.IsZero() {
		ch.ExpireMs = c.Expiry.UnixMilli()
	}
	return ch
}

// expiry is the change's deadline, zero if it has none.
func (c change) expiry() time.Time {
	if c.ExpireMs == 0 {
		return time.Time{}
	}
	return time.UnixMilli(c.ExpireMs)
}

// state is what the server keeps for a source, and answers a push with: the
// position it has applied the source's feed to, in the source's history
// Epoch; Applied counts the changes applied since the snapshot or first
// push at Since, each once; Snapshots counts the snapshots applied.
type state struct {
	Epoch     []byte `json:"epoch"`
	Seq       int64  `json:"seq"`
	Since     int64  `json:"since"`
	Applied   int64  `json:"applied"`
	Snapshots int64  `json:"snapshots"`
}
