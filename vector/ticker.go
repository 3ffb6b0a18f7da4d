package vector

import "time"

// ticker is a time.Ticker that never fires for a period of 0.
type ticker struct {
	t *time.Ticker
	C <-chan time.Time
}

func newTicker(d time.Duration) ticker {
	if d <= 0 {
		return ticker{}
	}
	t := time.NewTicker(d)
	return ticker{t: t, C: t.C}
}

func (t ticker) Stop() {
	if t.t != nil {
		t.t.Stop()
	}
}
