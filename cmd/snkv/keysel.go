package main

import (
	"bytes"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// keyRange holds the flags that select keys: --prefix, --start, --end and
// --match (scan, count and export share them).
type keyRange struct {
	prefix, start, end, match string
}

// add declares the flags on c.
func (r *keyRange) add(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&r.prefix, "prefix", "", "only keys starting with `PREFIX`")
	f.StringVar(&r.start, "start", "", "first `KEY` of the range (inclusive)")
	f.StringVar(&r.end, "end", "", "end `KEY` of the range (exclusive)")
	f.StringVar(&r.match, "match", "", "only keys matching the glob `PATTERN` (* ? [a-z] [^a] \\x)")
}

// keySel is a decoded keyRange: the iteration bounds, and the pattern
// every key must match (nil: all).
type keySel struct {
	opts    kvstore.IterOptions
	pattern []byte
}

// any reports whether the selection narrows the keys at all.
func (s keySel) any() bool {
	return s.opts.Prefix != nil || s.opts.Start != nil || s.opts.End != nil || s.pattern != nil
}

// keeps reports whether key passes the pattern.
func (s keySel) keeps(key []byte) bool { return s.pattern == nil || matchGlob(s.pattern, key) }

// selection decodes the flags given on cmd (bounds with --hex/--base64
// like keys; the pattern is always text). The pattern's literal start
// narrows the scan when it extends the prefix.
func (a *app) selection(cmd *cobra.Command, r keyRange) (keySel, error) {
	var sel keySel
	for _, b := range []struct {
		flag, val string
		dst       *[]byte
	}{{"--prefix", r.prefix, &sel.opts.Prefix}, {"--start", r.start, &sel.opts.Start}, {"--end", r.end, &sel.opts.End}} {
		if !cmd.Flags().Changed(b.flag[2:]) {
			continue
		}
		v, err := a.decode(b.flag, b.val)
		if err != nil {
			return sel, err
		}
		*b.dst = v
		if v == nil {
			*b.dst = []byte{}
		}
	}
	if sel.opts.Start != nil && sel.opts.End != nil && bytes.Compare(sel.opts.Start, sel.opts.End) > 0 {
		// As timelog range does: a reversed range is a mistake, not an
		// empty answer.
		return sel, usagef("--start %q is after --end %q", showText(sel.opts.Start), showText(sel.opts.End))
	}
	if len(sel.opts.Prefix) == 0 {
		sel.opts.Prefix = nil
	}
	if cmd.Flags().Changed("match") {
		sel.pattern = []byte(r.match)
		if lit := globPrefix(sel.pattern); len(lit) > len(sel.opts.Prefix) && bytes.HasPrefix(lit, sel.opts.Prefix) {
			sel.opts.Prefix = lit
		}
	}
	return sel, nil
}
