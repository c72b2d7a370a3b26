// Package testfile reads the measurement files tests compare against
// (CSV tables and gzip-compressed traces in a package's testdata), failing
// the test when a file cannot be read. Only tests import it.
package testfile

import (
	"compress/gzip"
	"encoding/csv"
	"io"
	"os"
	"testing"
)

// CSV reads a CSV file whole: its records after the header, and each
// column's index by name.
func CSV(t testing.TB, path string) (recs [][]string, col map[string]int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(all) == 0 {
		t.Fatalf("%s: no header", path)
	}
	col = map[string]int{}
	for i, h := range all[0] {
		col[h] = i
	}
	return all[1:], col
}

// Gunzip reads a gzip-compressed file whole.
func Gunzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
