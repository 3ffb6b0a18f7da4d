package main

import (
	"strings"
)

// A listing of keys and values is an aligned table for people or, with
// --format tsv, tab-separated lines for scripts: one line a row, each key
// or value escaped as export's TSV escapes it (\\, \t, \n, \r, \xNN), text
// cells (a TTL, a count) as they are, and no header.

// cell is one column of a row: the bytes of a key or a value, or text.
type cell struct {
	b     []byte
	text  string
	bytes bool
}

// bin is a cell of a key's or a value's bytes.
func bin(b []byte) cell { return cell{b: b, bytes: true} }

// txt is a cell of text.
func txt(s string) cell { return cell{text: s} }

// rowWriter writes the rows of a listing, as a table or as TSV.
type rowWriter struct {
	a    *app
	t    *table
	tsv  bool
	line []byte
	err  error
}

// rows starts a listing with the columns headers (a table's first row,
// unless --no-header).
func (a *app) rows(tsv bool, headers ...string) *rowWriter {
	w := &rowWriter{a: a, tsv: tsv}
	if !tsv {
		w.t = a.table(headers...)
	}
	return w
}

// row writes one row; the error of writing it is kept for flush, and
// returned.
func (w *rowWriter) row(cells ...cell) error {
	if w.err != nil {
		return w.err
	}
	if !w.tsv {
		out := make([]string, len(cells))
		for i, c := range cells {
			if c.bytes {
				out[i] = w.a.showCell(c.b, i == len(cells)-1)
			} else {
				out[i] = c.text
			}
		}
		w.t.row(out...)
		w.err = w.t.err
		return w.err
	}
	b := w.line[:0]
	for i, c := range cells {
		if i > 0 {
			b = append(b, '\t')
		}
		if c.bytes {
			b = appendTSVField(b, c.b)
		} else {
			b = append(b, c.text...)
		}
	}
	b = append(b, '\n')
	w.line = b
	_, w.err = w.a.out.Write(b)
	return w.err
}

// flush writes what a table holds and reports an error of writing.
func (w *rowWriter) flush() error {
	if w.t != nil {
		if err := w.t.flush(); w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// showCell shows a key or a value in a table cell: as text (show) and,
// in any column but the last, where the next column starts after two
// spaces, in double quotes when it holds a space, starts with a quote or
// is empty, so that it cannot be taken for two cells, none, or a quoted
// cell for the text inside; a quote inside is \". The last column runs to
// the end of the line and needs none.
func (a *app) showCell(b []byte, last bool) string {
	s := a.show(b)
	if last || !(strings.Contains(s, " ") || strings.HasPrefix(s, `"`) || s == "") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// listFormat reads --format of a listing: table (false) or tsv, which
// --json excludes.
func (a *app) listFormat(s string) (tsv bool, err error) {
	switch s {
	case "table", "":
		return false, nil
	case "tsv":
		if a.json {
			return false, usagef("--format tsv and --json exclude each other")
		}
		return true, nil
	}
	return false, usagef("bad --format %q: want table or tsv", s)
}
