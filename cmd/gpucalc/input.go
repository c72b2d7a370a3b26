package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/gpucalc/gpucalc/escape"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/rows"
)

// The factory's helpers for inputs named on the command line: a file or
// standard input, gzip told by its first bytes and bounded as it streams
// (rows.Decompress), read whole or parsed as it is read.

// Open opens an input named on the command line: a file, or - for standard
// input, gzip-compressed or not (told by its first bytes; what it expands
// to is bounded by rows.Decompress). It returns the name to use in
// messages. A file that cannot be opened is a failure (exit 1) with a
// one-line message.
func (f *factory) Open(name string) (io.ReadCloser, string, error) { return f.open(name, false) }

// openWatched is Open for an input read whole before any output (an
// export, a trace): once reading has taken a second, how much was read is
// shown on stderr.
func (f *factory) openWatched(name string) (io.ReadCloser, string, error) { return f.open(name, true) }

func (f *factory) open(name string, watch bool) (io.ReadCloser, string, error) {
	rc, name, size, err := f.openFile(name)
	if err != nil {
		return nil, "", err
	}
	var in io.Reader = rc
	done := func() {}
	if watch {
		var read func(int64)
		read, done = f.readProgress("reading "+escape.Terminal(name), size)
		in = progressReader{rc, read}
	}
	r, _, err := rows.Decompress(in)
	if err != nil {
		rc.Close()
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return readCloser{r, rc, done}, name, nil
}

// openFile opens a file, or standard input for -, and returns the name to
// use in messages and the size (0 for standard input).
func (f *factory) openFile(name string) (io.ReadCloser, string, int64, error) {
	var rc io.ReadCloser
	var size int64
	switch name {
	case "-":
		rc, name = io.NopCloser(f.In), "standard input"
	case "":
		return nil, "", 0, usagef("no input named: give a file, or - for standard input")
	default:
		fh, err := os.Open(name)
		if err != nil {
			return nil, "", 0, openError(name, err)
		}
		st, err := fh.Stat()
		if err == nil && st.IsDir() {
			fh.Close()
			return nil, "", 0, fmt.Errorf("%s is a directory: give a file, or - for standard input", name)
		}
		if err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		rc = fh
	}
	return rc, name, size, nil
}

// readCloser reads from one reader and closes the file under it, ending
// the progress line.
type readCloser struct {
	io.Reader
	c    io.Closer
	done func()
}

func (r readCloser) Close() error {
	r.done()
	return r.c.Close()
}

// openError says why a file cannot be opened, without Go's wording.
func openError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file; check the path, or give - to read standard input", name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", name)
	}
	return fmt.Errorf("cannot open %s: %w", name, errors.Unwrap(err))
}

// ReadAll reads a whole input (see Open), refusing more than max bytes
// (the reader's limit: devices.MaxFileBytes, model.MaxConfigBytes).
func (f *factory) ReadAll(name string, max int64) ([]byte, string, error) {
	r, shown, err := f.Open(name)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", shown, err)
	}
	if int64(len(data)) > max {
		return nil, "", fmt.Errorf("%s: larger than %s; is it the right file?", shown, rows.Size(max))
	}
	return data, shown, nil
}

// ReadWorkload reads and parses a workload file, or standard input for -
// (at most ops.MaxWorkloadBytes).
func (f *factory) ReadWorkload(name string) (ops.Workload, error) {
	r, shown, err := f.Open(name)
	if err != nil {
		return ops.Workload{}, err
	}
	defer r.Close()
	return ops.ReadWorkload(shown, r)
}

// parseInput opens an input named on the command line (f.openWatched:
// progress past a second) and parses it; a parse error starts with the
// input's name, which is returned for later messages. What parse returns
// comes back with its error: a batch keeps the rows before a break in its
// input.
func parseInput[T any](f *factory, name string, parse func(io.Reader) (T, error)) (T, string, error) {
	var v T
	r, shown, err := f.openWatched(name)
	if err != nil {
		return v, "", err
	}
	defer r.Close()
	if v, err = parse(r); err != nil {
		return v, shown, fmt.Errorf("%s: %w", shown, err)
	}
	return v, shown, nil
}
