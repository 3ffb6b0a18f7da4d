package kvstore

// OnRollback registers f to run if the transaction does not commit: an
// explicit Rollback, an error or panic in the function given to Update or
// View, or a commit that fails. Hooks run in registration order, before
// the transaction's connection goes back to the pool, so they must be
// quick and must not use the store. A nil f is ignored, and so is an f
// registered once the transaction has ended. With OnCommit, exactly one
// of the two sets of hooks runs for every transaction: a layer
// keeping per-transaction state (package vector gathers a transaction's
// changes and links them into its graph once, at commit) frees it in both.
// A hook that panics stops neither the other hooks nor the transaction's
// end (its connection goes back to the pool): its panic goes on from the
// call that ended the transaction (Rollback, Commit, Update, View) once
// they ran.
func (tx *Tx) OnRollback(f func()) {
	if tx != nil && f != nil {
		tx.tx.OnRollback(f)
	}
}
