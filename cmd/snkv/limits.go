package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
)

// The limits on a value: the library's default (Options.MaxValueSize 0)
// and the most a store accepts (SQLite's limit on a blob, less room for
// the row around it). TestValueLimitsMatchLibrary holds them to the
// library's.
const (
	defaultMaxValueSize = 10 << 20
	hardMaxValueSize    = 1_000_000_000 - kvstore.MaxKeySize - 1024
)

// sizeFlag is --max-value-size: a size in bytes, or with a KiB, MiB or GiB
// suffix, from 1 byte to hardMaxValueSize.
type sizeFlag struct{ n *int }

func (f sizeFlag) String() string {
	if f.n == nil || *f.n == 0 {
		return ""
	}
	return strconv.Itoa(*f.n)
}

func (f sizeFlag) Set(s string) error {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = t, u.mult
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 || v > hardMaxValueSize/mult {
		return fmt.Errorf("%q is not a size from 1 to %d bytes (such as 67108864, 64MiB or 512KiB)", s, hardMaxValueSize)
	}
	*f.n = int(v * mult)
	return nil
}

func (f sizeFlag) Type() string { return "SIZE" }

// flagSize writes n bytes as --max-value-size takes it, rounded up to
// whole MiB from 1 MiB up: "30MiB".
func flagSize(n int) string {
	if n < 1<<20 {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%dMiB", (n+1<<20-1)>>20)
}

// valueLimit is the largest value the command takes: --max-value-size, or
// the library's default.
func (a *app) valueLimit() int {
	if a.maxValue > 0 {
		return a.maxValue
	}
	return defaultMaxValueSize
}

// tooLarge is the usage error of a value (or key) given in more than limit
// bytes; for a value it says how to raise the limit.
func tooLarge(what string, limit int) error {
	msg := fmt.Sprintf("%s too large: more than %d bytes", strings.ToLower(what), limit)
	if what == "VALUE" {
		msg += " (the largest value; --max-value-size raises the limit, to at most " + strconv.Itoa(hardMaxValueSize) + " bytes)"
	}
	return usageError{fmt.Errorf("%s", msg)}
}

// readLimited reads r to its end, refusing it as soon as it has more than
// limit bytes. It reads into pieces of up to 1 MiB and joins them once at
// the end: it holds at most the limit and a piece when it refuses, and
// twice the input when it takes it (a buffer that doubles would hold up
// to three times the limit, with the garbage of its earlier sizes).
func readLimited(r io.Reader, limit int, what string) ([]byte, error) {
	var pieces [][]byte
	n, size := 0, 64<<10
	for {
		p := make([]byte, min(size, limit+1-n))
		m, err := io.ReadFull(r, p)
		p = p[:m]
		n += m
		if m > 0 {
			pieces = append(pieces, p)
		}
		if n > limit {
			return nil, tooLarge(what, limit)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, 1<<20)
	}
	if len(pieces) == 1 {
		return pieces[0], nil
	}
	return bytes.Join(pieces, nil), nil
}

// jsonLineMax is the longest line of JSON Lines import reads with value
// limit: the length export gives a record of the longest key and a value
// of limit bytes, both in base64 (a string is never longer: see
// textOrBase64), plus room for the column family's name and the other
// fields. A longer line is refused before it is read whole.
func jsonLineMax(limit int) int {
	enc := base64.StdEncoding
	return enc.EncodedLen(limit) + enc.EncodedLen(kvstore.MaxKeySize) + 4096
}

// tsvLineMax is jsonLineMax for the TSV format, where a byte takes up to
// four (\xNN).
func tsvLineMax(limit int) int {
	return 4*(limit+kvstore.MaxKeySize) + 64
}
