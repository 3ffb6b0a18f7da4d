package tests

import (
	"database/sql"

	"github.com/stretchr/testify/require"
)

// queryStrings runs q on raw (database/sql, as another program reads the
// file) and returns the first column of its rows.
func queryStrings(t crashTB, raw *sql.DB, q string) []string {
	t.Helper()
	rows, err := raw.Query(q)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	return out
}
