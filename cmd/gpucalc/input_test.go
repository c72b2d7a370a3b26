package main

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// TestInputBombs: every command that reads a file takes gzip through
// rows.Decompress, so a small gzip that expands to gigabytes is refused as
// it streams, with exit 1 and one line, whichever command reads it.
func TestInputBombs(t *testing.T) {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	blank := make([]byte, 1<<20)
	for i := range blank {
		blank[i] = ' '
	}
	w.Write([]byte(`{"traceEvents":[`))
	for range 64 {
		w.Write(blank)
	}
	w.Close()
	for _, args := range [][]string{
		{"trace", "-"}, {"ncu", "-"}, {"occupancy", "from-build", "-"}, {"roofline", "batch", "--input", "-"},
		{"occupancy", "batch", "--input", "-"}, {"model", "batch", "--input", "-"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, bytes.NewReader(z.Bytes()), &out, &errOut, func(string) string { return "" })
		msg := strings.TrimSpace(errOut.String())
		if code != exitFailure || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, "compression bomb") && !strings.Contains(msg, "longer than 1 MiB") {
			t.Errorf("%s: exit %d, %q", strings.Join(args, " "), code, msg)
		}
	}
}
