package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// tableWindow is how many rows a table reads ahead to size its columns;
// later rows are written at once with those widths, so a table of any
// length holds at most this many rows in memory.
const tableWindow = 512

// table writes rows aligned in columns, two spaces apart, headers first.
// It streams: the first tableWindow rows set the column widths, and a
// later cell wider than its column only shifts the rest of its own row.
type table struct {
	w      io.Writer
	window [][]string
	widths []int
	fixed  bool
	err    error
}

func (a *app) table(headers ...string) *table {
	t := &table{w: a.out}
	if len(headers) > 0 && !a.noHeader {
		t.row(headers...)
	}
	return t
}

// row adds a row; an error of writing it is kept for flush.
func (t *table) row(cells ...string) {
	if t.fixed {
		t.write(cells)
		return
	}
	t.window = append(t.window, cells)
	if len(t.window) >= tableWindow {
		t.release()
	}
}

// release sizes the columns from the rows held and writes them.
func (t *table) release() {
	for _, r := range t.window {
		for i, c := range r {
			if i == len(t.widths) {
				t.widths = append(t.widths, 0)
			}
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.window {
		t.write(r)
	}
	t.window, t.fixed = nil, true
}

func (t *table) write(cells []string) {
	if t.err != nil {
		return
	}
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i == len(cells)-1 {
			break
		}
		pad := 2
		if i < len(t.widths) {
			pad += t.widths[i] - utf8.RuneCountInString(c)
		}
		for range max(pad, 2) {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
	_, t.err = io.WriteString(t.w, b.String())
}

// flush writes the rows still held and reports a write error.
func (t *table) flush() error {
	if !t.fixed {
		t.release()
	}
	return t.err
}

// emit writes v as one line of JSON.
func (a *app) emit(v any) error {
	enc := json.NewEncoder(a.out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// formatTTL shows the time a key has left, or "permanent", rounded for
// people: to the minute from a day up ("6d23h59m"), to the second from a
// minute up ("2h", "45m10s"), to the millisecond below ("59.971s"). --json
// carries the exact milliseconds.
func formatTTL(d time.Duration, permanent bool) string {
	if permanent {
		return "permanent"
	}
	switch {
	case d >= 24*time.Hour-30*time.Second:
		d = d.Round(time.Minute)
	case d >= time.Minute:
		d = d.Round(time.Second)
	default:
		return d.Round(time.Millisecond).String()
	}
	var b strings.Builder
	if days := d / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dd", days)
		d -= days * 24 * time.Hour
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
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

// progressBytes starts a bar over total bytes of input, with the share
// done, the bytes and the rate.
func (a *app) progressBytes(total int64, desc string) *progress {
	if !a.stderrIsTerminal() {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(a.err),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
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

// stdoutIsTerminal reports whether stdout is a terminal.
func (a *app) stdoutIsTerminal() bool {
	return a.stdout != nil && term.IsTerminal(int(a.stdout.Fd()))
}

// yesNo shows a boolean for people.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// humanSize shows a byte count in binary units with three significant
// digits ("43.9 KiB", "1.05 GiB"); below 1 KiB in bytes.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	unit := ""
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		v /= 1024
		unit = u
		if v < 1024 {
			break
		}
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f %s", v, unit)
	case v < 100:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// withSize shows a byte count exactly, and in binary units when it is
// 1 KiB or more: "45056 (44.0 KiB)".
func withSize(n int64) string {
	if n < 1024 {
		return itoa(n)
	}
	return fmt.Sprintf("%d (%s)", n, humanSize(n))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// irregular are the plurals that are not the word and an s.
var irregular = map[string]string{"column family": "column families", "entry": "entries", "vector index": "vector indexes"}

// plural is the plural of a noun.
func pluralOf(noun string) string {
	if p, ok := irregular[noun]; ok {
		return p
	}
	return noun + "s"
}

// countOf says n of a noun: "1 key", "2 keys", "1 column family".
func countOf[N int | int64](n N, noun string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %s", n, pluralOf(noun))
}
