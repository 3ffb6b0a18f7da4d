package main

import (
	"strconv"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// change is the JSON line of one change of the feed.
type change struct {
	Seq  int64  `json:"seq"`
	Tx   int64  `json:"tx"`
	AtMs int64  `json:"at_ms"`
	CF   string `json:"cf"`
	Op   string `json:"op"`
	keyValue
	ExpireMs *int64 `json:"expire_ms,omitempty"`
}

func newChange(c changefeed.Change) change {
	ch := change{Seq: c.Seq, Tx: c.Tx, AtMs: c.At.UnixMilli(), CF: c.CF, Op: c.Op.String()}
	ch.set(c.Key, c.Value)
	if !c.Expiry.IsZero() {
		ms := c.Expiry.UnixMilli()
		ch.ExpireMs = &ms
	}
	return ch
}

func (a *app) watchCommand() *cobra.Command {
	var from, prefix string
	var once bool
	c := &cobra.Command{
		Use:   "watch FILE",
		Short: "Print the change feed as JSON lines, and follow it until Ctrl-C (read-only)",
		Long: `Print the changes of the column families whose feed is on (turned on with
the library's changefeed.Enable), one JSON object a line: seq, tx, at_ms,
cf, op (put, delete, delete_range, set_ttl, clear_ttl, expired, create_cf,
drop_cf), key, value (when the feed keeps values; a range delete's end) and
expire_ms. A key or value that is not UTF-8 text is in key_base64 or
value_base64. --cf keeps one column family, --prefix the keys that start
with it (both leave out the creation and drop events unless --prefix is
empty). --from is a sequence, "start" (the oldest change held, the default)
or "now" (only what commits from now on). It then waits for new commits,
from this process or any other, until Ctrl-C, which ends it with exit code
0; --once stops at the end of what is committed instead. A sequence older
than the history kept fails and names the oldest sequence held.`,
		Example: `  snkv watch app.db
  snkv watch app.db --cf users --prefix user: --from now
  snkv watch app.db --from 1200 --once`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var pos changefeed.Position
			switch from {
			case "start", "":
			case "now":
			default:
				n, err := strconv.ParseInt(from, 10, 64)
				if err != nil || n < 1 {
					return usagef("--from must be a sequence (1 or more), start or now, not %q", from)
				}
				pos.Seq = n
			}
			var f changefeed.Filter
			if cfChanged(cmd) {
				f.CF = a.cf
			}
			if prefix != "" {
				p, err := a.decode("--prefix", prefix)
				if err != nil {
					return err
				}
				f.Prefix = p
			}
			ctx := cmd.Context()
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				if f.CF != "" {
					cf, err := db.OpenColumnFamily(f.CF)
					if err == nil {
						f.CF = cf.Name()
					}
				}
				if from == "now" {
					var err error
					if pos, err = changefeed.Now(ctx, db); err != nil {
						return err
					}
				}
				r, err := changefeed.NewReader(ctx, db, pos, changefeed.ReaderOptions{Filter: f})
				if err != nil {
					return err
				}
				defer r.Close()
				for {
					chs, err := r.Read(ctx)
					if err != nil {
						return err
					}
					for _, c := range chs {
						if err := a.emit(newChange(c)); err != nil {
							return err
						}
					}
					if err := a.flushOut(); err != nil {
						return err
					}
					if len(chs) > 0 {
						continue
					}
					if once {
						return nil
					}
					c, err := r.Next(ctx)
					if err != nil {
						if ctx.Err() != nil {
							return nil // Ctrl-C
						}
						return err
					}
					if err := a.emit(newChange(c)); err != nil {
						return err
					}
				}
			})
		},
	}
	c.Flags().StringVar(&from, "from", "start", "where to start: a `SEQ`uence, start or now")
	c.Flags().StringVar(&prefix, "prefix", "", "only keys that start with `PREFIX` (decoded as --hex/--base64 say)")
	c.Flags().BoolVar(&once, "once", false, "stop at the end of what is committed instead of following")
	return c
}
