package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// chunk is a piece of the input read ahead: up to readAhead lines, or the
// read's error.
type chunk struct {
	lines [][]byte
	bytes int // the length of the lines
	err   error
}

// readAhead is the number of lines handed over at a time, and
// readAheadBytes the bytes of lines read ahead of the one being applied:
// the reader waits while that much is read and not yet applied.
const (
	readAhead      = 256
	readAheadBytes = 4 << 20
)

// errLineTooLong is the error of a line longer than the reader's bound.
var errLineTooLong = errors.New("line too long")

// lineReader reads its input line by line in a goroutine, so that a
// command can stop on Ctrl-C even while it waits for input that does not
// come. It holds at most readAheadBytes plus one line of input that was
// not yet applied, and no line longer than its bound.
type lineReader struct {
	ch   chan chunk
	quit chan struct{}

	mu       sync.Mutex
	cond     *sync.Cond
	inflight int // bytes handed over and not yet released
	stopped  bool
}

// readLines starts reading src; a line longer than maxLine bytes (its
// line ending not counted) ends the input with an error wrapping
// errLineTooLong. Give each chunk back with release once applied, and call
// stop when done.
func readLines(src io.Reader, maxLine int) *lineReader {
	lr := &lineReader{ch: make(chan chunk, 4), quit: make(chan struct{})}
	lr.cond = sync.NewCond(&lr.mu)
	go lr.run(bufio.NewReaderSize(src, 1<<16), maxLine)
	return lr
}

// next waits for the next chunk of lines: ok is false at the end of the
// input, and err is ctx's error when ctx ends first (Ctrl-C).
func (lr *lineReader) next(ctx context.Context) (c chunk, ok bool, err error) {
	select {
	case <-ctx.Done():
		return chunk{}, false, ctx.Err()
	case c, ok = <-lr.ch:
		return c, ok, nil
	}
}

// release says that the lines of c were applied.
func (lr *lineReader) release(c chunk) {
	lr.mu.Lock()
	lr.inflight -= c.bytes
	lr.mu.Unlock()
	lr.cond.Signal()
}

// stop ends the reading goroutine (once it returns from a read it is in).
func (lr *lineReader) stop() {
	lr.mu.Lock()
	if !lr.stopped {
		lr.stopped = true
		close(lr.quit)
	}
	lr.mu.Unlock()
	lr.cond.Signal()
}

// send hands c over; false when the reader was stopped.
func (lr *lineReader) send(c chunk) bool {
	lr.mu.Lock()
	lr.inflight += c.bytes
	lr.mu.Unlock()
	select {
	case lr.ch <- c:
		return true
	case <-lr.quit:
		return false
	}
}

// wait blocks while readAheadBytes are in flight; false when stopped.
func (lr *lineReader) wait() bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for lr.inflight >= readAheadBytes && !lr.stopped {
		lr.cond.Wait()
	}
	return !lr.stopped
}

func (lr *lineReader) run(r *bufio.Reader, maxLine int) {
	defer close(lr.ch)
	var c chunk
	for {
		if !lr.wait() {
			return
		}
		b, err := readLine(r, maxLine)
		if len(b) > 0 {
			c.lines = append(c.lines, b)
			c.bytes += len(b)
		}
		// Hand over a full chunk, or what there is when the input pauses
		// (so a slow writer's lines are not held back).
		if len(c.lines) > 0 && (len(c.lines) == readAhead || c.bytes >= readAheadBytes/4 || err != nil || r.Buffered() == 0) {
			if !lr.send(c) {
				return
			}
			c = chunk{}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				lr.send(chunk{err: err})
			}
			return
		}
	}
}

// readLine reads one line, its line ending included, refusing it once it
// is longer than maxLine bytes without its ending. A long line is kept in
// the reader's fragments until it is complete, then copied once: it never
// holds more than the bound and the buffer of the reader when it refuses,
// and twice the line when it takes one.
func readLine(r *bufio.Reader, maxLine int) ([]byte, error) {
	var frags [][]byte
	n := 0
	for {
		frag, err := r.ReadSlice('\n')
		if n+len(frag) > maxLine+2 {
			return nil, fmt.Errorf("%w: longer than %d bytes", errLineTooLong, maxLine)
		}
		n += len(frag)
		if !errors.Is(err, bufio.ErrBufferFull) {
			end := lineEnding(frag)
			if end == 1 && len(frag) == 1 && len(frags) > 0 && bytes.HasSuffix(frags[len(frags)-1], []byte("\r")) {
				end = 2 // "\r\n" split by the reader's buffer
			}
			if n-end > maxLine {
				return nil, fmt.Errorf("%w: longer than %d bytes", errLineTooLong, maxLine)
			}
			if frags == nil {
				return append([]byte(nil), frag...), err
			}
			line := make([]byte, 0, n)
			for _, f := range frags {
				line = append(line, f...)
			}
			return append(line, frag...), err
		}
		frags = append(frags, append([]byte(nil), frag...))
	}
}

// lineEnding is the length of the line ending ("\n" or "\r\n") that ends
// b, if any.
func lineEnding(b []byte) int {
	switch {
	case len(b) >= 2 && b[len(b)-2] == '\r' && b[len(b)-1] == '\n':
		return 2
	case len(b) >= 1 && b[len(b)-1] == '\n':
		return 1
	}
	return 0
}
