// Package v1fixture writes stores in snkv's version-1 format, byte for byte
// what the version-1 library wrote (no checksums, single-column expiry
// index), for tests of opening, upgrading and benchmarking such files. It
// is used by tests only.
package v1fixture
