package main

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The tab-separated format (export and import --format tsv) holds one key
// of one column family a line: KEY, TAB, VALUE, and for a key with a TTL a
// TAB and its absolute expiry in milliseconds since the Unix epoch. KEY and
// VALUE are text with escapes: \\ for a backslash, \t, \n, \r, and \xNN for
// any other control character or byte that is not UTF-8.

// appendTSV appends the line of one key to b.
func appendTSV(b, key, value []byte, expireMs *int64) []byte {
	b = appendTSVField(b, key)
	b = append(b, '\t')
	b = appendTSVField(b, value)
	if expireMs != nil {
		b = append(b, '\t')
		b = strconv.AppendInt(b, *expireMs, 10)
	}
	return append(b, '\n')
}

func appendTSVField(b, s []byte) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		switch {
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == utf8.RuneError && n <= 1, unicode.IsControl(r):
			for _, c := range s[:n] {
				b = append(b, fmt.Sprintf(`\x%02x`, c)...)
			}
		default:
			b = append(b, s[:n]...)
		}
		s = s[n:]
	}
	return b
}

// parseTSV reads one line (without its newline) back.
func parseTSV(line []byte) (key, value []byte, expireMs *int64, err error) {
	fields := bytes.Split(line, []byte{'\t'})
	if len(fields) < 2 || len(fields) > 3 {
		return nil, nil, nil, fmt.Errorf("want KEY<tab>VALUE or KEY<tab>VALUE<tab>EXPIRE_MS, got %s", countOf(len(fields), "field"))
	}
	if key, err = unescapeTSV(fields[0]); err != nil {
		return nil, nil, nil, fmt.Errorf("KEY: %w", err)
	}
	if value, err = unescapeTSV(fields[1]); err != nil {
		return nil, nil, nil, fmt.Errorf("VALUE: %w", err)
	}
	if len(fields) == 3 {
		ms, err := strconv.ParseInt(string(fields[2]), 10, 64)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("EXPIRE_MS %q is not an integer", fields[2])
		}
		expireMs = &ms
	}
	return key, value, expireMs, nil
}

// unescapeTSV decodes the escapes of a field.
func unescapeTSV(s []byte) ([]byte, error) {
	if bytes.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf("a backslash at the end")
		}
		i++
		switch s[i] {
		case '\\':
			out = append(out, '\\')
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf(`\x without two hex digits`)
			}
			v, err := strconv.ParseUint(string(s[i+1:i+3]), 16, 8)
			if err != nil {
				return nil, fmt.Errorf(`\x%s is not a hex byte`, s[i+1:i+3])
			}
			out = append(out, byte(v))
			i += 2
		default:
			return nil, fmt.Errorf(`unknown escape \%c`, s[i])
		}
	}
	return out, nil
}
