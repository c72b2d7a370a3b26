package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// newFactory builds the factory over the process's streams and decides
// what only the edge can know: how wide the terminal is.
func newFactory(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *factory {
	return &factory{In: stdin, Out: stdout, ErrOut: stderr, Getenv: getenv, width: terminalWidth(stdout, getenv)}
}

// terminalWidth is the width of the terminal that w writes to: $COLUMNS
// when set to a number (what a user or a shell says), else what the
// terminal reports. 0 when w is not a terminal, so that pipes and files
// keep full tables whatever COLUMNS says.
func terminalWidth(w io.Writer, getenv func(string) string) int {
	fh, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(fh.Fd())) {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if n, _, err := term.GetSize(int(fh.Fd())); err == nil && n > 0 {
		return n
	}
	return 0
}

// tableWidth is the width tables must fit: 0 (no limit) with --wide.
func (f *factory) tableWidth() int {
	if f.wide {
		return 0
	}
	return f.width
}
