package main

import (
	"bytes"
	"compress/gzip"
	"os"
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

// TestInputSizes: files parsed whole are capped at the reader's limit, far
// below what their parsers would need memory for (a YAML parser holds tens
// of times its input): a 60 MB device file took 4 GB.
func TestInputSizes(t *testing.T) {
	dir := t.TempDir()
	big := dir + "/big"
	if err := os.WriteFile(big, bytes.Repeat([]byte("- {a: 1, b: [1, 2, 3]}\n"), 200_000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"devices", "--device-file", big}, {"model", big}} {
		var out, errOut bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
		if msg := errOut.String(); code != exitFailure || !strings.Contains(msg, "larger than") {
			t.Errorf("%s: exit %d, %q", strings.Join(args, " "), code, msg)
		}
	}
}
