//go:build !linux

package changelog

// walWatch is not available here: the readers poll.
type walWatch struct{}

func watchWAL(string) *walWatch { return nil }

func (w *walWatch) changed() <-chan struct{} { return nil }

func (w *walWatch) release() {}
