package columnfamily

// SetAloneHook has fn run by a lone Put or Delete (outside a transaction)
// between its check of the column family's feed and its write, and returns
// what puts the previous hook back.
func SetAloneHook(fn func()) (restore func()) {
	old := aloneHook
	aloneHook = fn
	return func() { aloneHook = old }
}
