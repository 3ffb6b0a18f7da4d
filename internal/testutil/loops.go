package testutil

import "sync"

// Loops runs steps over and over on goroutines of their own (a writer or a
// reader beside what a test checks) until Stop. The zero value is not
// ready: use NewLoops.
type Loops struct {
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewLoops returns a set of loops with none running.
func NewLoops() *Loops { return &Loops{stop: make(chan struct{})} }

// Go starts a goroutine that calls step(0), step(1), … until step returns
// false or Stop is called (Stop does not interrupt a step that runs).
func (l *Loops) Go(step func(i int) bool) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			if !step(i) {
				return
			}
		}
	}()
}

// Stop asks every loop to end after its current step and waits for them.
// It may be called more than once (a deferred Stop after an explicit one).
func (l *Loops) Stop() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}
