package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzPageBytes overwrites bytes of a small store's pages with fuzzed
// ones (patch at offset, both chosen by the fuzzer; a negative-looking cut
// shortens the file) and reads the result: no panic, no hang, and no read
// returns a changed value without an error (see classifyDamage). make fuzz
// runs it; plain go test runs the seeds.
func FuzzPageBytes(f *testing.F) {
	data, model := buildDamageStore(f, 8)
	f.Add(uint32(100), []byte{0xFF}, uint16(0))
	f.Add(uint32(len(data)-1), []byte{0x00}, uint16(1))
	f.Add(uint32(600), []byte("damage"), uint16(0))
	f.Add(uint32(2*512+9), []byte{0x12, 0x34}, uint16(0))
	f.Add(uint32(len(data)/2), bytes.Repeat([]byte{0}, 64), uint16(512))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, off uint32, patch []byte, cut uint16) {
		bad := bytes.Clone(data)
		o := int(off) % len(bad)
		copy(bad[o:], patch)
		if n := int(cut) % len(bad); n > 0 {
			bad = bad[:len(bad)-n]
		}
		path := filepath.Join(dir, "fuzz.db")
		_ = os.Remove(path + "-journal")
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := classifyDamage(path, model); err != nil {
			t.Fatalf("patch %x at %d, cut %d: %v", patch, o, cut, err)
		}
	})
}
