//go:build race

package tests

// raceEnabled is set when the tests run under the race detector, which makes
// SQLite-heavy loops several times slower.
const raceEnabled = true
