package testfile

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCSV(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(p, []byte("x,y\n1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, col := CSV(t, p)
	if len(recs) != 2 || col["y"] != 1 || recs[1][col["x"]] != "3" {
		t.Errorf("%v %v", recs, col)
	}
}

func TestGunzip(t *testing.T) {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte("hello"))
	z.Close()
	p := filepath.Join(t.TempDir(), "a.gz")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Gunzip(t, p); !slices.Equal(got, []byte("hello")) {
		t.Errorf("%q", got)
	}
}
