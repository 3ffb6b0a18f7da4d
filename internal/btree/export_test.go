package btree

// Exported for the tests of package btree_test.
var (
	VarintLen    = varintLen
	AppendVarint = appendVarint
)

// ParseRow is parseRow, for the tests of package btree_test.
var ParseRow = parseRow
