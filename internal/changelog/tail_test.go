package changelog

import "testing"

// A notify with nobody waiting, or many in a row, never blocks.
func TestNotifyNeverBlocks(t *testing.T) {
	var n Notifier
	for range 1000 {
		n.Notify()
	}
	ch := n.Changed()
	n.Notify()
	select {
	case <-ch:
	default:
		t.Fatal("Changed was not closed by Notify")
	}
}
