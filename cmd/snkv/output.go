package main

import (
	"encoding/json"
	"fmt"

	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// table writes rows aligned in columns, two spaces apart, headers first.
type table struct {
	tw *tabwriter.Writer
}

func (a *app) table(headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *table) row(cells ...string) {
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// emit writes v as one line of JSON.
func (a *app) emit(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// formatTTL shows the time a key has left, or "permanent".
func formatTTL(d time.Duration, permanent bool) string {
	if permanent {
		return "permanent"
	}
	return d.String()
}

// formatExpiry shows an absolute expiry in UTC, to the millisecond.
func formatExpiry(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// progress shows a bar with counts and rate on stderr while long work runs,
// only when stderr is a terminal; otherwise every method does nothing.
type progress struct {
	bar *progressbar.ProgressBar
}

// stderrIsTerminal reports whether the process's stderr is a terminal.
// The bar is drawn on the real stderr, never on a redirected stream.
func (a *app) stderrIsTerminal() bool {
	f, ok := a.err.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress starts a bar for total units (total < 0: a spinner without a
// known end) described by desc, counting unit ("keys").
func (a *app) progress(total int64, desc, unit string) *progress {
	if !a.stderrIsTerminal() {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(a.err),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
	)}
}

// add advances the bar by n units.
func (p *progress) add(n int) {
	if p.bar != nil {
		_ = p.bar.Add(n)
	}
}

// done clears the bar.
func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
