package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/snkv-go/snkv/kvstore"
)

// input turns a key, value or bound given as an argument into bytes: "-"
// reads stdin to its end (once per command), anything else is taken as
// text, or decoded with --hex / --base64.
type input struct {
	a         *app
	stdinUsed bool
}

func (a *app) inputs() *input { return &input{a: a} }

// arg decodes the argument s named what (for messages: "KEY", "VALUE").
// From stdin, a value is refused once it is longer than the command's
// limit and a key once it is longer than a key may be, without reading
// the rest.
func (in *input) arg(what, s string) ([]byte, error) {
	if s == "-" {
		if in.stdinUsed {
			return nil, usagef("%s: stdin ('-') can be read only once", what)
		}
		in.stdinUsed = true
		limit := kvstore.MaxKeySize
		if what == "VALUE" {
			limit = in.a.valueLimit()
		}
		b, err := readLimited(in.a.in, limit, what)
		if err != nil && !isUsage(err) {
			return nil, fmt.Errorf("reading %s from stdin: %w", what, err)
		}
		return b, err
	}
	return in.a.decode(what, s)
}

// decode applies the --hex / --base64 input encoding to s.
func (a *app) decode(what, s string) ([]byte, error) {
	switch {
	case a.hexIn:
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, usagef("%s is not valid hex: %v", what, err)
		}
		return b, nil
	case a.base64In:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(s)
		}
		if err != nil {
			return nil, usagef("%s is not valid base64: %v", what, err)
		}
		return b, nil
	}
	return []byte(s), nil
}

// valueFile reads the file named by --value-file ("-": stdin). A file
// larger than the command's value limit is refused before it is read.
func (in *input) valueFile(path string) ([]byte, error) {
	if path == "-" {
		return in.arg("VALUE", "-")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--value-file: %w", err)
	}
	defer f.Close()
	limit := in.a.valueLimit()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > int64(limit) {
		return nil, tooLarge("VALUE", limit)
	}
	b, err := readLimited(f, limit, "VALUE")
	if err != nil && !isUsage(err) {
		return nil, fmt.Errorf("--value-file: %w", err)
	}
	return b, err
}

// escape shows bytes safely on a terminal: printable ASCII as is, a
// backslash as \\, every other byte as \xNN.
func escape(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f:
			sb.WriteByte(c)
		default:
			fmt.Fprintf(&sb, `\x%02x`, c)
		}
	}
	return sb.String()
}

// showText shows bytes to a person: valid UTF-8 that can be shown as it
// is, a backslash as \\, and every byte of anything else (control
// characters, invisible format characters such as bidirectional overrides,
// bytes that are not UTF-8) as \xNN, so that "naïve" reads as itself and
// nothing a terminal would act on reaches it.
func showText(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\\':
			sb.WriteString(`\\`)
		case r == utf8.RuneError && n <= 1, !unicode.IsPrint(r):
			for _, c := range b[:n] {
				fmt.Fprintf(&sb, `\x%02x`, c)
			}
		default:
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

// show renders a key or value for a table or a line of text: showText, or
// with --escape the ASCII-only escape.
func (a *app) show(b []byte) string {
	if a.escapeOut {
		return escape(b)
	}
	return showText(b)
}

// jsonString returns s as a JSON string, without escaping HTML
// characters.
func jsonString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// record is one key in JSON: a line of an export or import, of a scan, or
// the answer of get. A key or value is a string under "key"/"value" or
// standard base64 under "key_base64"/"value_base64" (see textOrBase64). expire_ms is the absolute expiry in
// milliseconds since the Unix epoch, absent for a key without TTL. A record
// without any key field only names a column family (an export writes one
// for each empty column family, so that it survives a round trip).
type record struct {
	CF string `json:"cf"`
	keyValue
	ExpireMs *int64 `json:"expire_ms,omitempty"`
	// TTLMs is the time left in milliseconds, written by scan --with-ttl,
	// get and ttl for people; import ignores it (expire_ms is exact).
	TTLMs *int64 `json:"ttl_ms,omitempty"`
}

// textOrBase64 returns b as a string for a text field when it is valid
// UTF-8 and its JSON string is not longer than its base64 (a value of
// zero bytes is valid UTF-8, but each one is six bytes of "\u0000"), or
// else as base64 for the base64 field. Either way a line is never longer
// than base64 makes it, which is what import's limit on a line counts on.
func textOrBase64(b []byte) (text, b64 *string) {
	if utf8.Valid(b) && jsonEscapedLen(b) <= base64.StdEncoding.EncodedLen(len(b)) {
		s := string(b)
		return &s, nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return nil, &s
}

// jsonEscapedLen is the length of valid UTF-8 b as the inside of a JSON
// string, as encoding/json writes it without HTML escaping: a quote and a
// backslash take two bytes, \n, \r and \t two, the other control
// characters and U+2028, U+2029 six.
func jsonEscapedLen(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		case c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xa8 || b[i+2] == 0xa9):
			n += 6
			i += 2
		default:
			n++
		}
	}
	return n
}

// keyValue is the key and the value of a JSON line (a record, a change,
// a vector's line), each a string under "key"/"value" or standard base64
// under "key_base64"/"value_base64" (see textOrBase64).
type keyValue struct {
	Key      *string `json:"key,omitempty"`
	KeyB64   *string `json:"key_base64,omitempty"`
	Value    *string `json:"value,omitempty"`
	ValueB64 *string `json:"value_base64,omitempty"`
}

// set writes key and value, each as text or base64; a nil one is left out.
func (kv *keyValue) set(key, value []byte) {
	if key != nil {
		kv.Key, kv.KeyB64 = textOrBase64(key)
	}
	if value != nil {
		kv.Value, kv.ValueB64 = textOrBase64(value)
	}
}

// bytes returns the key and the value of a line read back, and whether
// each was there (see field).
func (kv *keyValue) bytes() (key []byte, hasKey bool, value []byte, hasValue bool, err error) {
	if key, hasKey, err = field("key", kv.Key, kv.KeyB64); err != nil {
		return nil, false, nil, false, err
	}
	if value, hasValue, err = field("value", kv.Value, kv.ValueB64); err != nil {
		return nil, false, nil, false, err
	}
	return key, hasKey, value, hasValue, nil
}

// newRecord builds the JSON record of a key (value nil: leave it out).
func newRecord(cf string, key, value []byte) record {
	r := record{CF: cf}
	r.set(key, value)
	return r
}

// field returns the bytes of a text-or-base64 pair of a record read back;
// present reports whether either was there.
func field(name string, text, b64 *string) (b []byte, present bool, err error) {
	switch {
	case text != nil && b64 != nil:
		return nil, true, fmt.Errorf("both %q and %q", name, name+"_base64")
	case text != nil:
		return []byte(*text), true, nil
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, true, fmt.Errorf("%s_base64: %w", name, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}
