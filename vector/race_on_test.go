//go:build race

package vector_test

const raceEnabled = true
