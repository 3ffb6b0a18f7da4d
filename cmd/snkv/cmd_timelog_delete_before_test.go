package main

import (
	"testing"
)

// TestTimelogDeleteBefore deletes the records before a timestamp and says how many.
func TestTimelogDeleteBefore(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tlw-delete-before", args: "timelog delete-before FILE cpu 1893553450000"},
		{name: "tlw-delete-before-missing", args: "timelog delete-before FILE nope 1", code: 3},
	})
}
