package llm

import (
	"bytes"
	"errors"
	"io"
)

// lineReader splits a byte stream into lines without ever holding more than one line (plus
// one read) in memory. Lines end at "\n"; a trailing "\r" is removed (CRLF). The last line
// may end at EOF without a newline. A line longer than max (when max > 0) is not
// buffered: its bytes are dropped as they arrive and readLine reports it as oversized.
type lineReader struct {
	r       io.Reader
	buf     []byte
	start   int // first unread byte in buf
	end     int // end of valid data in buf
	max     int // longest line kept; <= 0 means unlimited
	eof     bool
	err     error // sticky read error (not io.EOF)
	scanned int   // bytes of buf[start:end] already searched for '\n'
	drop    bool  // discarding the rest of an oversized line
}

const initialLineBuf = 4096

func newLineReader(r io.Reader, max int) *lineReader {
	size := initialLineBuf
	if max > 0 && max+1 < size {
		size = max + 1
	}
	return &lineReader{r: r, buf: make([]byte, size), max: max}
}

// errOversized reports a line longer than the limit (the line itself is gone).
var errOversized = errors.New("llm: line over the size limit")

// readLine returns the next line (without its terminator), valid until the next call.
// It returns errOversized for a line over the limit, io.EOF at the clean end of input,
// and any read error of the underlying reader.
func (l *lineReader) readLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.start+l.scanned:l.end], '\n'); i >= 0 {
			nl := l.start + l.scanned + i
			line := l.buf[l.start:nl]
			l.start = nl + 1
			l.scanned = 0
			if l.drop {
				l.drop = false
				return nil, errOversized
			}
			// The limit counts the line as upstream does (split on "\n", so with any "\r").
			if l.max > 0 && len(line) > l.max {
				return nil, errOversized
			}
			return trimCR(line), nil
		}
		l.scanned = l.end - l.start
		if l.max > 0 && l.end-l.start > l.max {
			// The line under construction is already too long: forget its bytes now.
			l.drop = true
			l.start, l.end, l.scanned = 0, 0, 0
		}
		if l.eof || l.err != nil {
			if l.drop {
				l.drop = false
				l.start, l.end, l.scanned = 0, 0, 0
				return nil, errOversized
			}
			if l.end > l.start {
				line := l.buf[l.start:l.end]
				l.start, l.scanned = l.end, 0
				if l.max > 0 && len(line) > l.max {
					return nil, errOversized
				}
				return trimCR(line), nil
			}
			if l.err != nil {
				return nil, l.err
			}
			return nil, io.EOF
		}
		l.fill()
	}
}

// fill reads more input, first making room by moving unread bytes to the front and, when
// the buffer is full of one line, growing it (bounded by max when set).
func (l *lineReader) fill() {
	if l.start > 0 {
		n := copy(l.buf, l.buf[l.start:l.end])
		l.start, l.end = 0, n
	}
	if l.end == len(l.buf) {
		newSize := 2 * len(l.buf)
		if l.max > 0 && newSize > l.max+2 {
			newSize = l.max + 2
		}
		if newSize <= len(l.buf) {
			newSize = len(l.buf) + 1
		}
		nb := make([]byte, newSize)
		copy(nb, l.buf[:l.end])
		l.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil {
			if err == io.EOF {
				l.eof = true
			} else {
				l.err = err
			}
			return
		}
		if n > 0 {
			return
		}
	}
	l.err = io.ErrNoProgress
}

func trimCR(line []byte) []byte {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		return line[:len(line)-1]
	}
	return line
}
