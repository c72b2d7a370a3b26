package rows

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// gz compresses n bytes of the repeated pattern p.
func gz(t testing.TB, p string, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	chunk := []byte(strings.Repeat(p, 64<<10/len(p)+1))[:64<<10]
	for left := n; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecompressBombs: inputs that expand far past their size are refused
// while they stream, after at most a little more than ratioFrom bytes.
func TestDecompressBombs(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		n       int
	}{
		{"zeros", "\x00", 48 << 20},
		{"whitespace", " ", 48 << 20},
		{"newlines", "\n", 48 << 20},
		{"a JSON event repeated", `{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1},`, 48 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := gz(t, tt.pattern, tt.n)
			r, zipped, err := Decompress(bytes.NewReader(data))
			if err != nil || !zipped {
				t.Fatalf("Decompress: %v, gzip %v", err, zipped)
			}
			n, err := io.Copy(io.Discard, r)
			if !errors.Is(err, ErrBomb) {
				t.Fatalf("read %d bytes, error %v; want ErrBomb", n, err)
			}
			if n > ratioFrom+1<<20 {
				t.Errorf("read %d bytes before refusing, want about %d", n, ratioFrom)
			}
		})
	}
}

// TestDecompressLimits: a plain input passes untouched; a gzip input that
// compresses as real files do is read whole, up to the absolute cap.
func TestDecompressLimits(t *testing.T) {
	r, zipped, err := Decompress(strings.NewReader("a,b\n1,2\n"))
	if err != nil || zipped {
		t.Fatalf("plain input: %v, gzip %v", err, zipped)
	}
	if b, _ := io.ReadAll(r); string(b) != "a,b\n1,2\n" {
		t.Fatalf("plain input read as %q", b)
	}
	if _, _, err := Decompress(bytes.NewReader([]byte{0x1f, 0x8b, 0})); err == nil {
		t.Fatal("a broken gzip header was accepted")
	}

	// Random-looking text: 20 MiB, well under the ratio.
	var plain bytes.Buffer
	x := uint32(1)
	for plain.Len() < 20<<20 {
		x = x*1664525 + 1013904223
		plain.WriteString("kernel_")
		plain.WriteByte(byte('a' + x>>27))
		plain.WriteString(strings.Repeat("0123456789", int(x>>29)))
		plain.WriteByte('\n')
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(plain.Bytes())
	w.Close()
	r, _, err = Decompress(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, r)
	if err != nil || n != int64(plain.Len()) {
		t.Fatalf("read %d of %d bytes: %v (ratio %.0f)", n, plain.Len(), err, float64(plain.Len())/float64(b.Len()))
	}

	// The absolute cap, made small.
	r, _, _ = Decompress(bytes.NewReader(b.Bytes()))
	r.(*inflater).max = 1 << 20
	n, err = io.Copy(io.Discard, r)
	var se *SizeError
	if !errors.As(err, &se) || n > 1<<20 {
		t.Fatalf("read %d bytes past a 1 MiB cap: %v", n, err)
	}
}

func TestLimit(t *testing.T) {
	for _, tt := range []struct {
		in  int
		max int64
		ok  bool
	}{{10, 10, true}, {11, 10, false}, {0, 0, true}, {1 << 20, 1000, false}} {
		n, err := io.Copy(io.Discard, Limit(strings.NewReader(strings.Repeat("x", tt.in)), tt.max))
		var se *SizeError
		if tt.ok != (err == nil) || !tt.ok && (!errors.As(err, &se) || se.Limit != tt.max || n > tt.max) {
			t.Errorf("%d bytes under a limit of %d: read %d, %v", tt.in, tt.max, n, err)
		}
	}
	if got := (&SizeError{64 << 20}).Error(); got != "larger than 64 MiB" {
		t.Errorf("message %q", got)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 10: "64 KiB", 16 << 20: "16 MiB", 8 << 30: "8 GiB", 3<<30 + 1: "3072 MiB", 100: "100 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzDecompress: whatever the bytes, Decompress reads within its bounds
// and never panics.
func FuzzDecompress(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"))
	f.Add(gz(f, "a,b\n", 1<<10))
	f.Add(gz(f, " ", 1<<16))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _, err := Decompress(bytes.NewReader(b))
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, r)
		if n > MaxDecompressed || n > ratioFrom && n > MaxRatio*int64(len(b)) {
			t.Fatalf("%d bytes read %d", len(b), n)
		}
	})
}

func TestBlocks(t *testing.T) {
	var b Blocks[int]
	if b.All() != nil || b.Len() != 0 {
		t.Fatal("empty Blocks not empty")
	}
	for i := range 10000 {
		b.Add(i)
	}
	all := b.All()
	if b.Len() != 10000 || len(all) != 10000 || cap(all) != 10000 {
		t.Fatalf("%d kept, %d returned (cap %d)", b.Len(), len(all), cap(all))
	}
	for i, v := range all {
		if v != i {
			t.Fatalf("record %d is %d", i, v)
		}
	}
	if each := slices.Collect(b.Each); !slices.Equal(each, all) || b.Len() != 10000 {
		t.Fatalf("Each: %d records, %d kept after", len(each), b.Len())
	}
	n := 0
	for p := range b.Pointers {
		if *p != n || b.At(n) != p {
			t.Fatalf("Pointers: record %d is %d, At gives %d", n, *p, *b.At(n))
		}
		*p = -n
		n++
	}
	if n != 10000 || *b.At(9999) != -9999 || *b.At(4096) != -4096 {
		t.Fatalf("Pointers: %d records, or writes through them lost", n)
	}
}

// TestBlocksAppend: blocks appended whole, of any length, among records
// added one at a time keep their order, and At finds each record; Reset
// empties the blocks and reuses them.
func TestBlocksAppend(t *testing.T) {
	var b Blocks[int]
	var want []int
	next := 0
	add := func(n int) {
		for range n {
			b.Add(next)
			want = append(want, next)
			next++
		}
	}
	appendWhole := func(n int) {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = next
			want = append(want, next)
			next++
		}
		b.Append(xs)
	}
	for round := range 2 {
		add(10)
		appendWhole(1)
		appendWhole(5000)
		add(4096)
		appendWhole(4096)
		for range 300 {
			appendWhole(3)
		}
		appendWhole(0)
		add(9000)
		appendWhole(12000)
		add(1)
		if b.Len() != len(want) {
			t.Fatalf("round %d: %d kept, want %d", round, b.Len(), len(want))
		}
		if all := b.All(); !slices.Equal(all, want) {
			t.Fatalf("round %d: All is not the records in order", round)
		}
		for i, v := range want {
			if *b.At(i) != v {
				t.Fatalf("round %d: At(%d) = %d, want %d", round, i, *b.At(i), v)
			}
		}
		b.Reset()
		want, next = want[:0], 0
		if b.Len() != 0 || b.All() != nil {
			t.Fatalf("Reset left %d records", b.Len())
		}
	}
	add(5000) // into the blocks Reset kept
	for i := range 5000 {
		if *b.At(i) != i {
			t.Fatalf("after Reset: At(%d) = %d", i, *b.At(i))
		}
	}
}
