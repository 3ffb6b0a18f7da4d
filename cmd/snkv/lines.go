package main

import (
	"bufio"
	"errors"
	"io"
)

// chunk is a piece of the input read ahead: up to readAhead lines, or the
// read's error.
type chunk struct {
	lines [][]byte
	err   error
}

// readAhead is the number of lines handed over at a time.
const readAhead = 256

// readLines reads src line by line into a channel, so that the import can
// stop on Ctrl-C even while it waits for input that does not come.
func readLines(src io.Reader) <-chan chunk {
	ch := make(chan chunk, 4)
	go func() {
		defer close(ch)
		r := bufio.NewReaderSize(src, 1<<16)
		var c chunk
		for {
			b, err := r.ReadBytes('\n')
			if len(b) > 0 {
				c.lines = append(c.lines, b)
			}
			// Hand over a full chunk, or what there is when the input
			// pauses (so a slow writer's lines are not held back).
			if len(c.lines) > 0 && (len(c.lines) == readAhead || err != nil || r.Buffered() == 0) {
				ch <- c
				c = chunk{}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					ch <- chunk{err: err}
				}
				return
			}
		}
	}()
	return ch
}
